"""Key presses that mean something across the app's dialogs."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent


def is_ctrl_enter(event: QEvent) -> bool:
    """Whether `event` is a press of Ctrl+Enter (either Enter key): "save" in a text box where
    Enter alone is a new line. Text boxes take it before any shortcut could, so dialogs catch
    it with an event filter on its way there."""
    return (
        isinstance(event, QKeyEvent)
        and event.type() == QEvent.Type.KeyPress
        and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        and bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
    )
