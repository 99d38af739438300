"""What a chat's project changes in a turn: the memories and past conversations it sees, where
what it learns goes, and the project's instructions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assistant.instructions import Instructions
from assistant.memory import (
    EVERYWHERE,
    Conversation,
    ConversationStore,
    MemoryItem,
    MemoryScope,
    SemanticMemory,
)
from assistant.projects import Project, ProjectStore


@dataclass(frozen=True)
class ChatScope:
    """A chat's project (None outside every project) and its memory scope."""

    memory: MemoryScope = EVERYWHERE
    project: Project | None = None
    # Whether a past conversation (by id) may be searched (None: every one): an isolated
    # project's chats search only its own, and no other chat searches them.
    sees_conversation: Callable[[str], bool] | None = None

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


def chat_scope(
    projects: ProjectStore | None, conversation: Conversation, store: ConversationStore
) -> ChatScope:
    """The scope of a conversation: its project's (if the project still exists), else the
    global one. A temporary chat is outside every project."""
    if projects is None:
        return ChatScope()
    walled = {p.id for p in projects.all() if p.isolated}
    project = None if conversation.temporary else projects.get(conversation.project)
    sees: Callable[[str], bool] | None = None
    if walled:
        project_of = {c.id: c.project for c in store.all()}
        if project is not None and project.isolated:
            sees = lambda cid: project_of.get(cid) == project.id  # noqa: E731
        else:
            sees = lambda cid: project_of.get(cid) not in walled  # noqa: E731
    if project is None:
        return ChatScope(sees_conversation=sees)
    return ChatScope(MemoryScope(project.id, project.isolated), project, sees)
