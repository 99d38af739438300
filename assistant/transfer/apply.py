"""Applying an import plan: add its memories and conversations, never overwriting anything and
never duplicating a memory."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from assistant.errors import InvalidImportError, StorageError
from assistant.fileio import reason
from assistant.memory import (
    ConversationExistsError,
    ConversationStore,
    MemoryEvent,
    MemoryItem,
    embedding_batches,
)
from assistant.transfer.plan import (
    POLICIES,
    PROJECT_POLICIES,
    ConflictPolicy,
    ImportedConversation,
    ImportPlan,
    ImportResult,
    Progress,
    ProjectPolicy,
    Stores,
    SuggestedMemory,
)
from assistant.transfer.projects import map_projects
from assistant.transfer.reader import read_conversations
from assistant.transfer.stream import Cancel, ImportCancelledError
from assistant.transfer.wording import field_problem

if TYPE_CHECKING:
    from assistant.knowledge import AttachmentStore
    from assistant.memory.insertion import Inserted

COPY_SUFFIX = " (imported)"
SUGGESTED_IMPORTANCE = 0.7


def apply_import(
    plan: ImportPlan,
    stores: Stores,
    policy: ConflictPolicy,
    progress: Progress | None = None,
    *,
    suggestions: Sequence[SuggestedMemory] = (),
    keep_pinned: Collection[str] = (),
    cancel: Cancel | None = None,
    projects: ProjectPolicy = "merge",
    attachments: AttachmentStore | None = None,
) -> ImportResult:
    """Add the plan's projects, memories (with their histories), conversations and the chosen
    suggestions; never overwrites, never duplicates a memory.

    A project of the file whose id is here is that project; one whose name is that of another
    project here is merged into it (`"merge"`) or created beside it (`"apart"`, named
    "<name> (imported)"); the others are created. Conversations and memories follow their
    project (see `transfer.projects`).

    Memories arrive unpinned (a pinned memory is in every prompt: an export must not put text
    there unasked) but those whose ids the user ticked in `keep_pinned`.

    A conversation whose id exists is skipped (`"skip"`) or added with a new id (`"copy"`; its
    title gets " (imported)", or " (imported 2)", " (imported 3)", … where a conversation here
    has that title already). With `attachments` (the store of the files attached to messages),
    the files an export includes are written back under the conversation's id (a copy gets its
    own); a conversation whose files cannot be written is taken out again (StorageError). A
    memory is never copied: see `SemanticMemory.insert` (one here
    already is skipped or merged into the memory that says the same, a forgotten one stays
    forgotten); messages naming a merged memory then name the memory here. Each conversation
    file is written atomically; the conversations of a streamed export are read again from its
    files, one at a time. `progress(done, total)` is called after each batch of memories and
    each conversation; `cancel()` returning True stops with ImportCancelledError, keeping what
    was imported. Memories may be embedded over the network: call this off the GUI thread.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    if projects not in PROJECT_POLICIES:
        raise ValueError(f"projects must be one of {', '.join(PROJECT_POLICIES)}")
    mapping = map_projects(plan.projects, stores.projects, projects)
    total = plan.total + len(suggestions)
    done = 0
    if progress is not None:
        progress(done, total)
    counts = dict.fromkeys(("imported", "copied", "skipped", "messages", "files", "images"), 0)
    memories = _MemoryCounts()
    history: dict[str, list[MemoryEvent]] = {}
    for event in plan.memory_history:
        history.setdefault(event.memory_id, []).append(event)
    arriving = [_pinned_if_kept(item, keep_pinned) for item in plan.memories]
    for batch in embedding_batches(arriving):
        if cancel is not None and cancel():
            raise ImportCancelledError
        events = [mapping.event(e) for item in batch for e in history.get(item.id, ())]
        scoped = [mapping.item(item) for item in batch]
        memories.add(stores.memory.insert(scoped, events=events))
        done += len(batch)
        if progress is not None:
            progress(done, total)
    store = stores.conversations
    titles = _Titles(store)
    wanted_ids = None
    if policy == "skip":  # what is here already is not read again
        present = set(plan.conflicts(store))
        wanted_ids = [c.id for c in plan.conversations if c.id not in present]
        counts["skipped"] = len(present)
        done += len(present)
        if progress is not None and present:
            progress(done, total)
    for conversation in read_conversations(plan, cancel=cancel, ids=wanted_ids):
        if cancel is not None and cancel():
            raise ImportCancelledError
        placed = replace(conversation, project=mapping.of(conversation.project))
        outcome = _import_conversation(
            store, _remapped(placed, memories.ids), policy, attachments, titles
        )
        _count(counts, outcome, conversation, files=attachments is not None)
        done += 1
        if progress is not None:
            progress(done, total)
    for batch in embedding_batches([_suggested(s) for s in suggestions]):
        if cancel is not None and cancel():
            raise ImportCancelledError
        memories.add(stores.memory.insert(batch))  # one embedding request and write a batch
        done += len(batch)
        if progress is not None:
            progress(done, total)
    return ImportResult(
        conversations_imported=counts["imported"],
        conversations_copied=counts["copied"],
        conversations_skipped=counts["skipped"],
        memories_imported=memories.stored,
        memories_merged=memories.merged,
        memories_skipped=memories.present,
        memories_forgotten=memories.forgotten,
        messages_imported=counts["messages"],
        projects_imported=mapping.created,
        projects_merged=mapping.merged,
        files_restored=counts["files"],
        images_restored=counts["images"],
    )


