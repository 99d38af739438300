"""Changes the agent makes to long-term memory: what changed, a line for the chat, and Undo.

Every memory tool records a `MemoryEdit` with the item before and after; the loop reports it as
a `MemoryEdited` event, and `undo` puts the memory back as it was (until the app quits: forgotten
items stay on disk until then).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from assistant.errors import AssistantError
from assistant.memory.items import MemoryItem

if TYPE_CHECKING:
    from assistant.memory.semantic import SemanticMemory

EditAction = Literal["remembered", "updated", "superseded", "forgot", "pinned", "unpinned"]
QUOTE_CHARS = 60


@dataclass(frozen=True)
class MemoryEdit:
    """One change by the agent: `before` is None for a new memory; for "superseded", `before`
    is the memory replaced and `after` the new one that replaced it."""

    action: EditAction
    before: MemoryItem | None
    after: MemoryItem

    @property
    def memory_id(self) -> str:
        """The id of the memory changed."""
        return self.after.id

    def describe(self) -> str:
        """The chat line, e.g. `Forgot "The user likes tea"`."""
        verb = {
            "remembered": "Remembered",
            "updated": "Updated",
            "superseded": "Replaced",
            "forgot": "Forgot",
            "pinned": "Pinned",
            "unpinned": "Unpinned",
        }[self.action]
        if self.action == "updated" and self.before is not None:
            return f"{verb} {quote(self.before.text)} to {quote(self.after.text)}"
        if self.action == "superseded" and self.before is not None:
            return f"{verb} {quote(self.before.text)} with {quote(self.after.text)}"
        return f"{verb} {quote(self.after.text)}"


class ChangedSinceError(AssistantError):
    """The memory changed after the edit (by you, or by the agent): undoing it now would
    throw that change away, so it is left to the sidebar."""


def _changed_since(current: MemoryItem | None, expected: MemoryItem) -> str | None:
    """How `current` differs from the memory as an edit left it (None: it does not)."""
    if current is None:
        return "it is gone"
    if current.state != expected.state:
        return {"forgotten": "it was forgotten", "archived": "it was archived"}.get(
            current.state, "it was restored"
        )
    if current.pinned != expected.pinned:
        return "it was pinned" if current.pinned else "it was unpinned"
    if (current.text, current.kind) != (expected.text, expected.kind):
        return "it was edited"
    return None


def _check_unchanged(memory: SemanticMemory, expected: MemoryItem) -> None:
    reason = _changed_since(memory.get(expected.id), expected)
    if reason is not None:
        raise ChangedSinceError(
            f"the memory changed since ({reason}); change it in the memory pane instead."
        )


def can_redo(edit: MemoryEdit) -> bool:
    """Whether an undone `edit` can be made again from the chat."""
    return edit.action != "superseded"


def redo(memory: SemanticMemory, edit: MemoryEdit) -> MemoryItem:
    """Make an undone `edit` again, if the memory is still as the undo left it."""
    before, after = edit.before, edit.after
    if before is None:  # remembered: the undo forgot it
        _check_unchanged(memory, after._replace(state="forgotten"))
        return memory.restore(after.id)
    _check_unchanged(memory, before)
    if edit.action == "forgot":
        return memory.forget(after.id)
    if edit.action in ("pinned", "unpinned"):
        return memory.pin(after.id, after.pinned)
    if edit.action == "superseded":
        raise ChangedSinceError("a replacement cannot be made again from the chat.")
    return memory.update(
        after.id, text=after.text, kind=after.kind, importance=after.importance, tags=after.tags
    )


def undo(memory: SemanticMemory, edit: MemoryEdit) -> MemoryItem:
    """Put the memory back as it was before `edit`; returns it as it is now.

    ChangedSinceError if the memory is no longer as the edit left it (pinned, edited or
    forgotten since): an old Undo never throws away a later change.
    """
    before, item_id = edit.before, edit.memory_id
    _check_unchanged(memory, edit.after)
    if before is None:
        return memory.forget(item_id)
    if edit.action == "forgot":
        return memory.restore(item_id)
    if edit.action == "superseded":  # the new memory goes, the old one holds again
        memory.forget(item_id)
        return memory.restore(before.id)
    if edit.action in ("pinned", "unpinned"):
        return memory.pin(item_id, before.pinned)
    return memory.update(
        item_id, text=before.text, kind=before.kind, importance=before.importance, tags=before.tags
    )


def quote(text: str) -> str:
    """`text` on one line in curly quotes, cut to about QUOTE_CHARS."""
    short = " ".join(text.split())
    if len(short) > QUOTE_CHARS:
        short = short[: QUOTE_CHARS - 1].rstrip() + "…"
    return f"“{short}”"
