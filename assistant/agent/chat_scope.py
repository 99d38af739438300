"""What a chat's project changes in a turn: the memories it sees, where what it learns goes,
and the project's instructions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assistant.instructions import Instructions
from assistant.memory import EVERYWHERE, Conversation, MemoryItem, MemoryScope, SemanticMemory
from assistant.projects import Project, ProjectStore


@dataclass(frozen=True)
class ChatScope:
    """A chat's project (None outside every project) and its memory scope."""

    memory: MemoryScope = EVERYWHERE
    project: Project | None = None

    def instructions(self, base: Instructions) -> Instructions:
        """The global instructions `base`, with the project's in a project's chat."""
        if self.project is None:
            return base
        return base.in_project(self.project.name, self.project.instructions)

    def pinned(self, memory: SemanticMemory) -> list[MemoryItem]:
        """The current pinned memories the chat sees, the project's first."""
        items = [i for i in memory.pinned(self.memory.visible) if i.is_current]
        return self.memory.first(items, _itself)

    def first(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """`items` with the project's before the global ones."""
        return self.memory.first(items, _itself)


def _itself(item: MemoryItem) -> MemoryItem:
    return item


def chat_scope(projects: ProjectStore | None, conversation: Conversation) -> ChatScope:
    """The scope of a conversation: its project's (if the project still exists), else the
    global one. A temporary chat is outside every project."""
    if projects is None or conversation.temporary:
        return ChatScope()
    project = projects.get(conversation.project)
    if project is None:
        return ChatScope()
    return ChatScope(MemoryScope(project.id, project.isolated), project)
