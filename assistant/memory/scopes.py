"""Memory scopes: a memory is global (None) or belongs to one project (its id); a chat sees the
memories of its scope and keeps what it learns there."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from assistant.memory.items import MemoryItem

Scope = str | None  # a project's id, or None: global
T = TypeVar("T")


@dataclass(frozen=True)
class MemoryScope:
    """The memories a chat may see, and where what it learns goes.

    Outside a project a chat sees only global memories. In a project it sees the project's
    memories, then the global ones; an isolated project sees only its own, and everything
    learned in it stays there.
    """

    project: str | None = None  # the chat's project
    isolated: bool = False

    @property
    def visible(self) -> frozenset[Scope]:
        """The scopes whose memories the chat sees."""
        if self.project is None:
            return frozenset({None})
        if self.isolated:
            return frozenset({self.project})
        return frozenset({self.project, None})

    def sees(self, item: MemoryItem) -> bool:
        """Whether a memory is in one of the visible scopes."""
        return item.project in self.visible

    def home(self, personal: bool) -> Scope:
        """Where a new memory goes: a personal fact or preference is global, anything else
        learned in a project stays in it; an isolated project keeps everything."""
        if self.project is None or (personal and not self.isolated):
            return None
        return self.project

    def first(self, items: Sequence[T], item_of: Callable[[T], MemoryItem]) -> list[T]:
        """`items` with those of the chat's project before the global ones, each group in its
        order (`item_of` gives each one's memory)."""
        return sorted(items, key=lambda x: item_of(x).project != self.project)


EVERYWHERE = MemoryScope()
"""The scope of a chat outside every project: global memories only."""
