"""An import's progress and result as the user sees them: a progress dialog that says what is
being done in numbers ("Conversations 120 of 1,204"), can be cancelled and is gone before any
message shows; then a summary that stays until it is read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QProgressDialog, QWidget

from assistant.sizes import KB
from assistant.ui.wording import number

PROGRESS_DELAY_MS = 200  # an import shorter than this shows no progress at all
_NEVER_MS = 2**31 - 1


@dataclass(frozen=True)
class Phases:
    """How the import's one count splits: memories first, then conversations, then the
    suggested memories chosen (see `apply_import`)."""

    memories: int
    conversations: int
    suggestions: int

    def describe(self, done: int) -> str:
        """What `done` of the whole means, in the user's words."""
        if done < self.memories or (done == self.memories and not self.conversations):
            return f"Memories {number(done)} of {number(self.memories)}"
        done -= self.memories
        if done <= self.conversations and (done < self.conversations or not self.suggestions):
            memories = f" (memories: {number(self.memories)} done)" if self.memories else ""
            return f"Conversations {number(done)} of {number(self.conversations)}{memories}"
        done -= self.conversations
        return f"Suggested memories {number(done)} of {number(self.suggestions)}"


class ImportProgress:
    """The progress dialog of one step of an import (reading, or importing)."""

    def __init__(
        self, parent: QWidget, title: str, name: str, on_cancel: Callable[[], None]
    ) -> None:
        self._title = title
        self._describe: Callable[[int, int], str] = _reading
        dialog = QProgressDialog(title, "Cancel", 0, 0, parent)
        dialog.setObjectName(name)
        dialog.setWindowTitle("Import")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        # Shown by `_reveal`, not by Qt's own delay: only while no other modal window is open
        # (a message box and this window-modal dialog would each block the other).
        dialog.setMinimumDuration(_NEVER_MS)
        dialog.setMinimumWidth(420)  # the numbers change width: the dialog does not
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.canceled.connect(on_cancel)
        dialog.setValue(0)
        self.dialog: QProgressDialog | None = dialog
        self._timer = QTimer(dialog)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._reveal)
        self._timer.start(PROGRESS_DELAY_MS)

    def _reveal(self) -> None:
        dialog = self.dialog
        if dialog is None:
            return
        other = QApplication.activeModalWidget()
        if other is not None and other is not dialog:
            self._timer.start(PROGRESS_DELAY_MS)  # after that one has closed
            return
        dialog.show()

    def count_phases(self, phases: Phases) -> None:
        """Say the importing step's numbers by phase (memories, conversations, suggestions)."""
        self._describe = lambda done, _total: phases.describe(done)
        self.update(0, phases.memories + phases.conversations + phases.suggestions)

    def update(self, done: int, total: int) -> None:
        """`done` of `total` (reading: kB of the files)."""
        dialog = self.dialog
        if dialog is None:
            return
        dialog.setMaximum(max(total, 1))
        dialog.setValue(min(done, max(total, 1)))
        dialog.setLabelText(f"{self._title}\n{self._describe(done, total)}")

    def close(self) -> None:
        """Close it for good: what follows (a question, a message) is never under it."""
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            self._timer.stop()
            dialog.blockSignals(True)  # closing it emits canceled
            dialog.cancel()  # stops its timer: it never shows up later
            dialog.close()
            dialog.deleteLater()


def _reading(done: int, total: int) -> str:
    if total <= 0:
        return "Starting…"
    if total < KB:  # in kB
        return f"{number(done)} of {number(total)} kB"
    return f"{done / KB:,.1f} of {total / KB:,.1f} MB"


def show_result(parent: QWidget, title: str, summary: str, details: str = "") -> QMessageBox:
    """The result of an import in a box of its own that stays until closed (not modal: the
    window stays usable); `details` (names of what could not be read) on demand."""
    box = QMessageBox(QMessageBox.Icon.Information, title, summary, parent=parent)
    box.setObjectName("importResultBox")
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    if details:
        box.setDetailedText(details)
    box.show()
    return box
