"""Create the QApplication and the main window."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

from assistant import APP_NAME, __version__
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
    return app


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
