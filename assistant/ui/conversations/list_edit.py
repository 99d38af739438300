"""An edit the conversation list asks for: rename, pin or unpin, archive or unarchive, move to a
project, delete. The list shows it at once (`row`); the worker writes it off the GUI thread, in
the order asked with the other writes to conversations, and answers whether it could."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from assistant.memory import ConversationInfo
from assistant.memory.conversation_file import clean_title


@dataclass(frozen=True, eq=False)  # two edits asked alike are still two edits
class ListEdit:
    """What to change in the conversations `ids`: their `title`, their `pinned` or `archived`
    flag, their project (`moves` them to `project`, None: to none), or `deletes` them."""

    ids: tuple[str, ...]
    title: str | None = None
    pinned: bool | None = None
    archived: bool | None = None
    moves: bool = False
    project: str | None = None
    deletes: bool = False

    @property
    def what(self) -> str:
        """The edit in a word, for a message ("Could not rename the conversation")."""
        if self.deletes:
            return "delete"
        if self.title is not None:
            return "rename"
        if self.moves:
            return "move"
        if self.pinned is not None:
            return "pin" if self.pinned else "unpin"
        return "archive" if self.archived else "unarchive"

    def row(self, info: ConversationInfo) -> ConversationInfo | None:
        """A listed conversation as the edit leaves it (None: deleted)."""
        if info.id not in self.ids:
            return info
        if self.deletes:
            return None
        changes: dict[str, Any] = {}
        if self.title is not None:
            changes["title"] = clean_title(self.title)
        if self.pinned is not None:
            changes["pinned"] = self.pinned
        if self.archived is not None:
            changes["archived"] = self.archived
        if self.moves and not info.temporary:  # a temporary chat stays outside every project
            changes["project"] = self.project
        return dataclasses.replace(info, **changes)
