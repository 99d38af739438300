"""Changes to memory that wait for the user, shown in the chat as lines they answer.

A change over the reply's budget is a suggestion (`💡 Suggested: Remember “…” · Accept ·
Dismiss`); a change of a pinned memory is a question (`? The assistant asks: Forget “…”? ·
Yes · No`). They are kept with the conversation, so they come back with it (switching back, a
restart) until answered: the session hands over those of the conversation it draws
(`show_waiting`). Answering runs in the background and an accepted change shows as a memory
change line with Undo.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QUrl

from assistant.memory import Conversation, ConversationStore, MemoryEdit
from assistant.memory.pending import Answer, PendingChange, apply_pending
from assistant.ui.chat.memory_edit_lines import MemoryEditLines
from assistant.ui.chat.view import ChatView
from assistant.ui.jobs import run_job

SCHEME = "pending-memory"
SUGGESTION_MARK = "💡"
QUESTION_MARK = "?"


def line_text(change: PendingChange) -> str:
    """The words of a change's line, before its links."""
    if change.reason == "pinned":
        return f"{QUESTION_MARK} The assistant asks: {change.describe()}? "
    return f"{SUGGESTION_MARK} Suggested: {change.describe()} "


def links(change: PendingChange) -> tuple[tuple[str, str], tuple[str, str]]:
    """The (label, href) pairs that answer a change."""
    yes, no = ("Yes", "No") if change.reason == "pinned" else ("Accept", "Dismiss")
    return (yes, f"{SCHEME}:accepted:{change.id}"), (no, f"{SCHEME}:dismissed:{change.id}")


class SuggestionLines(QObject):
    """Shows the changes waiting in the conversation on screen and carries out the answers."""

    def __init__(
        self,
        chat: ChatView,
        conversations: ConversationStore,
        memory_edits: MemoryEditLines,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._chat = chat
        self._conversations = conversations
        self._memory = memory_edits.memory
        self._memory_edits = memory_edits
        self._shown: dict[str, tuple[str, PendingChange]] = {}  # by id: (conversation, change)
        self._answering: set[str] = set()
        self._on_screen: set[str] = set()  # the ids whose line the chat shows now
        chat.anchorClicked.connect(self._on_anchor)

    def show(self, conversation_id: str, change: PendingChange) -> None:
        """Add the line of a change that now waits in the conversation on screen."""
        self._shown[change.id] = (conversation_id, change)
        if change.id in self._on_screen:  # drawn with the conversation already
            return
        self._on_screen.add(change.id)
        self._chat.add_turn_line(change.message_id, line_text(change), *links(change))

    def answer(self, pending_id: str, answer: Answer) -> None:
        """Carry out (accepted) or drop (dismissed) a waiting change, once, in the background."""
        if pending_id not in self._shown or pending_id in self._answering:
            return
        self._answering.add(pending_id)
        conversation_id, change = self._shown[pending_id]
        memory, conversations = self._memory, self._conversations

        def work(_progress: object) -> MemoryEdit | None:
            edit = apply_pending(memory, change, conversation_id) if answer == "accepted" else None
            conversations.answer_pending(conversation_id, pending_id, answer)
            return edit

        run_job(
            work,
            on_done=lambda edit: self._on_answered(conversation_id, change, edit),
            on_error=lambda message: self._on_failed(pending_id, message),
        )

    def _on_answered(
        self, conversation_id: str, change: PendingChange, edit: MemoryEdit | None
    ) -> None:
        self._shown.pop(change.id, None)
        self._answering.discard(change.id)
        if edit is not None:
            self._memory_edits.show(conversation_id, edit, change.message_id)
        else:
            self._chat.add_turn_line(change.message_id, f"Dismissed: {change.describe()}")

    def _on_failed(self, pending_id: str, message: str) -> None:
        self._answering.discard(pending_id)
        self._chat.add_line(f"⚠ Could not change the memory: {message}")

    def show_waiting(self, conversation: Conversation) -> None:
        """Add the lines of the changes waiting in a conversation just drawn anew."""
        self._on_screen.clear()
        for change in conversation.pending:
            self.show(conversation.id, change)

    def _on_anchor(self, url: QUrl) -> None:
        scheme, _, rest = url.toString().partition(":")
        answer, _, pending_id = rest.partition(":")
        if scheme == SCHEME and answer in ("accepted", "dismissed"):
            self.answer(pending_id, "accepted" if answer == "accepted" else "dismissed")
            self._chat.acted.emit()
