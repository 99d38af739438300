"""The prompt of a turn: instructions, memories, working memory, summary, recent messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from assistant.memory.conversations import Conversation, Message, estimate_tokens
from assistant.memory.items import MemoryItem

SYSTEM_PROMPT = """\
You are Assistant, a personal assistant that remembers. Be helpful, concise and honest.

You have a long-term memory about the user. Memories relevant to this message are listed below \
with their ids; use them when they help, and never invent memories. Use the `remember` tool for \
durable facts, preferences, plans and decisions the user shares (not for small talk), `recall` \
to search memory for something not listed, `forget` when the user asks you to forget something, \
and `pin` for facts the user wants always kept in mind. For multi-step work, keep the task, \
subgoals, notes and intermediate results in working memory with `update_working_memory`. \
Answer in Markdown."""

TEMPORARY_NOTE = (
    "This is a temporary chat: long-term memory is off. Do not claim to remember anything "
    "from it later."
)


@dataclass(frozen=True)
class Prompt:
    """The messages to send and the memories they contain."""

    messages: list[dict[str, Any]]
    memory_ids: tuple[str, ...]
    overflow: list[Message]


def _memory_lines(items: Sequence[MemoryItem]) -> str:
    return "\n".join(f"- [{i.id}] ({i.kind}) {i.text}" for i in items)


def system_text(
    *,
    now: datetime,
    pinned: Sequence[MemoryItem],
    relevant: Sequence[MemoryItem],
    working: str,
    summary: str,
    temporary: bool,
) -> str:
    """The system message: instructions, then what the assistant knows for this turn."""
    parts = [SYSTEM_PROMPT, f"Current date and time: {now:%A, %d %B %Y, %H:%M %Z}."]
    if temporary:
        parts.append(TEMPORARY_NOTE)
    if pinned:
        parts.append(
            "Pinned memories (always true unless the user says otherwise):\n"
            + _memory_lines(pinned)
        )
    if relevant:
        parts.append("Memories that may be relevant:\n" + _memory_lines(relevant))
    if working:
        parts.append(working)
    if summary:
        parts.append("Summary of the earlier conversation:\n" + summary)
    return "\n\n".join(parts)


def build_prompt(
    conversation: Conversation,
    *,
    now: datetime,
    pinned: Sequence[MemoryItem],
    relevant: Sequence[MemoryItem],
    working: str,
    budget_tokens: int,
) -> Prompt:
    """The system message plus the newest messages that fit what is left of the budget."""
    base = system_text(
        now=now,
        pinned=pinned,
        relevant=relevant,
        working=working,
        summary="",
        temporary=conversation.temporary,
    )
    window = conversation.prompt_messages(max(256, budget_tokens - estimate_tokens(base)))
    system = system_text(
        now=now,
        pinned=pinned,
        relevant=relevant,
        working=working,
        summary=window.summary,
        temporary=conversation.temporary,
    )
    messages = [{"role": "system", "content": system}]
    messages.extend(m.to_openai() for m in window.messages)
    ids = tuple(dict.fromkeys([i.id for i in pinned] + [i.id for i in relevant]))
    return Prompt(messages, ids, window.overflow)
