"""One modal window at a time for imports: their progress dialogs and the imports themselves.

A window-modal progress dialog and an application-modal message box of the same window each
block the other: the window froze and had to be killed. So an import's progress dialog shows
(after a short delay, so that a quick read shows none) only while no other modal window is
open, waiting until it has closed; and imports take turns (`ImportTurns`): one asked for while
another runs (a second file dropped, `assistant import` handed over) starts after it, once its
last message box has been answered.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QProgressDialog, QWidget

SHOW_AFTER_MS = 200
_NEVER_MS = 2**31 - 1  # Qt's own delayed showing is off: `_reveal` decides


class ModalProgress(QObject):
    """A cancellable progress dialog that never opens over, or under, another modal window."""

    def __init__(
        self, parent: QWidget, text: str, name: str, on_cancel: Callable[[], None]
    ) -> None:
        super().__init__(parent)
        dialog = QProgressDialog(text, "Cancel", 0, 0, parent)
        dialog.setObjectName(name)
        dialog.setWindowTitle("Import")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(_NEVER_MS)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.canceled.connect(on_cancel)
        dialog.setValue(0)
        self.dialog = dialog
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._reveal)
        self._timer.start(SHOW_AFTER_MS)

    def set_progress(self, done: int, total: int) -> None:
        """Show `done` of `total`."""
        self.dialog.setMaximum(max(total, 1))
        self.dialog.setValue(done)

    def _reveal(self) -> None:
        other = QApplication.activeModalWidget()
        if other is not None and other is not self.dialog:
            self._timer.start(SHOW_AFTER_MS)  # after that one has closed
            return
        self.dialog.show()

    def close(self) -> None:
        """Close the dialog for good, at once (before any message box of the import opens)."""
        self._timer.stop()
        self.dialog.blockSignals(True)  # closing it emits canceled
        self.dialog.close()
        self.dialog.setParent(None)  # gone from the window now, not at the next turn of the loop
        self.dialog.deleteLater()
        self.deleteLater()


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
