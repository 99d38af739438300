"""What an import file holds once validated (`ImportPlan`), and what applying it did."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from assistant.memory.conversations import ConversationStore, Message
from assistant.memory.items import MemoryItem
from assistant.memory.semantic import SemanticMemory

ImportFormat = Literal["assistant", "chatgpt"]
ConflictPolicy = Literal["skip", "copy"]
POLICIES: tuple[str, ...] = get_args(ConflictPolicy)
Progress = Callable[[int, int], None]

FORMAT_NAMES: dict[str, str] = {
    "assistant": "Assistant export",
    "chatgpt": "ChatGPT conversations.json",
}


class Stores(Protocol):
    """What export and import need of a workspace: its conversation and memory stores."""

    @property
    def conversations(self) -> ConversationStore: ...

    @property
    def memory(self) -> SemanticMemory: ...


@dataclass(frozen=True)
class StoreSet:
    """The two stores without a whole workspace (tests, tools)."""

    conversations: ConversationStore
    memory: SemanticMemory


@dataclass(frozen=True)
class ImportedConversation:
    """A validated conversation of an import file."""

    id: str
    title: str
    created_at: str
    updated_at: str
    summary: str
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class ImportPlan:
    """Everything an import file holds, validated; applying it is `apply_import`."""

    format: ImportFormat
    conversations: tuple[ImportedConversation, ...]
    memories: tuple[MemoryItem, ...] = ()
    notes: tuple[str, ...] = ()  # what was left out, for the preview

    @property
    def format_name(self) -> str:
        """The detected format in words."""
        return FORMAT_NAMES[self.format]

    @property
    def message_count(self) -> int:
        """Messages in all conversations."""
        return sum(len(c.messages) for c in self.conversations)

    @property
    def total(self) -> int:
        """Conversations plus memories: the steps of `apply_import`'s progress."""
        return len(self.conversations) + len(self.memories)

    def conflicts(self, target: Stores | ConversationStore) -> list[str]:
        """Ids of the plan's conversations that already exist in the store."""
        store = target if isinstance(target, ConversationStore) else target.conversations
        existing = {c.id for c in store.list()}
        return [c.id for c in self.conversations if c.id in existing]

    def memory_conflicts(self, target: Stores | SemanticMemory) -> list[str]:
        """Ids of the plan's memories that already exist in the store (in any state)."""
        memory = target if isinstance(target, SemanticMemory) else target.memory
        return [m.id for m in self.memories if memory.get(m.id) is not None]


@dataclass(frozen=True)
class ImportResult:
    """What `apply_import` did. `*_imported` counts copies too; `*_copied` only the copies."""

    conversations_imported: int = 0
    conversations_copied: int = 0
    conversations_skipped: int = 0
    memories_imported: int = 0
    memories_copied: int = 0
    memories_skipped: int = 0
    messages_imported: int = 0

    def summary(self) -> str:
        """One line for the user, e.g. "Imported 2 conversations (1 skipped as already present)"."""
        conversations = counted(self.conversations_imported, "conversation") + _detail(
            self.conversations_copied, self.conversations_skipped
        )
        memories = counted(self.memories_imported, "memory", "memories") + _detail(
            self.memories_copied, self.memories_skipped
        )
        return f"Imported {conversations} and {memories}"


def _detail(copied: int, skipped: int) -> str:
    parts = []
    if copied:
        parts.append(f"{copied} as {'a copy' if copied == 1 else 'copies'}")
    if skipped:
        parts.append(f"{skipped} skipped as already present")
    return f" ({', '.join(parts)})" if parts else ""


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """`n` and the noun in the right number: "1 memory", "2 memories"."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"
