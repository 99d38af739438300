"""Past messages and the memories learned from them, each found also by the other: the semantic
memory's texts given to conversation search as keys of their source messages (see
`message_keys`), and each message's text (after the one before it) given to memory search as
the context of the memories learned from it (see `memory_index`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from assistant.memory.conversations import ConversationStore, ConversationWrite
from assistant.memory.items import MemoryChange, MemoryItem
from assistant.memory.message_vectors import MessageKey
from assistant.memory.semantic import SemanticMemory

KEYED_STATES = ("active", "archived")  # a forgotten memory is no key (its text must go)


def tie_memories_to_messages(
    memory: SemanticMemory, conversations: ConversationStore
) -> Callable[[], None]:
    """Give `conversations` the text of each memory that names its source message, and
    `memory` the context of each such memory, now and after every change of a memory (and
    of its conversation's existence); returns the function that stops it."""
    lock = threading.Lock()  # changes come on the threads that make them
    source_of: dict[str, MessageKey] = {}  # memory id -> its message
    memories_of: dict[MessageKey, set[str]] = {}  # message -> ids of its memories
    in_conversation: dict[str, set[str]] = {}  # conversation id -> ids of its memories

    def track(ids: Iterable[str]) -> set[MessageKey]:
        """Record where these memories point now; the messages whose keys that changes."""
        touched: set[MessageKey] = set()
        for memory_id in ids:
            old = source_of.pop(memory_id, None)
            if old is not None:
                memories_of[old].discard(memory_id)
                in_conversation[old[0]].discard(memory_id)
                touched.add(old)
            item = memory.get(memory_id)
            new = _message_of(item) if item is not None else None
            if new is not None:
                source_of[memory_id] = new
                memories_of.setdefault(new, set()).add(memory_id)
                in_conversation.setdefault(new[0], set()).add(memory_id)
                touched.add(new)
        return touched

    def give_contexts(ids: Iterable[str]) -> None:
        """Give these memories the contexts of their messages (none if they have none)."""
        chosen = list(ids)
        wanted = list({source_of[i] for i in chosen if i in source_of})
        found = conversations.message_contexts(wanted) if wanted else {}
        memory.set_contexts(
            {i: found.get(source_of[i]) if i in source_of else None for i in chosen}
        )

    def texts(message: MessageKey) -> list[str]:
        items = (memory.get(memory_id) for memory_id in sorted(memories_of.get(message, ())))
        return [item.text for item in items if item is not None and item.state in KEYED_STATES]

    def changed(change: MemoryChange) -> None:
        if change.kind in ("added", "updated"):
            with lock:
                touched = track(change.ids)
                if touched:
                    conversations.set_message_keys({m: texts(m) for m in touched})
                give_contexts(change.ids)

    def written(write: ConversationWrite) -> None:
        # A conversation made or removed: its memories gain or lose their contexts.
        if write.record is None:
            with lock:
                give_contexts(list(in_conversation.get(write.conversation_id, ())))

    stops = [memory.subscribe(changed), conversations.subscribe_writes(written)]
    with lock:
        every = [item.id for item in memory.all(None)]
        touched = track(every)
        conversations.set_message_keys({m: texts(m) for m in touched})
        give_contexts(_first_contexts(memory, conversations, source_of, in_conversation))

    def stop() -> None:
        for unsubscribe in stops:
            unsubscribe()

    return stop


def _first_contexts(
    memory: SemanticMemory,
    conversations: ConversationStore,
    source_of: dict[str, MessageKey],
    in_conversation: dict[str, set[str]],
) -> list[str]:
    """Drop the contexts of the memories whose conversation is gone; the memories that need
    theirs (never given one). A message never changes, so a context once given (the index
    cache keeps which) holds while its conversation does: opening reads no conversation."""
    there = {cid: conversations.exists(cid) for cid in in_conversation}
    gone = [i for cid, ids in in_conversation.items() if not there[cid] for i in ids]
    memory.set_contexts(dict.fromkeys(gone))
    kept = [i for i, (cid, _) in source_of.items() if there[cid]]
    return memory.unknown_contexts(kept)


def _message_of(item: MemoryItem) -> MessageKey | None:
    """The message a memory was learned from, if it names one and may be a key."""
    source = item.source
    if source is None or source.message_id is None or item.state not in KEYED_STATES:
        return None
    return (source.conversation_id, source.message_id)
