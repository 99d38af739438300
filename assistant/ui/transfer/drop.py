"""Dropping an export (a .zip, a .json or an export folder) anywhere on a window imports it.

The filter sits on the window's QWindow, which the platform hands every drag of the window to
before Qt passes it on to the widget under the pointer: a drop on the chat input or the
conversation list imports the file instead of pasting its path. Not on the application: a
filter there is Python code run for every event of every widget (each widget painted takes the
GIL, and waits for it while a worker thread runs Python; that was most of the GUI thread's
longest stall while the curator ran after a turn).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QWidget

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
        window.winId()  # its QWindow, made now rather than when first shown
        handle = window.windowHandle()
        assert handle is not None  # a window (no parent) has one once it has an id
        handle.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() not in _DRAG_EVENTS or not self._window.isEnabled():
            return False
        assert isinstance(event, QDragEnterEvent | QDragMoveEvent | QDropEvent)
        path = dropped_export(event.mimeData())
        if path is None:
            return False
        event.acceptProposedAction()
        if isinstance(event, QDropEvent) and event.type() == QEvent.Type.Drop:
            self._on_drop(path)
        return True
