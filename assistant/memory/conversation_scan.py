"""Keeping a conversation store's listing and search index in step with its files: a file
that changed on disk (its size or mtime) is read again, renewing its listing entry and (if it
changed) its search documents; those of a file that is gone are dropped.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from assistant.errors import StorageError
from assistant.memory import conversation_file
from assistant.memory.conversation_file import Conversation, is_valid_id
from assistant.memory.conversation_listing import Listing, ListingEntry

if TYPE_CHECKING:  # not at run time: `ConversationNotFoundError` alone loads no numpy
    from assistant.memory.message_index import MessageIndex

log = logging.getLogger(__name__)


class ConversationNotFoundError(StorageError, KeyError):
    """No conversation has this id (also a KeyError)."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"There is no conversation with id {conversation_id!r}.")
        self.conversation_id = conversation_id

    def __str__(self) -> str:
        return str(self.args[0])


class Scanner:
    """Reads the files of a store's directory into its listing and search index (the caller
    holds the store's lock); what it cannot read goes to `warnings` (the store's list)."""

    def __init__(
        self, directory: Path, listing: Listing, index: MessageIndex, warnings: list[str]
    ) -> None:
        self.directory = directory
        self.listing = listing
        self.index = index
        self.warnings = warnings

    def path(self, conversation_id: str) -> Path:
        """A conversation's file (ConversationNotFoundError if the id cannot name one)."""
        if not is_valid_id(conversation_id):
            raise ConversationNotFoundError(conversation_id)
        return self.directory / f"{conversation_id}.jsonl"

    def fresh_entry(self, conversation_id: str) -> ListingEntry:
        """The conversation's entry, read again if its file changed."""
        try:
            st = self.path(conversation_id).stat()
        except FileNotFoundError:
            self.forget(conversation_id)
            raise ConversationNotFoundError(conversation_id) from None
        entry = self.listing.entries.get(conversation_id)
        if entry is None or not entry.matches(st):
            self.rescan(conversation_id)
            entry = self.listing.entries[conversation_id]
        return entry

    def rescan(self, conversation_id: str) -> Conversation:
        """Read a file, renewing its cache entry and (if it changed) its search documents."""
        path = self.path(conversation_id)
        known = self.listing.entries.get(conversation_id)
        try:
            conversation, warnings = conversation_file.read_conversation(
                path, None if known is None else known.size
            )
            st = path.stat()
        except FileNotFoundError:
            self.forget(conversation_id)
            raise ConversationNotFoundError(conversation_id) from None
        except OSError as exc:
            raise StorageError(f"Could not read conversation {path}: {exc}") from exc
        if known is not None and st.st_size < known.size:
            lost = known.message_count - len(conversation.messages)
            if lost > 0:
                warnings.append(
                    f"Conversation {conversation.title!r}: {lost} of its {known.message_count} "
                    "messages are missing: its file is shorter than when it was last saved."
                )
        self.warnings += [w for w in warnings if w not in self.warnings]
        entry = ListingEntry.of(conversation, st)
        changed = self.listing.entries.get(conversation_id) != entry
        self.listing.set(conversation_id, entry)
        if changed or not self.index.has(conversation_id):
            if conversation.temporary:
                self.index.replace(conversation_id, [])
            else:
                self.index.replace(conversation_id, conversation.messages, conversation.summary)
        return conversation

    def try_rescan(self, conversation_id: str) -> bool:
        """Rescan a file; False (with a warning if it exists) when it cannot be read."""
        try:
            self.rescan(conversation_id)
        except ConversationNotFoundError:
            return False
        except StorageError as exc:  # one unreadable file must not hide the others
            log.warning("%s", exc)
            if str(exc) not in self.warnings:
                self.warnings.append(str(exc))
            return False
        return True

    def refresh(self) -> None:
        """Bring the cache up to date with the directory and save it if anything changed."""
        seen: set[str] = set()
        with os.scandir(self.directory) as it:
            for item in it:
                cid, ext = os.path.splitext(item.name)
                if ext != ".jsonl" or not is_valid_id(cid):
                    continue
                try:
                    st = item.stat()
                except FileNotFoundError:
                    continue
                entry = self.listing.entries.get(cid)
                if (entry is None or not entry.matches(st)) and not self.try_rescan(cid):
                    continue
                seen.add(cid)
        for cid in set(self.listing.entries) - seen:
            self.forget(cid)
        self.listing.save()

    def forget(self, conversation_id: str) -> None:
        """Drop a conversation from the listing and the search index."""
        self.listing.forget(conversation_id)
        self.index.remove(conversation_id)
