"""What an import file holds once validated (`ImportPlan`), and what applying it did."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal, Protocol, get_args

from assistant.instructions import Instructions
from assistant.memory import (
    ConversationStore,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    Message,
    SemanticMemory,
)
from assistant.memory_policy import MemoryPolicy
from assistant.projects import Project, ProjectStore
from assistant.timestamps import stamp

if TYPE_CHECKING:
    from assistant.transfer.files import ImportedFile, ImportedImage
    from assistant.transfer.sources import ImportSource

ImportFormat = Literal["assistant", "chatgpt", "claude"]
ConflictPolicy = Literal["skip", "copy"]
POLICIES: tuple[str, ...] = get_args(ConflictPolicy)
# A project of the file with the name of one here: one project, or two ("Name (imported)").
ProjectPolicy = Literal["merge", "apart"]
PROJECT_POLICIES: tuple[str, ...] = get_args(ProjectPolicy)
Progress = Callable[[int, int], None]

FORMAT_NAMES: dict[str, str] = {
    "assistant": "Assistant export",
    "chatgpt": "ChatGPT export",
    "claude": "Claude export",
}


class Stores(Protocol):
    """What export and import need of a workspace: its conversation and memory stores, and its
    projects (None: projects are neither exported nor created)."""

    @property
    def conversations(self) -> ConversationStore: ...

    @property
    def memory(self) -> SemanticMemory: ...

    @property
    def projects(self) -> ProjectStore | None: ...


Turn = tuple[Literal["user", "assistant"], str, str | None, str]  # role, text, time, id


@dataclass(frozen=True)
class ImportedConversation:
    """A validated conversation of an import file."""

    id: str
    title: str
    created_at: str
    updated_at: str
    summary: str
    messages: tuple[Message, ...]
    do_not_remember: bool = False  # ChatGPT's `is_do_not_remember`: the curator stays away
    pinned: bool = False  # at the top of the list
    archived: bool = False  # out of the list until archived ones are shown
    project: str | None = None  # the id of its project in the file
    files: tuple[ImportedFile, ...] = ()  # the attached files' bytes, in an export with them
    images: tuple[ImportedImage, ...] = ()  # the images tools returned, in an export with files

    @classmethod
    def of_turns(
        cls,
        cid: str,
        title: str,
        turns: Sequence[Turn],
        *,
        created: str | None,
        updated: str | None,
        order: int,
        do_not_remember: bool = False,
    ) -> ImportedConversation:
        """Another app's conversation: its visible `turns` (at least one) as one branch.

        Ids are made unique and each message is a child of the one before; a turn without a
        time takes the one before it, or the conversation's, or its place in the file.
        """
        times = [at for _, _, at, _ in turns if at is not None]
        start = created or updated or (times[0] if times else undated(order))
        messages: list[Message] = []
        taken: set[str] = set()
        for role, text, at, message_id in turns:
            when = at or (messages[-1].created_at if messages else start)
            parent = messages[-1].id if messages else None
            messages.append(Message(unique_id(message_id, taken), parent, role, text, when))
        return cls(
            cid,
            title,
            start,
            updated or messages[-1].created_at,
            "",
            tuple(messages),
            do_not_remember=do_not_remember,
        )


@dataclass(frozen=True)
class PlannedConversation:
    """What the preview knows of a conversation; its messages are read again when applied."""

    id: str
    title: str
    created_at: str
    message_count: int

    @classmethod
    def of(cls, conversation: ImportedConversation) -> PlannedConversation:
        """The plan's entry of a conversation just read."""
        return cls(
            conversation.id, conversation.title, conversation.created_at, len(conversation.messages)
        )


@dataclass(frozen=True)
class Unreadable:
    """A conversation of the file that cannot be read, and why; the others still import."""

    name: str  # its title, else its id, else its place in the file
    reason: str


@dataclass(frozen=True)
class SuggestedMemory:
    """Something an export says about the user (ChatGPT's custom instructions), offered as a
    memory the user can choose to keep."""

    text: str
    kind: MemoryKind
    origin: str  # e.g. "Imported from ChatGPT", kept as the memory's tag


