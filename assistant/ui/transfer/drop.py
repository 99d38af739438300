"""Dropping an export (a .zip, a .json or an export folder) anywhere on a window imports it.

An application-wide event filter, so that a drop on the chat input or the conversation list
imports the file instead of pasting its path. It only looks at drag and drop events.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget

IMPORTABLE_SUFFIXES = (".zip", ".json")
_DRAG_EVENTS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop)


def dropped_export(mime: QMimeData) -> Path | None:
    """The one local export file or folder being dragged, or None."""
    urls = mime.urls() if mime.hasUrls() else []
    if len(urls) != 1 or not urls[0].isLocalFile():
        return None
    path = Path(urls[0].toLocalFile())
    if path.is_dir() or path.suffix.lower() in IMPORTABLE_SUFFIXES:
        return path
    return None


class ImportDropFilter(QObject):
    """Takes drops of an export on `window` (or any widget in it) and passes the path on."""

    def __init__(self, window: QWidget, on_drop: Callable[[Path], None]) -> None:
        super().__init__(window)
        self._window = window
        self._on_drop = on_drop
        window.setAcceptDrops(True)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() not in _DRAG_EVENTS or not isinstance(watched, QWidget):
            return False
        if watched.window() is not self._window or not self._window.isEnabled():
            return False
        assert isinstance(event, QDragEnterEvent | QDragMoveEvent | QDropEvent)
        path = dropped_export(event.mimeData())
        if path is None:
            return False
        event.acceptProposedAction()
        if isinstance(event, QDropEvent) and event.type() == QEvent.Type.Drop:
            self._on_drop(path)
        return True
