"""Applying an import plan: add its conversations and memories, never overwriting anything."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Literal

from assistant.errors import InvalidImportError
from assistant.memory import (
    ConversationExistsError,
    ConversationStore,
    MemoryItem,
    SemanticMemory,
    embedding_batches,
)
from assistant.transfer.plan import (
    POLICIES,
    ConflictPolicy,
    ImportedConversation,
    ImportPlan,
    ImportResult,
    Progress,
    Stores,
    SuggestedMemory,
)
from assistant.transfer.reader import read_conversations
from assistant.transfer.stream import Cancel, ImportCancelledError

COPY_SUFFIX = " (imported)"


def apply_import(
    plan: ImportPlan,
    stores: Stores,
    policy: ConflictPolicy,
    progress: Progress | None = None,
    *,
    suggestions: Sequence[SuggestedMemory] = (),
    cancel: Cancel | None = None,
) -> ImportResult:
    """Add the plan's conversations and memories, and the chosen suggestions; never overwrites.

    An item whose id exists is skipped (`"skip"`) or added with a new id (`"copy"`; a copied
    conversation's title gets " (imported)"). Each conversation file is written atomically;
    the conversations of a streamed export are read again from its files, one at a time.
    `progress(done, total)` is called after each conversation and each batch of memories;
    `cancel()` returning True stops with ImportCancelledError, keeping what was imported.
    Memories may be embedded over the network: call this off the GUI thread.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    total = plan.total + len(suggestions)
    done = 0
    if progress is not None:
        progress(done, total)
    counts = dict.fromkeys(
        ("imported", "copied", "skipped", "messages", "m_imported", "m_copied", "m_skipped"), 0
    )
    store = stores.conversations
    wanted = None
    if policy == "skip":  # what is here already is not read again
        present = set(plan.conflicts(store))
        wanted = [c.id for c in plan.conversations if c.id not in present]
        counts["skipped"] = len(present)
        done = len(present)
        if progress is not None and done:
            progress(done, total)
    for conversation in read_conversations(plan, cancel=cancel, ids=wanted):
        if cancel is not None and cancel():
            raise ImportCancelledError
        outcome = _import_conversation(store, conversation, policy)
        if outcome != "skipped":
            counts["imported"] += 1
            counts["messages"] += len(conversation.messages)
        if outcome != "imported":
            counts[outcome] += 1
        done += 1
        if progress is not None:
            progress(done, total)
    for batch in embedding_batches(plan.memories):
        added, copied = _insert_memories(stores.memory, batch, policy)
        counts["m_imported"] += added
        counts["m_copied"] += copied
        counts["m_skipped"] += len(batch) - added
        done += len(batch)
        if progress is not None:
            progress(done, total)
    for suggestion in suggestions:
        stores.memory.add(suggestion.text, suggestion.kind, 0.7, tags=[suggestion.origin])
        counts["m_imported"] += 1
        done += 1
        if progress is not None:
            progress(done, total)
    return ImportResult(
        conversations_imported=counts["imported"],
        conversations_copied=counts["copied"],
        conversations_skipped=counts["skipped"],
        memories_imported=counts["m_imported"],
        memories_copied=counts["m_copied"],
        memories_skipped=counts["m_skipped"],
        messages_imported=counts["messages"],
    )


def _import_conversation(
    store: ConversationStore, conversation: ImportedConversation, policy: ConflictPolicy
) -> Literal["imported", "copied", "skipped"]:
    cid, title = conversation.id, conversation.title
    outcome: Literal["imported", "copied"] = "imported"
    if policy == "skip" and store.exists(cid):
        return "skipped"  # without writing the file first
    while True:
        try:
            store.import_conversation(
                cid,
                title,
                conversation.created_at,
                conversation.messages,
                summary=conversation.summary,
                do_not_remember=conversation.do_not_remember,
            )
        except ConversationExistsError:
            if policy == "skip":
                return "skipped"
            cid, title, outcome = uuid.uuid4().hex, conversation.title + COPY_SUFFIX, "copied"
            continue
        except ValueError as exc:  # validated already; only a changed store rule gets here
            raise InvalidImportError(f"conversation {conversation.id!r}: {exc}") from exc
        return outcome


def _insert_memories(
    memory: SemanticMemory, items: Sequence[MemoryItem], policy: ConflictPolicy
) -> tuple[int, int]:
    """Store items as they are; returns (stored, of them copies)."""
    stored = memory.insert(items, on_conflict=policy)
    original = {i.id for i in items}
    return len(stored), sum(1 for i in stored if i.id not in original)
