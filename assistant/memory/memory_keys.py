"""Past messages found also by the memories learned from them: the semantic memory's texts given
to conversation search as keys of their source messages (see `message_keys`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from assistant.memory.conversations import ConversationStore
from assistant.memory.items import MemoryChange, MemoryItem
from assistant.memory.message_vectors import MessageKey
from assistant.memory.semantic import SemanticMemory

KEYED_STATES = ("active", "archived")  # a forgotten memory is no key (its text must go)


def tie_memories_to_messages(
    memory: SemanticMemory, conversations: ConversationStore
) -> Callable[[], None]:
    """Give `conversations` the text of each memory that names its source message, now and
    after every change of a memory; returns the function that stops it."""
    lock = threading.Lock()  # changes come on the threads that make them
    source_of: dict[str, MessageKey] = {}  # memory id -> its message
    memories_of: dict[MessageKey, set[str]] = {}  # message -> ids of its memories

    def track(ids: Iterable[str]) -> set[MessageKey]:
        """Record where these memories point now; the messages whose keys that changes."""
        touched: set[MessageKey] = set()
        for memory_id in ids:
            old = source_of.pop(memory_id, None)
            if old is not None:
                memories_of[old].discard(memory_id)
                touched.add(old)
            item = memory.get(memory_id)
            new = _message_of(item) if item is not None else None
            if new is not None:
                source_of[memory_id] = new
                memories_of.setdefault(new, set()).add(memory_id)
                touched.add(new)
        return touched

    def texts(message: MessageKey) -> list[str]:
        items = (memory.get(memory_id) for memory_id in sorted(memories_of.get(message, ())))
        return [item.text for item in items if item is not None and item.state in KEYED_STATES]

    def changed(change: MemoryChange) -> None:
        if change.kind in ("added", "updated"):
            with lock:
                touched = track(change.ids)
                if touched:
                    conversations.set_message_keys({m: texts(m) for m in touched})

    unsubscribe = memory.subscribe(changed)
    with lock:
        touched = track(item.id for item in memory.all(None))
        conversations.set_message_keys({m: texts(m) for m in touched})
    return unsubscribe


def _message_of(item: MemoryItem) -> MessageKey | None:
    """The message a memory was learned from, if it names one and may be a key."""
    source = item.source
    if source is None or source.message_id is None or item.state not in KEYED_STATES:
        return None
    return (source.conversation_id, source.message_id)