@dataclass(frozen=True)
class ImportPlan:
    """Everything an import file holds, validated; applying it is `apply_import`.

    A streamed export (ChatGPT, Claude) keeps only the list of its conversations here and is
    read again, one conversation at a time, by `read_conversations`.
    """

    format: ImportFormat
    conversations: tuple[PlannedConversation, ...]
    memories: tuple[MemoryItem, ...] = ()
    notes: tuple[str, ...] = ()  # what was left out, for the preview
    unreadable: tuple[Unreadable, ...] = ()
    suggested_memories: tuple[SuggestedMemory, ...] = ()
    source: ImportSource | None = None
    memory_history: tuple[MemoryEvent, ...] = ()  # the memories' events
    projects: tuple[Project, ...] = ()
    instructions: Instructions | None = None  # the global custom instructions of an export
    memory_policy: MemoryPolicy | None = None  # the global memory policy of an export

    @property
    def format_name(self) -> str:
        """The detected format in words."""
        return FORMAT_NAMES[self.format]

    def suggested_instructions(self) -> Instructions:
        """The suggestions as custom instructions: ChatGPT's "know about you" (a fact) and "how to
        respond" (a preference); the last of each where the export has several."""
        last = {s.kind: s.text for s in self.suggested_memories}
        return Instructions(last.get("fact", ""), last.get("preference", ""))

    @property
    def message_count(self) -> int:
        """Messages in all conversations."""
        return sum(c.message_count for c in self.conversations)

    @property
    def total(self) -> int:
        """Conversations plus memories: the steps of `apply_import`'s progress."""
        return len(self.conversations) + len(self.memories)

    def unreadable_note(self, listed: int = 3) -> str | None:
        """The sentence naming what could not be read ("2 conversations could not be read: …")."""
        if not self.unreadable:
            return None
        shown = [f"{u.name!r} ({u.reason})" for u in self.unreadable[:listed]]
        more = len(self.unreadable) - listed
        if more > 0:
            shown.append(f"and {more} more")
        names = "; ".join(shown)
        return f"{counted(len(self.unreadable), 'conversation')} could not be read: {names}."

    def conflicts(self, target: Stores | ConversationStore) -> list[str]:
        """Ids of the plan's conversations that already exist in the store."""
        store = target if isinstance(target, ConversationStore) else target.conversations
        existing = {c.id for c in store.all()}
        return [c.id for c in self.conversations if c.id in existing]

    def project_conflicts(self, target: Stores) -> list[str]:
        """Names of the plan's projects that name another project here (same name, another
        id): the user chooses to merge them or keep them apart."""
        store = target.projects
        if store is None:
            return []
        return [
            p.name
            for p in self.projects
            if store.get(p.id) is None and store.by_name(p.name) is not None
        ]

    def memory_conflicts(self, target: Stores | SemanticMemory) -> list[str]:
        """Ids of the plan's memories that already exist in the store (in any state but
        forgotten: see `memories_forgotten`)."""
        memory = target if isinstance(target, SemanticMemory) else target.memory
        return [
            m.id
            for m in self.memories
            if (here := memory.get(m.id)) is not None and here.state != "forgotten"
        ]

    def memories_forgotten(self, target: Stores | SemanticMemory) -> list[str]:
        """Ids of the plan's memories the user made the assistant forget: forgotten here, or
        saying a forgotten fact (by its words); the import does not bring them back."""
        memory = target if isinstance(target, SemanticMemory) else target.memory
        gone = []
        for m in self.memories:
            here = memory.get(m.id)
            if memory.says_forgotten(m.text) if here is None else here.state == "forgotten":
                gone.append(m.id)
        return gone


@dataclass(frozen=True)
class ImportResult:
    """What `apply_import` did. `conversations_imported` counts copies too,
    `conversations_copied` only the copies. Memories are never copied: one that is here
    already is skipped (the same id) or merged into the memory that says the same; one that
    was forgotten is not brought back."""

    conversations_imported: int = 0
    conversations_copied: int = 0
    conversations_skipped: int = 0
    memories_imported: int = 0
    memories_merged: int = 0
    memories_skipped: int = 0
    memories_forgotten: int = 0
    messages_imported: int = 0
    projects_imported: int = 0  # created here
    projects_merged: int = 0  # into the project of the same name (or id) here
    files_restored: int = 0  # files attached to messages, written back from the export
    images_restored: int = 0  # images tools returned, written back from the export

    def summary(self) -> str:
        """One line for the user, e.g. "Imported 2 conversations (1 skipped as already present)"."""
        conversations = counted(self.conversations_imported, "conversation") + _detail(
            copied=self.conversations_copied, skipped=self.conversations_skipped
        )
        memories = counted(self.memories_imported, "memory", "memories") + _detail(
            merged=self.memories_merged,
            skipped=self.memories_skipped,
            forgotten=self.memories_forgotten,
        )
        text = f"Imported {conversations} and {memories}"
        if self.projects_imported or self.projects_merged:
            merged = self.projects_merged
            text += f"; {counted(self.projects_imported, 'project')}" + (
                f" ({merged} merged into the project of the same name here)" if merged else ""
            )
        if self.files_restored:
            text += f"; {counted(self.files_restored, 'attached file')} restored"
        if self.images_restored:
            text += f"; {counted(self.images_restored, 'image')} from tools restored"
        return text


def _detail(*, copied: int = 0, merged: int = 0, skipped: int = 0, forgotten: int = 0) -> str:
    parts = []
    if copied:
        parts.append(f"{copied} as {'a copy' if copied == 1 else 'copies'}")
    if merged:
        parts.append(f"{merged} merged into the same memor{'y' if merged == 1 else 'ies'} here")
    if skipped:
        parts.append(f"{skipped} skipped as already present")
    if forgotten:
        them = "it" if forgotten == 1 else "them"
        parts.append(f"{forgotten} not brought back as you had made the assistant forget {them}")
    return f" ({', '.join(parts)})" if parts else ""


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """`n` and the noun in the right number: "1 memory", "2 memories"."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def undated(order: int) -> str:
    """The time given to a conversation that has none: 1970, in file order ("date unknown")."""
    return stamp(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=order))


def unique_id(candidate: str, taken: set[str]) -> str:
    """`candidate`, or `candidate-2`, `-3`, … if an earlier message has it; added to `taken`."""
    unique, n = candidate, 1
    while unique in taken:
        n += 1
        unique = f"{candidate}-{n}"
    taken.add(unique)
    return unique
