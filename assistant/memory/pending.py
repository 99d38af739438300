"""Changes to long-term memory that wait for the user: kept with the conversation they came from.

A change waits when the model asked for more than a reply may change (the rest is offered as a
suggestion: Accept / Dismiss), or when it would change a pinned memory (a question: only an
explicit yes changes it). Both are records of the conversation file, so they survive switching
conversations and restarts; `apply_pending` carries one out when the user agrees.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from assistant.errors import AssistantError
from assistant.json_fields import fail, optional_str, string
from assistant.memory.edits import MemoryEdit, quote
from assistant.memory.items import KINDS, MemoryKind, Origin, Source
from assistant.timestamps import stamp

if TYPE_CHECKING:
    from assistant.memory.semantic import SemanticMemory

PendingAction = Literal["remember", "update", "supersede", "forget", "pin", "unpin"]
# budget: over the reply's limit, offered instead; pinned: a pinned memory, the user is asked.
PendingReason = Literal["budget", "pinned"]
Answer = Literal["accepted", "dismissed"]
ACTIONS: tuple[PendingAction, ...] = get_args(PendingAction)
REASONS: tuple[PendingReason, ...] = get_args(PendingReason)
ANSWERS: tuple[Answer, ...] = get_args(Answer)
_ORIGINS = ("tool", "curator", "reflection")


@dataclass(frozen=True)
class PendingChange:
    """A change to memory that waits for the user's yes."""

    id: str
    action: PendingAction
    reason: PendingReason
    origin: Origin  # who asked for it: tool, curator or reflection
    created_at: str
    text: str | None = None  # the new text: remember, update, supersede
    kind: MemoryKind = "fact"
    importance: float = 0.5
    target_id: str | None = None  # the memory it changes: all but remember
    target_text: str | None = None  # what that memory said, to show
    message_id: str | None = None  # the user message of the reply that asked
    project: str | None = None  # where a memory to remember goes (None: global)

    @classmethod
    def new(
        cls, action: PendingAction, reason: PendingReason, origin: Origin, **fields: Any
    ) -> PendingChange:
        """A new pending change with a fresh id."""
        return cls(uuid.uuid4().hex, action, reason, origin, stamp(), **fields)

    def describe(self) -> str:
        """What it would do, in words: `Forget the pinned memory “…”`."""
        old = quote(self.target_text or "")
        new = quote(self.text or "")
        memory = "the pinned memory" if self.reason == "pinned" else "the memory"
        return {
            "remember": f"Remember {new}",
            "update": f"Change {memory} {old} to {new}",
            "supersede": f"Replace {memory} {old} with {new}",
            "forget": f"Forget {memory} {old}",
            "pin": f"Pin {old}",
            "unpin": f"Unpin {old}",
        }[self.action]

    def to_json(self) -> dict[str, Any]:
        """The fields of its record in the conversation file."""
        data: dict[str, Any] = {
            "id": self.id,
            "action": self.action,
            "reason": self.reason,
            "origin": self.origin,
            "created_at": self.created_at,
            "kind": self.kind,
            "importance": self.importance,
        }
        for name in ("text", "target_id", "target_text", "message_id", "project"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        return data

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> PendingChange:
        """Read a record's fields; FieldError names a bad one."""
        choices = {"action": ACTIONS, "reason": REASONS, "origin": _ORIGINS, "kind": KINDS}
        for name, allowed in choices.items():
            if string(raw, name) not in allowed:
                raise fail(name, f"must be one of {', '.join(allowed)}")
        importance = raw.get("importance")
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise fail("importance", "must be a number")
        return cls(
            id=string(raw, "id"),
            action=raw["action"],
            reason=raw["reason"],
            origin=raw["origin"],
            created_at=string(raw, "created_at"),
            text=optional_str(raw, "text"),
            kind=raw["kind"],
            importance=min(1.0, max(0.0, float(importance))),
            target_id=optional_str(raw, "target_id"),
            target_text=optional_str(raw, "target_text"),
            message_id=optional_str(raw, "message_id"),
            project=optional_str(raw, "project"),
        )


def apply_pending(
    memory: SemanticMemory, change: PendingChange, conversation_id: str
) -> MemoryEdit:
    """Carry out `change` now that the user agreed; returns the edit (for the chat, with Undo).

    Raises AssistantError when it no longer applies (the memory was forgotten meanwhile).
    """
    source = Source(conversation_id, change.message_id)
    by = change.origin
    if change.action == "remember":
        item = memory.add(
            change.text or "",
            change.kind,
            change.importance,
            source=source,
            origin=by,
            project=change.project,
        )
        return MemoryEdit("remembered", None, item)
    old = memory.get(change.target_id or "")
    if old is None or old.state == "forgotten":
        raise AssistantError("That memory is no longer there.")
    if change.action == "update":
        item = memory.merge_into(old.id, change.text or "", by=by, source=source)
        return MemoryEdit("updated", old, item)
    if change.action == "supersede":
        item = memory.supersede(
            old.id,
            change.text or "",
            change.kind,
            change.importance,
            by=by,
            source=source,
            reason="the user agreed",
        )
        return MemoryEdit("superseded", old, item)
    if change.action == "forget":
        return MemoryEdit("forgot", old, memory.forget(old.id, by=by))
    pinned = change.action == "pin"
    return MemoryEdit("pinned" if pinned else "unpinned", old, memory.pin(old.id, pinned, by=by))
