"""The conversation listing: a cached summary of each conversation file, kept in `index.json`.

An entry (title, times, counts, the end of the chosen branch) is valid while its file's size
and mtime are unchanged, so listing the conversations reads only the files that changed. The
cache is derived: a missing, stale or unreadable `index.json` is rebuilt from the files.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from assistant.errors import StorageError
from assistant.fileio import atomic_write_json
from assistant.memory.conversation_file import Conversation, is_valid_id

log = logging.getLogger(__name__)

INDEX_VERSION = 5  # 2: entries say do_not_remember; 3: how many records were unread; 4: flags;
# 5: the project
INDEX_NAME = "index.json"


@dataclass(frozen=True)
class ConversationInfo:
    """What the conversation list shows."""

    id: str
    title: str
    created_at: str
    updated_at: str
    message_count: int
    temporary: bool
    do_not_remember: bool = False
    unread: int = 0  # records this version cannot read, kept in the file
    pinned: bool = False
    archived: bool = False
    project: str | None = None

    @property
    def empty(self) -> bool:
        """Whether it holds nothing at all: no message, nothing this version cannot read."""
        return self.message_count == 0 and self.unread == 0


@dataclass(frozen=True)
class ListingEntry:
    """A cached summary of one conversation file, valid while its size and mtime are unchanged."""

    size: int
    mtime_ns: int
    title: str
    created_at: str
    updated_at: str
    message_count: int
    temporary: bool
    last_message_id: str | None
    do_not_remember: bool = False
    unread: int = 0
    pinned: bool = False
    archived: bool = False
    project: str | None = None

    def info(self, conversation_id: str) -> ConversationInfo:
        """The listing entry."""
        return ConversationInfo(
            conversation_id,
            self.title,
            self.created_at,
            self.updated_at,
            self.message_count,
            self.temporary,
            self.do_not_remember,
            self.unread,
            self.pinned,
            self.archived,
            self.project,
        )

    def matches(self, st: os.stat_result) -> bool:
        """Whether the file is unchanged since this entry was made."""
        return (self.size, self.mtime_ns) == (st.st_size, st.st_mtime_ns)

    @classmethod
    def of(cls, conversation: Conversation, st: os.stat_result) -> ListingEntry:
        """The entry of a conversation just read from a file with this stat."""
        messages = conversation.messages
        return cls(
            st.st_size,
            st.st_mtime_ns,
            conversation.title,
            conversation.created_at,
            conversation.updated_at,
            len(messages),
            conversation.temporary,
            branch[-1].id if (branch := conversation.branch()) else None,
            conversation.do_not_remember,
            conversation.unread,
            conversation.pinned,
            conversation.archived,
            conversation.project,
        )

    @classmethod
    def from_json(cls, raw: object) -> ListingEntry:
        """Parse a cached entry, raising ValueError if it is not exactly one."""
        if not isinstance(raw, dict) or set(raw) != {f.name for f in fields(cls)}:
            raise ValueError("an index entry has the wrong fields")
        entry = cls(**raw)
        for name, kind in _ENTRY_TYPES.items():
            if not isinstance(getattr(entry, name), kind):
                raise ValueError(f"an index entry has a bad {name!r}")
        return entry


_ENTRY_TYPES: dict[str, type | tuple[type, ...]] = {
    "size": int,
    "mtime_ns": int,
    "title": str,
    "created_at": str,
    "updated_at": str,
    "message_count": int,
    "temporary": bool,
    "last_message_id": (str, type(None)),
    "do_not_remember": bool,
    "unread": int,
    "pinned": bool,
    "archived": bool,
    "project": (str, type(None)),
}


class Listing:
    """The entries of the conversations in a directory, by id; not thread-safe (the store
    holds its lock). Changes are saved by `save`, only if there are any."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / INDEX_NAME
        self._dirty = False
        self.problem: str | None = None  # why the cache on disk could not be used, if damaged
        self.entries: dict[str, ListingEntry] = self._load()

    def set(self, conversation_id: str, entry: ListingEntry) -> None:
        """Record a conversation's entry."""
        if self.entries.get(conversation_id) != entry:
            self.entries[conversation_id] = entry
            self._dirty = True

    def forget(self, conversation_id: str) -> None:
        """Drop a conversation's entry (its file is gone)."""
        if self.entries.pop(conversation_id, None) is not None:
            self._dirty = True

    def infos(self) -> list[ConversationInfo]:
        """Every conversation, most recently active first."""
        ordered = sorted(
            self.entries.items(),
            key=lambda item: (item[1].updated_at, item[1].created_at, item[0]),
            reverse=True,
        )
        return [entry.info(cid) for cid, entry in ordered]

    def _load(self) -> dict[str, ListingEntry]:
        try:
            text = self.path.read_text(encoding="utf-8")
            raw = json.loads(text) if text.strip() else None
            if not isinstance(raw, dict):
                raise ValueError("it is empty" if raw is None else "not a JSON object")
            if raw.get("version") != INDEX_VERSION and isinstance(raw.get("version"), int):
                log.info("rebuilding the conversation index of version %s", raw["version"])
                self._dirty = True  # of another version: rebuilt quietly
                return {}
            entries = raw.get("conversations")
            if not isinstance(entries, dict):
                raise ValueError("no 'conversations' object")
            return {
                cid: ListingEntry.from_json(entry)
                for cid, entry in entries.items()
                if is_valid_id(cid)
            }
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError) as exc:
            self.problem = (
                f"The conversation list's cache {INDEX_NAME} was unreadable "
                f"({exc}); rebuilt it from the conversation files."
            )
            log.warning("%s", self.problem)
            self._dirty = True
            return {}

    def save(self) -> None:
        """Write the cache if it changed; a failure is logged (the next run rebuilds it)."""
        if not self._dirty:
            return
        doc = {
            "version": INDEX_VERSION,
            "conversations": {cid: asdict(entry) for cid, entry in self.entries.items()},
        }
        try:
            atomic_write_json(self.path, doc)
        except (OSError, StorageError) as exc:  # only a cache: the next run rebuilds it
            log.warning("could not save the conversation index: %s", exc)
            return
        self._dirty = False
