"""Create the QApplication and the main window."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from assistant import APP_NAME, __version__
from assistant.resources import app_icon_files
from assistant.ui.main_window import MainWindow
from assistant.workspace import Workspace


def _application() -> QApplication:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    app = QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("assistant")
    app.setWindowIcon(app_icon())
    return app


def app_icon() -> QIcon:
    """The application icon at every size it was rendered at (null if the files are missing)."""
    icon = QIcon()
    for path in app_icon_files():
        icon.addFile(str(path))
    return icon


def run_app(root: Path) -> int:
    """Show the main window on `root` and run the event loop until it closes."""
    app = _application()
    window = MainWindow(Workspace.open(root))
    window.show()
    return app.exec()


def build_for_self_test(root: Path) -> float:
    """Build and show the window, let it paint, close it; return when it was shown."""
    app = _application()
    window = MainWindow(Workspace.open(root))
    window.show()
    app.processEvents()
    shown = time.perf_counter()
    window.close()
    app.processEvents()
    return shown
