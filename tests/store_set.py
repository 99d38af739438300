"""The two stores that export and import need, without a whole workspace (a test fixture)."""

from __future__ import annotations

from dataclasses import dataclass

from assistant.memory import ConversationStore, SemanticMemory
from assistant.projects import ProjectStore


@dataclass(frozen=True)
class StoreSet:
    """A conversation store, a memory store and projects (`assistant.transfer.Stores`)."""

    conversations: ConversationStore
    memory: SemanticMemory
    projects: ProjectStore | None = None

    def close(self) -> None:
        """Close both stores, as `Workspace.close` does."""
        self.memory.close()
        self.conversations.close()
