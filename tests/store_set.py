"""The two stores that export and import need, without a whole workspace (a test fixture)."""

from __future__ import annotations

from dataclasses import dataclass

from assistant.memory import ConversationStore, SemanticMemory


@dataclass(frozen=True)
class StoreSet:
    """A conversation store and a memory store (`assistant.transfer.Stores`)."""

    conversations: ConversationStore
    memory: SemanticMemory

    def close(self) -> None:
        """Close both stores, as `Workspace.close` does."""
        self.memory.close()
        self.conversations.close()
