"""Imports take turns: one asked for while another runs (a second file dropped, `assistant
import` handed over) starts after it, once its last message box has been answered, so that its
dialogs never open beside the other's (a window-modal progress dialog and a message box of the
same window each block the other: the window froze and had to be killed).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget


class ImportTurns(QObject):
    """The imports of a window, one at a time: the others wait for their turn."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("importTurns")
        self._running = False
        self._waiting: list[Callable[[], None]] = []

    @classmethod
    def of(cls, widget: QWidget) -> ImportTurns:
        """The turns of `widget`'s window."""
        window = widget.window()
        turns = window.findChild(ImportTurns, "importTurns")
        return turns if turns is not None else cls(window)

    def take(self, start: Callable[[], None]) -> None:
        """Run `start` now if no import runs, else once those before it have ended."""
        if self._running:
            self._waiting.append(start)
            return
        self._running = True
        start()

    def done(self) -> None:
        """The running import has ended (its last message box answered): the next one starts."""
        if self._waiting:
            QTimer.singleShot(0, self._waiting.pop(0))
        else:
            self._running = False
