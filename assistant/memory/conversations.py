"""Conversation memory: the store of conversation files, which keeps its listing
(`conversation_listing`) and its search index (`message_index`) up to date with them
(`conversation_scan`).

Each conversation is one JSON Lines file (`conversation_file`): writes append a record, fsynced;
a new conversation is created whole or not at all. Files changed elsewhere are read again when
listed or loaded. Before a search, only the write marker (`write_marker`, one stat) is checked:
every store announces its writes there, so a search sees those of any other store at once,
and a file edited by hand at the next listing.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from assistant import paths
from assistant.errors import StorageError
from assistant.fileio import create_new, make_dir, remove_file, storage_error
from assistant.memory import jsonl, message_index_cache
from assistant.memory.conversation_file import (
    Conversation,
    clean_title,
    file_record,
    is_valid_id,
)
from assistant.memory.conversation_listing import ConversationInfo, Listing, ListingEntry
from assistant.memory.conversation_scan import ConversationNotFoundError, Scanner
from assistant.memory.embedding import Embedder
from assistant.memory.message_context import contexts_in
from assistant.memory.message_index import ConversationHit, MessageIndex
from assistant.memory.messages import (
    AttachedFile,
    Message,
    Role,
    check_messages,
    tool_call,
)
from assistant.memory.pending import Answer, PendingChange
from assistant.memory.ranking import SearchConfig
from assistant.memory.reply_stats import ReplyStats
from assistant.memory.subscribers import Subscribers
from assistant.memory.write_marker import WriteMarker
from assistant.model_options import ModelOptions
from assistant.timestamps import is_timestamp, stamp

DEFAULT_TITLE = "New conversation"
WRITES_NAME = ".writes"  # the directory's WriteMarker


class ConversationExistsError(StorageError):
    """A conversation with this id is already in the store; nothing was written."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"There is already a conversation with id {conversation_id!r}.")
        self.conversation_id = conversation_id


FILES_FOR_CONTEXTS = 16  # conversations read for memories' contexts before the index is built


@dataclass(frozen=True)
class ConversationWrite:
    """One change to a conversation file, as `subscribe_writes` callbacks hear it."""

    conversation_id: str
    record: Mapping[str, Any] | None  # the record appended; None: the file was made or removed


def new_conversation(
    title: str = DEFAULT_TITLE, temporary: bool = False, project: str | None = None
) -> Conversation:
    """A new, empty conversation, not saved yet: its id and time are chosen now, without any
    I/O, and `ConversationStore.save_new` saves it (so the window shows a new chat at once and
    has it saved off the GUI thread). A temporary chat is in no project."""
    now = stamp()
    project = None if temporary else project
    return Conversation(
        uuid.uuid4().hex,
        clean_title(title),
        now,
        now,
        temporary,
        "",
        None,
        [],
        None,
        project=project,
    )


