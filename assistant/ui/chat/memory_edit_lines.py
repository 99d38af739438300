"""Each change the agent makes to long-term memory, shown in the chat as a line with Undo.

The lines and their Undo live until the app quits (forgotten memories stay on disk until then);
undoing runs in the background, as restoring may need the embedding server.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QUrl

from assistant.memory import MemoryEdit, SemanticMemory, can_redo, redo, undo
from assistant.ui.chat.view import ChatView
from assistant.ui.jobs import run_job

UNDO_SCHEME = "undo-memory"
REDO_SCHEME = "redo-memory"


class MemoryEditLines(QObject):
    """Adds `↺ Forgot “…” · Undo` lines to the chat and undoes them when clicked.

    A conversation drawn anew (switching back to it, expanding a tool line) gets its lines
    again, at its end.
    """

    def __init__(self, chat: ChatView, memory: SemanticMemory, parent: QObject | None = None):
        super().__init__(parent)
        self._chat = chat
        self.memory = memory
        self._edits: list[tuple[str, MemoryEdit]] = []  # (conversation id, change)
        self._undone: set[int] = set()
        chat.anchorClicked.connect(self._on_anchor)
        chat.rendered.connect(self._on_rendered)

    def show(self, conversation_id: str, edit: MemoryEdit) -> None:
        """Record a change made in a conversation and add its line (it is on screen)."""
        self._edits.append((conversation_id, edit))
        self._add_line(len(self._edits) - 1)

    def record(self, conversation_id: str, edit: MemoryEdit) -> None:
        """Record a change made in a conversation not on screen: its line shows with it."""
        self._edits.append((conversation_id, edit))

    def _add_line(self, index: int) -> None:
        edit = self._edits[index][1]
        if index not in self._undone:
            self._chat.add_line(f"↺ {edit.describe()} · ", ("Undo", f"{UNDO_SCHEME}:{index}"))
        elif can_redo(edit):
            self._chat.add_line(f"Undone: {edit.describe()} · ", ("Redo", f"{REDO_SCHEME}:{index}"))
        else:
            self._chat.add_line(f"Undone: {edit.describe()}")

    def undo(self, index: int) -> None:
        """Undo change `index`, in the background (not if the memory changed since)."""
        if 0 <= index < len(self._edits) and index not in self._undone:
            self._apply(index, "undo", undo, undone=True)

    def redo(self, index: int) -> None:
        """Make undone change `index` again, in the background."""
        if index in self._undone and can_redo(self._edits[index][1]):
            self._apply(index, "redo", redo, undone=False)

    def _apply(
        self,
        index: int,
        what: str,
        change: Callable[[SemanticMemory, MemoryEdit], object],
        *,
        undone: bool,
    ) -> None:
        """Run `change` on edit `index` in the background; its line says how it went, and a
        failure puts the edit back as it was."""
        (self._undone.add if undone else self._undone.discard)(index)
        edit, memory = self._edits[index][1], self.memory

        def failed(message: str) -> None:
            (self._undone.discard if undone else self._undone.add)(index)
            self._chat.add_line(f"⚠ Could not {what}: {message}")

        run_job(
            lambda _p: change(memory, edit),
            on_done=lambda _item: self._add_line(index),
            on_error=failed,
        )

    def _on_rendered(self, conversation_id: str) -> None:
        for index, (cid, _) in enumerate(self._edits):
            if cid == conversation_id:
                self._add_line(index)

    def _on_anchor(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        if kind == UNDO_SCHEME and value.isdigit():
            self.undo(int(value))
        elif kind == REDO_SCHEME and value.isdigit():
            self.redo(int(value))
