"""The Help menu's dialogs: about the app, and the keyboard shortcuts."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from assistant import APP_NAME, __version__


def show_about(parent: QWidget, data_dir: Path | None) -> None:
    """The app's name, version, what it is, and where its data is (once it is open)."""
    QMessageBox.about(
        parent,
        f"About {APP_NAME}",
        f"<b>{APP_NAME} {__version__}</b><p>A desktop personal assistant that remembers.</p>"
        + (f"<p>Your data: {data_dir}</p>" if data_dir is not None else ""),
    )


def show_shortcuts(parent: QWidget, rows: Iterable[tuple[str, str]]) -> None:
    """A table of (what, keys)."""
    table = "".join(
        f"<tr><td>{what}</td><td>&nbsp;&nbsp;<b>{keys}</b></td></tr>" for what, keys in rows
    )
    box = QMessageBox(parent)
    box.setObjectName("shortcutsDialog")
    box.setWindowTitle("Keyboard Shortcuts")
    box.setText(f"<table>{table}</table>")
    box.exec()