class ConversationStore:
    """The conversations in `<data dir>/conversations/`; thread-safe.

    The listing comes from `index.json`, a derived cache of each file's title, counts and stat;
    only files whose size or mtime changed are read again. The search index is built on the
    first search and kept up to date afterwards. With an `embedder`, search also ranks by
    meaning the messages that have vectors (see `embed_pending`).
    """

    def __init__(
        self, root: Path, embedder: Embedder | None = None, config: SearchConfig | None = None
    ) -> None:
        self.directory = paths.conversations_dir(root)
        make_dir(self.directory)
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._subscribers: Subscribers[str] = Subscribers("conversation")
        self._writes: Subscribers[ConversationWrite] = Subscribers("conversation write")
        self._listing = Listing(self.directory)
        if self._listing.problem is not None:
            self.warnings.append(self._listing.problem)
        self._marker = WriteMarker(self.directory / WRITES_NAME)
        self._index = MessageIndex(
            self.directory,
            embedder,
            config or SearchConfig(),
            lock=self._lock,
            sync=self._sync_index,
            title_of=lambda cid: self._listing.entries[cid].title,
        )
        self._scan = Scanner(self.directory, self._listing, self._index, self.warnings)

    @classmethod
    def open(
        cls, root: Path, embedder: Embedder | None = None, config: SearchConfig | None = None
    ) -> ConversationStore:
        """The conversations of the data dir `root`, as `ConversationStore(root, ...)` opens
        them (the design names both)."""
        return cls(root, embedder, config)

    def create(
        self, title: str = DEFAULT_TITLE, temporary: bool = False, project: str | None = None
    ) -> ConversationInfo:
        """Start a new, empty conversation (in `project`, if given: a temporary chat is in
        none)."""
        return self.save_new(new_conversation(title, temporary, project))

    def save_new(self, conversation: Conversation) -> ConversationInfo:
        """Save a conversation made by `new_conversation` (ConversationExistsError if there is
        one with its id); its file starts with its header alone."""
        cid, title, now = conversation.id, conversation.title, conversation.created_at
        temporary, project = conversation.temporary, conversation.project
        meta: dict[str, Any] = {"id": cid, "title": title, "created_at": now}
        meta["temporary"] = temporary
        if project is not None:
            meta["project"] = project
        path = self._scan.path(cid)
        with self._lock:
            try:  # whole or not at all: a crash must not leave a file without its header
                create_new(path, jsonl.encode(file_record("meta", meta)))
                st = path.stat()
            except FileExistsError:
                raise ConversationExistsError(cid) from None
            except OSError as exc:
                raise storage_error("save the new conversation to", path, exc) from exc
            self._marker.announce()
            entry = ListingEntry(
                st.st_size, st.st_mtime_ns, title, now, now, 0, temporary, None, project=project
            )
            self._listing.set(cid, entry)
        self._changed(cid, None)
        return entry.info(cid)

    def import_conversation(
        self,
        conversation_id: str,
        title: str,
        created_at: str,
        messages: Sequence[Message],
        *,
        summary: str = "",
        summary_upto: str | None = None,
        temporary: bool = False,
        do_not_remember: bool = False,
        pinned: bool = False,
        archived: bool = False,
        project: str | None = None,
    ) -> ConversationInfo:
        """Create a conversation with this id, metadata and messages in one atomic write.

        The messages keep their ids, parents, timestamps, roles, tool calls and memory ids.
        `do_not_remember` marks a conversation the curator must never learn from. The search
        index is built first if it was not (from its cache, if any), so that it takes the
        conversation in as it is written, and is saved with the store.
        Raises ValueError (see `check_messages`) for invalid input and ConversationExistsError
        if the id is taken; then nothing is written. A crash leaves the whole file or none.
        """
        if not is_valid_id(conversation_id):
            raise ValueError(f"id: {conversation_id!r} cannot name a conversation")
        if self._scan.path(conversation_id).exists():  # before writing anything (a re-import)
            raise ConversationExistsError(conversation_id)
        title = clean_title(title)
        if not is_timestamp(created_at):
            raise ValueError("created_at: not an ISO 8601 timestamp")
        check_messages(messages, summary_upto)
        meta: dict[str, Any] = {"id": conversation_id, "title": title, "created_at": created_at}
        meta["temporary"] = temporary
        if do_not_remember:
            meta["do_not_remember"] = True
        if project is not None and not temporary:
            meta["project"] = project
        records = [file_record("meta", meta)]
        records += [file_record("message", m.to_json()) for m in messages]
        if summary:
            records.append(
                file_record("update", {"summary": summary, "summary_upto": summary_upto})
            )
        if pinned or archived:
            records.append(file_record("update", {"pinned": pinned, "archived": archived}))
        data = b"".join(jsonl.encode(r) for r in records)
        path = self._scan.path(conversation_id)
        with self._lock:
            if not self._index.built:  # index as the import writes: the first search is quick
                self._sync_index()
            try:
                create_new(path, data)
                st = path.stat()
            except FileExistsError:
                raise ConversationExistsError(conversation_id) from None
            except OSError as exc:
                raise StorageError(f"Could not save conversation to {path}: {exc}") from exc
            self._marker.announce()
            entry = ListingEntry(
                st.st_size,
                st.st_mtime_ns,
                title,
                created_at,
                messages[-1].created_at if messages else created_at,
                len(messages),
                temporary,
                messages[-1].id if messages else None,
                do_not_remember,
                pinned=pinned,
                archived=archived,
                project=meta.get("project"),
            )
            self._listing.set(conversation_id, entry)
            if temporary:
                self._index.replace(conversation_id, [])
            else:
                self._index.replace(conversation_id, messages, summary)
        self._changed(conversation_id, None)
        return entry.info(conversation_id)

    def exists(self, conversation_id: str) -> bool:
        """Whether a conversation with this id is in the store."""
        return is_valid_id(conversation_id) and self._scan.path(conversation_id).exists()

    def is_empty(self, conversation_id: str) -> bool:
        """Whether a conversation holds nothing: no message, nor anything this version cannot
        read (False if there is no such conversation)."""
        with self._lock:
            try:
                return self._scan.fresh_entry(conversation_id).info(conversation_id).empty
            except StorageError:
                return False

    def delete_if_empty(self, conversation_id: str) -> bool:
        """Delete a conversation if it holds nothing (`is_empty`); whether it did."""
        with self._lock:
            if not self.is_empty(conversation_id):
                return False
            self.delete(conversation_id)
        return True

    def load(self, conversation_id: str) -> Conversation:
        """Read a conversation with all its messages."""
        with self._lock:
            if not self._scan.path(conversation_id).exists():
                self._scan.forget(conversation_id)
                raise ConversationNotFoundError(conversation_id)
            return self._scan.rescan(conversation_id)

    def append(
        self,
        conversation_id: str,
        role: Role,
        content: str,
        *,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        tool_call_id: str | None = None,
        name: str | None = None,
        memory_ids: Sequence[str] | None = None,
        cut_off: bool = False,
        stop_reason: str | None = None,
        ok: bool = True,
        attachments: Sequence[AttachedFile] = (),
        stats: ReplyStats | None = None,
    ) -> Message:
        """Durably add a message at the end of the chosen branch and return it.

        `cut_off` marks a reply that stopped at the length limit; `stop_reason` one that ended
        early otherwise ("stopped" by the user, "failed"); `ok=False` a tool result that is an
        error; `stats` are a reply's model, token counts and speed; `attachments` the files a
        user message carries (copied into the data dir).
        """
        calls = tuple(tool_call(c) for c in tool_calls or ())
        with self._lock:
            entry = self._scan.fresh_entry(conversation_id)
            message = Message(
                id=uuid.uuid4().hex,
                parent_id=entry.last_message_id,
                role=role,
                content=content,
                created_at=stamp(),
                tool_calls=calls,
                tool_call_id=tool_call_id,
                name=name,
                memory_ids=tuple(memory_ids or ()),
                cut_off=cut_off,
                stop_reason=stop_reason,
                ok=ok,
                attachments=tuple(attachments),
                stats=stats,
            )
            message.check()
            record = file_record("message", message.to_json())
            st = self._write(conversation_id, record)
            self._listing.set(
                conversation_id,
                replace(
                    entry,
                    size=st.st_size,
                    mtime_ns=st.st_mtime_ns,
                    updated_at=message.created_at,
                    message_count=entry.message_count + 1,
                    last_message_id=message.id,
                ),
            )
            if not entry.temporary:
                self._index.add(conversation_id, message)
        self._changed(conversation_id, record)
        return message

    def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title."""
        title = clean_title(title)
        self._update(conversation_id, {"title": title}, title=title)

    def set_flags(
        self, conversation_id: str, *, pinned: bool | None = None, archived: bool | None = None
    ) -> None:
        """Pin or unpin a conversation (kept at the top of the list), archive or unarchive it
        (out of the list until archived ones are shown); None leaves a flag as it is."""
        changes = {
            name: value
            for name, value in (("pinned", pinned), ("archived", archived))
            if value is not None
        }
        if changes:
            self._update(conversation_id, changes, **changes)

    def note_failure(self, conversation_id: str, message_id: str, error: str) -> None:
        """Note why the reply to a user message failed (shown under it while it is unanswered,
        also after a restart)."""
        self._update(conversation_id, {"failed": {"message": message_id, "error": error}})

    def add_pending(self, conversation_id: str, change: PendingChange) -> None:
        """Keep a change to memory that waits for the user, with the conversation."""
        self._append(conversation_id, file_record("pending", change.to_json()))

    def answer_pending(self, conversation_id: str, pending_id: str, answer: Answer) -> None:
        """Record the user's answer to a pending change: it waits no more."""
        self._append(conversation_id, file_record("answered", {"id": pending_id, "answer": answer}))

    def set_model(
        self, conversation_id: str, model: str | None, options: ModelOptions | None = None
    ) -> None:
        """Choose the chat model of a conversation (None: the settings' one) and its own
        options over the model's (None: none)."""
        body = {"model": model, "options": (options or ModelOptions()).to_json()}
        self._update(conversation_id, body)

    def set_project(self, conversation_id: str, project: str | None) -> None:
        """Move a conversation into a project (its id), or out of any (None). ValueError for a
        temporary chat: it stays outside every project."""
        with self._lock:
            entry = self._scan.fresh_entry(conversation_id)
        if entry.project == project:
            return
        if entry.temporary and project is not None:
            raise ValueError("A temporary chat stays outside every project.")
        self._update(conversation_id, {"project": project}, project=project)

    def _update(self, conversation_id: str, body: dict[str, Any], **listed: Any) -> None:
        """Append an update record, and note it in the listing with `listed`'s changes."""
        self._append(conversation_id, file_record("update", body), **listed)

    def _append(self, conversation_id: str, record: dict[str, Any], **listed: Any) -> None:
        """Append a record, and note it in the listing with `listed`'s changes."""
        with self._lock:
            entry = self._scan.fresh_entry(conversation_id)
            st = self._write(conversation_id, record)
            self._listing.set(
                conversation_id,
                replace(entry, size=st.st_size, mtime_ns=st.st_mtime_ns, **listed),
            )
        self._changed(conversation_id, record)

    def set_leaf(self, conversation_id: str, message_id: str | None) -> None:
        """Choose the branch that ends at `message_id` (None: before the first message).

        It is the branch shown, and the next message is appended to it; the others are kept.
        """
        with self._lock:
            conversation = self.load(conversation_id)
            if message_id is not None and all(m.id != message_id for m in conversation.messages):
                raise ValueError(f"conversation {conversation_id!r} has no message {message_id!r}")
            entry = self._listing.entries[conversation_id]
            record = file_record("update", {"leaf": message_id})
            st = self._write(conversation_id, record)
            self._listing.set(
                conversation_id,
                replace(
                    entry, size=st.st_size, mtime_ns=st.st_mtime_ns, last_message_id=message_id
                ),
            )
        self._changed(conversation_id, record)

    def set_summary(self, conversation_id: str, summary: str, upto_message_id: str) -> None:
        """Record the rolling summary of the messages up to and including `upto_message_id`."""
        with self._lock:
            conversation = self.load(conversation_id)
            if all(m.id != upto_message_id for m in conversation.messages):
                raise ValueError(
                    f"conversation {conversation_id!r} has no message {upto_message_id!r}"
                )
            entry = self._listing.entries[conversation_id]
            update = {"summary": summary, "summary_upto": upto_message_id}
            record = file_record("update", update)
            st = self._write(conversation_id, record)
            self._listing.set(
                conversation_id, replace(entry, size=st.st_size, mtime_ns=st.st_mtime_ns)
            )
            if not entry.temporary:
                self._index.set_summary(conversation_id, summary)
        self._changed(conversation_id, record)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation's file."""
        with self._lock:
            try:
                remove_file(self._scan.path(conversation_id))
            except FileNotFoundError:
                self._scan.forget(conversation_id)
                raise ConversationNotFoundError(conversation_id) from None
            except OSError as exc:
                raise StorageError(f"Could not delete conversation: {exc}") from exc
            self._marker.announce()
            self._scan.forget(conversation_id)
        self._changed(conversation_id, None)

    def search(
        self, query: str, k: int = 10, *, now: datetime | None = None
    ) -> list[ConversationHit]:
        """The `k` best-matching user and assistant messages of non-temporary conversations
        (see `MessageIndex.search`; `now` resolves "last May" and the like)."""
        return self._index.search(query, k, now=now)

    def message_contexts(self, messages: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """For each of these messages (conversation id, message id) that search finds, its
        text after that of the message before it (see `message_context.context_of`): from the
        search index once it is built or for many conversations (it is read from its cache),
        else from the files of their conversations (a few need not build the index)."""
        wanted: dict[str, set[str]] = {}
        for cid, mid in messages:
            wanted.setdefault(cid, set()).add(mid)
        if self._index.built or len(wanted) > FILES_FOR_CONTEXTS:
            return self._index.contexts(messages)
        out: dict[tuple[str, str], str] = {}
        for cid, ids in wanted.items():
            try:
                conversation = self.load(cid)
            except StorageError:  # gone, or unreadable: no contexts from it
                continue
            if not conversation.temporary:
                found = contexts_in(conversation.messages, ids)
                out.update(((cid, mid), text) for mid, text in found.items())
        return out

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Search by meaning with this embedder's vectors from now on (None: keywords only)."""
        self._index.set_embedder(embedder)

    def set_message_keys(self, changes: Mapping[tuple[str, str], Sequence[str]]) -> None:
        """Find these messages, by (conversation id, message id), also by these texts (the
        memories extracted from them), instead of the texts they had (see `message_keys`)."""
        self._index.set_keys(changes)

    def pending_embeddings(self) -> int:
        """How many searched messages have no vector of the current embedder."""
        return self._index.pending_embeddings()

    def embed_pending(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> int:
        """Embed the searched messages that have no vector, in batches; returns how many
        (resumable; see `MessageIndex.embed_pending`)."""
        return self._index.embed_pending(progress, cancel)

    def close(self) -> None:
        """Save what is not saved yet (the listing, the vector cache, the search index)."""
        with self._lock:
            self._listing.save()
            self._index.close()
            if self._index.built and self._index.dirty:
                entries = self._listing.entries.items()
                files = {cid: (e.size, e.mtime_ns) for cid, e in entries}
                message_index_cache.save(self.directory, self._index.snapshot(files))
                self._index.dirty = False

    def _sync_index(self) -> None:
        """Bring the search index up to date with the files: built from all of them on first
        use, then from those that changed when a writer has announced a write since."""
        if self._index.built and not self._marker.changed():
            return
        stamp = self._marker.stamp()
        if not self._index.built:
            self._index.build()
            cached = self._restore_index()
            for cid in list(self._listing.entries):
                if cid not in cached:
                    self._scan.try_rescan(cid)
        self._scan.refresh()
        self._marker.caught_up(stamp)

    def _restore_index(self) -> set[str]:
        """Fill the new index from its cache, keeping the conversations whose files have not
        changed since (returned); the others are read again."""
        state = message_index_cache.load(self.directory)
        if state is None or not self._index.restore(state):
            return set()
        fresh = set()
        for cid, stat in state.files.items():
            entry = self._listing.entries.get(cid)
            if entry is not None and (entry.size, entry.mtime_ns) == stat:
                fresh.add(cid)
        for cid in set(state.order) - fresh:
            self._index.remove(cid)
        return fresh

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(conversation_id)` after each change; returns the unsubscribe function."""
        return self._subscribers.add(callback)

    def subscribe_writes(self, callback: Callable[[ConversationWrite], None]) -> Callable[[], None]:
        """Call `callback(write)` after each change, with the record written (if one was
        appended); returns the unsubscribe function."""
        return self._writes.add(callback)

    def _changed(self, conversation_id: str, record: Mapping[str, Any] | None) -> None:
        """Tell the subscribers (outside the lock, on the writer's thread)."""
        self._writes.notify(ConversationWrite(conversation_id, record))
        self._subscribers.notify(conversation_id)

    def all(self) -> list[ConversationInfo]:
        """All conversations, most recently active first."""
        with self._lock:
            stamp = self._marker.stamp()
            self._scan.refresh()
            if self._index.built:
                self._marker.caught_up(stamp)
            return self._listing.infos()

    def _write(self, conversation_id: str, record: dict[str, Any]) -> os.stat_result:
        """Durably append a record; return the file's new stat."""
        path = self._scan.path(conversation_id)
        try:
            appender = jsonl.Appender(path)
            try:
                appender.append(record)
            finally:
                appender.close()
            st = path.stat()
        except OSError as exc:
            raise StorageError(f"Could not save conversation to {path}: {exc}") from exc
        self._marker.announce()
        return st
