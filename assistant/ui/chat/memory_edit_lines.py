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

    Each line sits under the turn that made the change (the user message it answered), also
    when the conversation is drawn anew (switching back to it, a new theme).
    """

    def __init__(self, chat: ChatView, memory: SemanticMemory, parent: QObject | None = None):
        super().__init__(parent)
        self._chat = chat
        self.memory = memory
        self._edits: list[tuple[str, str | None, MemoryEdit]] = []  # conversation, turn, change
        self._undone: set[int] = set()
        chat.anchorClicked.connect(self._on_anchor)
        chat.rendered.connect(self._on_rendered)

    def show(self, conversation_id: str, edit: MemoryEdit, turn_id: str | None = None) -> None:
        """Record a change made in a turn of a conversation and add its line (it is on
        screen)."""
        self._edits.append((conversation_id, turn_id, edit))
        self._add_line(len(self._edits) - 1)

    def record(self, conversation_id: str, edit: MemoryEdit, turn_id: str | None = None) -> None:
        """Record a change made in a conversation not on screen: its line shows with it."""
        self._edits.append((conversation_id, turn_id, edit))

    def _add_line(self, index: int) -> None:
        _cid, turn_id, edit = self._edits[index]
        if index not in self._undone:
            line, link = f"↺ {edit.describe()} · ", ("Undo", f"{UNDO_SCHEME}:{index}")
        elif can_redo(edit):
            line, link = f"Undone: {edit.describe()} · ", ("Redo", f"{REDO_SCHEME}:{index}")
        else:
            self._chat.add_turn_line(turn_id, f"Undone: {edit.describe()}")
            return
        self._chat.add_turn_line(turn_id, line, link)

    def undo(self, index: int) -> None:
        """Undo change `index`, in the background (not if the memory changed since)."""
        if 0 <= index < len(self._edits) and index not in self._undone:
            self._apply(index, "undo", undo, undone=True)

    def redo(self, index: int) -> None:
        """Make undone change `index` again, in the background."""
        if index in self._undone and can_redo(self._edits[index][2]):
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
        edit, memory = self._edits[index][2], self.memory

        def failed(message: str) -> None:
            (self._undone.discard if undone else self._undone.add)(index)
            self._chat.add_turn_line(self._edits[index][1], f"⚠ Could not {what}: {message}")

        run_job(
            lambda _p: change(memory, edit),
            on_done=lambda _item: self._add_line(index),
            on_error=failed,
        )

    def _on_rendered(self, conversation_id: str) -> None:
        for index, (cid, _turn, _edit) in enumerate(self._edits):
            if cid == conversation_id:
                self._add_line(index)

    def _on_anchor(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        if kind == UNDO_SCHEME and value.isdigit():
            self.undo(int(value))
        elif kind == REDO_SCHEME and value.isdigit():
            self.redo(int(value))