def _count(
    counts: dict[str, int], outcome: str, conversation: ImportedConversation, *, files: bool
) -> None:
    """Add what importing `conversation` did (`files`: its files were written) to `counts`."""
    if outcome != "skipped":
        counts["imported"] += 1
        counts["messages"] += len(conversation.messages)
        counts["files"] += len(conversation.files) if files else 0
        counts["images"] += len(conversation.images) if files else 0
    if outcome != "imported":
        counts[outcome] += 1


@dataclass
class _MemoryCounts:
    """What the inserts of an import did, added up, and where each memory went."""

    stored: int = 0
    merged: int = 0
    present: int = 0
    forgotten: int = 0
    ids: dict[str, str] = field(default_factory=dict)

    def add(self, inserted: Inserted) -> None:
        self.stored += len(inserted.stored)
        self.merged += len(inserted.merged)
        self.present += len(inserted.present)
        self.forgotten += len(inserted.forgotten)
        self.ids.update(inserted.ids)


def _remapped(conversation: ImportedConversation, ids: dict[str, str]) -> ImportedConversation:
    """The conversation with its messages naming memories by their ids here."""
    if not any(i in ids and ids[i] != i for m in conversation.messages for i in m.memory_ids):
        return conversation
    messages = tuple(
        replace(m, memory_ids=tuple(dict.fromkeys(ids.get(i, i) for i in m.memory_ids)))
        for m in conversation.messages
    )
    return replace(conversation, messages=messages)


def _pinned_if_kept(item: MemoryItem, keep_pinned: Collection[str]) -> MemoryItem:
    """The memory, unpinned unless the user chose to keep it pinned."""
    return item if not item.pinned or item.id in keep_pinned else item._replace(pinned=False)


def _suggested(suggestion: SuggestedMemory) -> MemoryItem:
    """A new memory of a suggestion the user chose to keep (tagged with where it came from)."""
    return MemoryItem.new(
        suggestion.text,
        suggestion.kind,
        SUGGESTED_IMPORTANCE,
        tags=(suggestion.origin,),
        origin="import",
    )


def _import_conversation(
    store: ConversationStore,
    conversation: ImportedConversation,
    policy: ConflictPolicy,
    attachments: AttachmentStore | None,
    titles: _Titles,
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
                pinned=conversation.pinned,
                archived=conversation.archived,
                project=conversation.project,
            )
        except ConversationExistsError:
            if policy == "skip":
                return "skipped"
            cid, title, outcome = uuid.uuid4().hex, titles.copy_of(conversation.title), "copied"
            continue
        except ValueError as exc:  # validated already; only a changed store rule gets here
            raise InvalidImportError(
                f"the conversation “{conversation.title}” could not be written: "
                f"{field_problem(str(exc))}"
            ) from exc
        titles.taken(title)
        if attachments is not None and (conversation.files or conversation.images):
            _restore(store, attachments, cid, conversation)
        return outcome


class _Titles:
    """The conversation titles here, read once when the first copy needs a title."""

    def __init__(self, store: ConversationStore) -> None:
        self._store = store
        self._titles: set[str] | None = None

    def taken(self, title: str) -> None:
        """A conversation with this title was just imported."""
        if self._titles is not None:
            self._titles.add(title)

    def copy_of(self, title: str) -> str:
        """A title for a copy of a conversation titled `title` that no conversation here has:
        "Trip (imported)", then "Trip (imported 2)", "Trip (imported 3)", …"""
        if self._titles is None:
            self._titles = {c.title for c in self._store.all()}
        candidate, n = title + COPY_SUFFIX, 1
        while candidate in self._titles:
            n += 1
            candidate = f"{title} (imported {n})"
        return candidate


def _restore(
    store: ConversationStore,
    attachments: AttachmentStore,
    cid: str,
    conversation: ImportedConversation,
) -> None:
    """Write the conversation's files and tool images; if the disk refuses one, take the
    conversation out again (its attachments go with it) and say which file."""
    what = ""
    try:
        for file in conversation.files:
            what = f"{file.attachment.name}, attached"
            attachments.restore(cid, file.attachment, file.content())
        for image in conversation.images:
            what = f"the image {image.name} a tool returned"
            attachments.restore_tool_image(cid, image.name, image.content())
    except OSError as exc:
        store.delete(cid)
        attachments.drop(cid)
        raise StorageError(
            f"Could not write {what} in the conversation {conversation.title!r}: "
            f"{reason(exc)}. The conversation was not imported."
        ) from exc
