"""The context a searched message is scored and found with: its text after that of the
searched message before it in its conversation (a reply often means what it answers says)."""

from __future__ import annotations

from collections.abc import Sequence

from assistant.memory.messages import Message
from assistant.memory.text import terms

SEARCHED_ROLES = ("user", "assistant")


def context_of(before: str | None, text: str) -> str:
    """A message's context: what a memory learned from it is also found by (see
    `memory_index`): its text after that of the searched message before it, if any."""
    return text if before is None else f"{before}\n{text}"


def contexts_in(messages: Sequence[Message], wanted: set[str]) -> dict[str, str]:
    """The contexts of the messages of `wanted` (ids) among a conversation's messages (in the
    order they were written), as its index would give them."""
    out: dict[str, str] = {}
    before: str | None = None
    for message in messages:
        if message.role not in SEARCHED_ROLES or not terms(message.content):
            continue
        if message.id in wanted:
            out[message.id] = context_of(before, message.content)
        before = message.content
    return out
