"""Conversation memory: one JSON Lines file per conversation, a cached listing, and search.

Search is hybrid, as in the semantic memory: BM25 over word stems and, once messages have
vectors (`embed_pending`, in the background), cosine similarity, fused (see `ranking`). Each
user or assistant message is scored with the one before it in its conversation as context
(`SearchConfig.keyword_context`; `context_weight` does the same for the meaning score), since a
reply ("Yes, a sunrise") often means what the message it answers says. A query that names a
period ("in May 2023", "last week") favours the messages written in it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assistant import paths
from assistant.errors import AssistantError, StorageError
from assistant.fileio import (
    atomic_write_json,
    fsync_dir,
    make_dir,
    refuse_newer,
    storage_error,
)
from assistant.json_fields import optional_str, string
from assistant.memory import jsonl
from assistant.memory.bm25 import BM25Index
from assistant.memory.embedding import Embedder
from assistant.memory.message_vectors import MessageKey, MessageVectors
from assistant.memory.messages import (
    MESSAGE_OVERHEAD_TOKENS,
    Message,
    Role,
    check_messages,
    estimate_tokens,
    tool_call,
)
from assistant.memory.ranking import SearchConfig, fused_relevance
from assistant.memory.subscribers import Subscribers
from assistant.memory.text import is_informative, query_terms, terms, tokenize
from assistant.memory.when import time_span
from assistant.timestamps import is_timestamp, stamp
from assistant.timestamps import parse as parse_time

log = logging.getLogger(__name__)

RECORD_VERSION = 1
INDEX_VERSION = 2  # 2: entries say do_not_remember
INDEX_NAME = "index.json"
DEFAULT_TITLE = "New conversation"
RECOVERED_TITLE = "Recovered conversation"
SNIPPET_CHARS = 160

SEARCHED_ROLES = ("user", "assistant")
EMBED_BATCH = 64
SAVE_EVERY = 2048  # embedded messages between cache saves while embedding

# Ids name files, so they are restricted to characters that are safe in a file name.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


class ConversationNotFoundError(StorageError, KeyError):
    """No conversation has this id (also a KeyError)."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"There is no conversation with id {conversation_id!r}.")
        self.conversation_id = conversation_id

    def __str__(self) -> str:
        return str(self.args[0])


class ConversationExistsError(StorageError):
    """A conversation with this id is already in the store; nothing was written."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"There is already a conversation with id {conversation_id!r}.")
        self.conversation_id = conversation_id


def is_valid_id(conversation_id: str) -> bool:
    """Whether `conversation_id` can name a conversation file (letters, digits, '-', '_')."""
    return _ID.fullmatch(conversation_id) is not None


@dataclass(frozen=True)
class PromptWindow:
    """What of a conversation goes into a prompt, and what fell out unsummarized."""

    summary: str
    messages: list[Message]
    overflow: list[Message]
    tokens: int


@dataclass(frozen=True)
class Conversation:
    """A conversation as loaded from its file."""

    id: str
    title: str
    created_at: str
    updated_at: str
    temporary: bool
    summary: str
    summary_upto: str | None
    messages: list[Message]  # every message of every branch, in the order they were written
    leaf_id: str | None  # the end of the branch shown and continued (None: before the first)

    def branch(self) -> list[Message]:
        """The messages of the chosen branch, oldest first: the leaf and its ancestors."""
        leaf = self.leaf_id
        by_id = {m.id: m for m in self.messages}
        path: list[Message] = []
        while leaf is not None and leaf in by_id:
            path.append(by_id[leaf])
            leaf = by_id[leaf].parent_id
        path.reverse()
        return path

    def versions(self) -> dict[str, list[Message]]:
        """For each message but tool results: it and its siblings, oldest first (one pass)."""
        children: dict[str | None, list[Message]] = {}
        for message in self.messages:
            if message.role != "tool":
                children.setdefault(message.parent_id, []).append(message)
        return {m.id: group for group in children.values() for m in group}

    def newest_leaf_under(self, message_id: str) -> str:
        """The newest message on a branch through `message_id` (it, if nothing follows it)."""
        below = {message_id}
        leaf = message_id
        for message in self.messages:
            if message.parent_id in below:
                below.add(message.id)
                leaf = message.id
        return leaf

    do_not_remember: bool = False  # imported so: the curator never learns from it

    def prompt_messages(self, budget_tokens: int) -> PromptWindow:
        """The summary and the newest messages after `summary_upto` that fit the budget.

        Tool exchanges (an assistant message with tool calls and its tool results) are kept or
        dropped whole, and the newest exchange is always kept. Older unsummarized messages that
        do not fit are returned as `overflow`, to be folded into the summary.
        """
        start = 0
        branch = self.branch()
        if self.summary_upto is not None:
            ids = [m.id for m in branch]
            if self.summary_upto in ids:
                start = ids.index(self.summary_upto) + 1
        pending = branch[start:]
        groups: list[list[Message]] = []
        for message in pending:
            if message.role == "tool" and groups:
                groups[-1].append(message)
            else:
                groups.append([message])
        used = estimate_tokens(self.summary) + MESSAGE_OVERHEAD_TOKENS if self.summary else 0
        kept: list[Message] = []
        for group in reversed(groups):
            cost = sum(m.estimated_tokens() for m in group)
            # Tool results whose call was summarized away cannot open a window.
            if group[0].role == "tool" or (kept and used + cost > budget_tokens):
                break
            kept[:0] = group
            used += cost
        return PromptWindow(self.summary, kept, pending[: len(pending) - len(kept)], used)


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


@dataclass(frozen=True)
class ConversationHit:
    """A message that matched a conversation search."""

    conversation_id: str
    message_id: str
    title: str
    snippet: str
    score: float
    created_at: str = ""  # when the message was written (ISO 8601)


@dataclass(frozen=True)
class _SearchArrays:
    """The searched messages in key order: key, row of its vector (-1: none) and the position
    of the message before it (-1: none); and by vector row, the position of its message."""

    keys: npt.NDArray[np.int64]
    rows: npt.NDArray[np.int64]
    prev: npt.NDArray[np.int64]
    position_of_row: npt.NDArray[np.int64]
    position: dict[int, int]  # key -> its place in `keys`

    def appended(self, key: int, row: int, prev_key: int) -> _SearchArrays:
        """With a message of a key above all others (O(n) copies, no Python loop)."""
        place = len(self.keys)
        by_row = self.position_of_row
        if row >= 0:
            grow = max(0, row + 1 - len(by_row))
            by_row = np.concatenate((by_row, np.full(grow, -1, dtype=np.int64)))
            by_row[row] = place
        prev = self.position.get(prev_key, -1)
        self.position[key] = place  # shared: the arrays before this one are dropped
        return _SearchArrays(
            np.append(self.keys, key),
            np.append(self.rows, row),
            np.append(self.prev, prev),
            by_row,
            self.position,
        )

    def placed(self, keys: Sequence[int], rows: Sequence[int]) -> _SearchArrays:
        """With vectors (rows) for the messages of `keys`, in place where it can."""
        by_row = self.position_of_row
        grow = max(rows, default=-1) + 1 - len(by_row)
        if grow > 0:
            by_row = np.concatenate((by_row, np.full(grow, -1, dtype=np.int64)))
        for key, row in zip(keys, rows, strict=True):
            at = self.position.get(key)
            if at is not None:
                self.rows[at] = row
                by_row[row] = at
        return replace(self, position_of_row=by_row)


@dataclass(frozen=True)
class _Entry:
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
        )

    def matches(self, st: os.stat_result) -> bool:
        """Whether the file is unchanged since this entry was made."""
        return (self.size, self.mtime_ns) == (st.st_size, st.st_mtime_ns)

    @classmethod
    def of(cls, conversation: Conversation, st: os.stat_result) -> _Entry:
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
        )

    @classmethod
    def from_json(cls, raw: object) -> _Entry:
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
}


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
        self.config = config or SearchConfig()
        self._embedder = embedder
        self._vectors: MessageVectors | None = None
        self._vectors_loaded = False
        self._prev: dict[int, int] = {}  # key -> key of the message before it, if searched
        self._times: dict[int, str] = {}  # key -> created_at
        self._arrays: _SearchArrays | None = None
        self._pending: set[int] | None = None  # keys without a vector; None: not known yet
        make_dir(self.directory)
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._subscribers: Subscribers[str] = Subscribers("conversation")
        self._index_dirty = False
        self._entries = self._load_index()
        self._search: BM25Index | None = None
        self._docs: dict[int, tuple[str, str, str]] = {}  # key: conversation, message, text
        self._doc_keys: dict[str, list[int]] = {}
        self._next_key = 0

    def create(self, title: str = DEFAULT_TITLE, temporary: bool = False) -> ConversationInfo:
        """Start a new, empty conversation."""
        title = _clean_title(title)
        cid = uuid.uuid4().hex
        now = stamp()
        meta = {"id": cid, "title": title, "created_at": now, "temporary": temporary}
        path = self._path(cid)
        with self._lock:
            try:  # whole or not at all: a crash must not leave a file without its header
                _create_file(path, jsonl.encode(_record("meta", meta)))
                st = path.stat()
            except OSError as exc:
                raise storage_error("save the new conversation to", path, exc) from exc
            entry = _Entry(st.st_size, st.st_mtime_ns, title, now, now, 0, temporary, None)
            self._set_entry(cid, entry)
        self._subscribers.notify(cid)
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
    ) -> ConversationInfo:
        """Create a conversation with this id, metadata and messages in one atomic write.

        The messages keep their ids, parents, timestamps, roles, tool calls and memory ids.
        `do_not_remember` marks a conversation the curator must never learn from.
        Raises ValueError (see `check_messages`) for invalid input and ConversationExistsError
        if the id is taken; then nothing is written. A crash leaves the whole file or none.
        """
        if not is_valid_id(conversation_id):
            raise ValueError(f"id: {conversation_id!r} cannot name a conversation")
        if self._path(conversation_id).exists():  # before writing anything (a re-import)
            raise ConversationExistsError(conversation_id)
        title = _clean_title(title)
        if not is_timestamp(created_at):
            raise ValueError("created_at: not an ISO 8601 timestamp")
        check_messages(messages, summary_upto)
        meta: dict[str, Any] = {"id": conversation_id, "title": title, "created_at": created_at}
        meta["temporary"] = temporary
        if do_not_remember:
            meta["do_not_remember"] = True
        records = [_record("meta", meta)]
        records += [_record("message", m.to_json()) for m in messages]
        if summary:
            records.append(_record("update", {"summary": summary, "summary_upto": summary_upto}))
        data = b"".join(jsonl.encode(r) for r in records)
        path = self._path(conversation_id)
        with self._lock:
            try:
                _create_file(path, data)
                st = path.stat()
            except FileExistsError:
                raise ConversationExistsError(conversation_id) from None
            except OSError as exc:
                raise StorageError(f"Could not save conversation to {path}: {exc}") from exc
            entry = _Entry(
                st.st_size,
                st.st_mtime_ns,
                title,
                created_at,
                messages[-1].created_at if messages else created_at,
                len(messages),
                temporary,
                messages[-1].id if messages else None,
                do_not_remember,
            )
            self._set_entry(conversation_id, entry)
            if self._search is not None:
                self._doc_keys[conversation_id] = []
                if not temporary:
                    for message in messages:
                        self._index_message(self._search, conversation_id, message)
        self._subscribers.notify(conversation_id)
        return entry.info(conversation_id)

    def exists(self, conversation_id: str) -> bool:
        """Whether a conversation with this id is in the store."""
        return is_valid_id(conversation_id) and self._path(conversation_id).exists()

    def load(self, conversation_id: str) -> Conversation:
        """Read a conversation with all its messages."""
        with self._lock:
            if not self._path(conversation_id).exists():
                self._forget(conversation_id)
                raise ConversationNotFoundError(conversation_id)
            return self._rescan(conversation_id)

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
    ) -> Message:
        """Durably add a message at the end of the chosen branch and return it.

        `cut_off` marks a reply that stopped at the length limit; `stop_reason` one that ended
        early otherwise ("stopped" by the user, "failed"); `ok=False` a tool result that is an
        error.
        """
        calls = tuple(tool_call(c) for c in tool_calls or ())
        with self._lock:
            entry = self._fresh_entry(conversation_id)
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
            )
            message.check()
            st = self._write(conversation_id, _record("message", message.to_json()))
            self._set_entry(
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
            if self._search is not None and not entry.temporary:
                self._index_message(self._search, conversation_id, message)
        self._subscribers.notify(conversation_id)
        return message

    def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title."""
        title = _clean_title(title)
        with self._lock:
            entry = self._fresh_entry(conversation_id)
            st = self._write(conversation_id, _record("update", {"title": title}))
            self._set_entry(
                conversation_id,
                replace(entry, size=st.st_size, mtime_ns=st.st_mtime_ns, title=title),
            )
        self._subscribers.notify(conversation_id)

    def set_leaf(self, conversation_id: str, message_id: str | None) -> None:
        """Choose the branch that ends at `message_id` (None: before the first message).

        It is the branch shown, and the next message is appended to it; the others are kept.
        """
        with self._lock:
            conversation = self.load(conversation_id)
            if message_id is not None and all(m.id != message_id for m in conversation.messages):
                raise ValueError(f"conversation {conversation_id!r} has no message {message_id!r}")
            entry = self._entries[conversation_id]
            st = self._write(conversation_id, _record("update", {"leaf": message_id}))
            self._set_entry(
                conversation_id,
                replace(
                    entry, size=st.st_size, mtime_ns=st.st_mtime_ns, last_message_id=message_id
                ),
            )
        self._subscribers.notify(conversation_id)

    def set_summary(self, conversation_id: str, summary: str, upto_message_id: str) -> None:
        """Record the rolling summary of the messages up to and including `upto_message_id`."""
        with self._lock:
            conversation = self.load(conversation_id)
            if all(m.id != upto_message_id for m in conversation.messages):
                raise ValueError(
                    f"conversation {conversation_id!r} has no message {upto_message_id!r}"
                )
            entry = self._entries[conversation_id]
            update = {"summary": summary, "summary_upto": upto_message_id}
            st = self._write(conversation_id, _record("update", update))
            self._set_entry(
                conversation_id, replace(entry, size=st.st_size, mtime_ns=st.st_mtime_ns)
            )
        self._subscribers.notify(conversation_id)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation's file."""
        with self._lock:
            try:
                self._path(conversation_id).unlink()
            except FileNotFoundError:
                self._forget(conversation_id)
                raise ConversationNotFoundError(conversation_id) from None
            except OSError as exc:
                raise StorageError(f"Could not delete conversation: {exc}") from exc
            self._forget(conversation_id)
        self._subscribers.notify(conversation_id)

    def search(self, query: str, k: int = 10) -> list[ConversationHit]:
        """The `k` best-matching user and assistant messages of non-temporary conversations.

        A message qualifies if it (or the message before it) shares a non-stop word with the
        query, or its meaning score reaches `min_similarity`. Scores are 0..1 (see `ranking`).
        """
        tokens, required = query_terms(query)
        if not required or k <= 0:
            return []
        qvec = self._query_vector(query)
        span = time_span(query)
        cfg = self.config
        depth = max(cfg.depth, k)
        with self._lock:
            index = self._ensure_index()
            self._refresh()
            lexical = index.top(tokens, depth, require=required)
            dense = self._dense_top(qvec, depth) if qvec is not None else []
            order = list(dict.fromkeys([key for key, _ in lexical + dense]))
            if not order:
                return []
            row = {key: i for i, key in enumerate(order)}
            keyword_rank = np.zeros(len(order), dtype=np.int64)
            vector_rank = np.zeros(len(order), dtype=np.int64)
            keyword_rank[[row[key] for key, _ in lexical]] = np.arange(1, len(lexical) + 1)
            vector_rank[[row[key] for key, _ in dense]] = np.arange(1, len(dense) + 1)
            keyword, similarity = dict(lexical), dict(dense)
            relevance = fused_relevance(
                np.array([keyword.get(key, 0.0) for key in order]),
                np.array([similarity.get(key, 0.0) for key in order]),
                keyword_rank,
                vector_rank,
                cfg,
            )
            if span is not None:
                start, end = (stamp(moment) for moment in span)
                inside = [start <= self._times[key] < end for key in order]
                relevance += cfg.date_weight * np.array(inside)
            words = [w for w in tokenize(query) if is_informative(w)]
            hits = []
            for i in np.argsort(-relevance, kind="stable")[:k].tolist():
                cid, mid, text = self._docs[order[i]]
                title = self._entries[cid].title
                snippet = _snippet(text, words)
                score, written = float(relevance[i]), self._times[order[i]]
                hits.append(ConversationHit(cid, mid, title, snippet, score, written))
            return hits

    def _ensure_index(self) -> BM25Index:
        """The search index, built from every conversation file on first use."""
        if self._search is None:
            self._search = BM25Index(self.config.bm25_k1, self.config.bm25_b)
            for cid in list(self._entries):
                self._try_rescan(cid)
        return self._search

    # -- vectors -------------------------------------------------------------------------------

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Search by meaning with this embedder's vectors from now on (None: keywords only)."""
        with self._lock:
            same = self._embedder is not None and embedder is not None
            if same and embedder.name == self._embedder.name:  # type: ignore[union-attr]
                self._embedder = embedder
                return
            self._save_vectors()
            self._embedder = embedder
            self._vectors = None
            self._vectors_loaded = False
            self._arrays = None
            self._pending = None

    def _current_vectors(self) -> MessageVectors | None:
        """The vectors of the current embedder, read from the cache on first use."""
        if self._embedder is None:
            return None
        if not self._vectors_loaded:
            self._vectors = MessageVectors.load(self.directory, self._embedder.name)
            self._vectors_loaded = True
            self._arrays = None
            self._pending = None
        return self._vectors

    def _save_vectors(self) -> None:
        if self._vectors is not None and self._vectors.unsaved:
            self._vectors.save(self.directory)

    def _query_vector(self, query: str) -> npt.NDArray[np.float32] | None:
        """The query's unit vector, if some messages have vectors to compare it with."""
        with self._lock:
            embedder = self._embedder
            vectors = self._current_vectors()
            if embedder is None or vectors is None or not len(vectors):
                return None
        try:
            qvec = np.asarray(embedder.embed([query]), dtype=np.float32).reshape(-1)
        except (AssistantError, ValueError) as exc:
            log.warning("Embedding the search failed, searching by keywords: %s", exc)
            return None
        norm = float(np.linalg.norm(qvec))
        if len(qvec) != vectors.dim or not math.isfinite(norm) or norm == 0:
            return None
        return qvec / norm

    def pending_embeddings(self) -> int:
        """How many searched messages have no vector of the current embedder."""
        with self._lock:
            return len(self._unembedded())

    def _unembedded(self) -> list[tuple[int, str]]:
        """(key, text) of the searched messages without a vector, in key order."""
        if self._embedder is None:
            return []
        self._ensure_index()
        self._refresh()
        if self._pending is None:
            vectors = self._current_vectors()
            self._pending = {
                key
                for key, (cid, mid, _) in self._docs.items()
                if vectors is None or vectors.row((cid, mid)) < 0
            }
        return [(key, self._docs[key][2]) for key in sorted(self._pending)]

    def embed_pending(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> int:
        """Embed the searched messages that have no vector, in batches; returns how many.

        Resumable: vectors are cached as they come (every `SAVE_EVERY` messages, and at the end
        if they are a twentieth of all), so a run that is stopped goes on from there next time.
        `progress(done, total)` follows each batch; `cancel()` is checked between batches.
        Raises the embedder's error (a ProviderError) if a batch fails.
        """
        with self._lock:
            embedder = self._embedder
            todo = self._unembedded()
        done = 0
        try:
            for start in range(0, len(todo), EMBED_BATCH):
                if embedder is None or (cancel is not None and cancel()):
                    break
                if progress is not None:
                    progress(done, len(todo))
                batch = todo[start : start + EMBED_BATCH]
                vectors = np.asarray(embedder.embed([t for _, t in batch]), dtype=np.float32)
                with self._lock:
                    if embedder is not self._embedder:
                        break  # the embedder changed meanwhile
                    if self._vectors is None:
                        self._vectors = MessageVectors(embedder.name, vectors.shape[1])
                    self._store_vectors(self._vectors, [key for key, _ in batch], vectors)
                    if self._vectors.unsaved >= SAVE_EVERY:
                        self._save_vectors()
                done += len(batch)
        finally:
            with self._lock:
                store = self._vectors if embedder is self._embedder else None
                # Rewriting the cache costs its whole size: only once it has grown by a
                # twentieth (the rest is saved by `close`, or embedded again after a crash).
                if store is not None and store.unsaved * 20 >= len(store):
                    self._save_vectors()
        if progress is not None:
            progress(done, done)
        return done

    def _store_vectors(
        self, store: MessageVectors, keys: list[int], vectors: npt.NDArray[np.float32]
    ) -> None:
        """Keep the vectors of the messages of `keys` (those still indexed)."""
        known = [i for i, key in enumerate(keys) if key in self._docs]
        message_keys: list[MessageKey] = [self._docs[keys[i]][:2] for i in known]
        store.add(message_keys, vectors[known])
        if self._pending is not None:
            self._pending.difference_update(keys)
        if self._arrays is not None:
            rows = [store.row(m) for m in message_keys]
            self._arrays = self._arrays.placed([keys[i] for i in known], rows)

    def close(self) -> None:
        """Save what is not saved yet (the vector cache)."""
        with self._lock:
            self._save_vectors()

    def _dense_top(self, qvec: npt.NDArray[np.float32], depth: int) -> list[tuple[int, float]]:
        """The best `depth` (key, meaning score) of the messages with vectors, best first.

        A message's score is its cosine plus `context_weight` times the previous message's.
        Candidates are the rows `MessageVectors.nearest` picks (5 per place, or 1 % of all if
        more, as the semantic memory does).
        """
        vectors = self._current_vectors()
        if vectors is None or vectors.dim != len(qvec):
            return []
        arrays = self._search_arrays(vectors)
        cfg = self.config
        wanted = max(depth, cfg.rescore_factor * depth, int(cfg.rescore_fraction * len(vectors)))
        rows, sims = vectors.nearest(qvec, wanted)
        at = arrays.position_of_row[rows] if len(arrays.position_of_row) else rows[:0]
        searched = at >= 0  # rows of deleted or temporary conversations are not
        at, score = at[searched], sims[searched].astype(np.float64)
        if cfg.context_weight:
            before = arrays.prev[at]
            before_rows = np.where(before >= 0, arrays.rows[np.maximum(before, 0)], -1)
            has = before_rows >= 0
            extra = np.zeros(len(at))
            extra[has] = vectors.similarity(before_rows[has], qvec)
            score = score + cfg.context_weight * extra
        keep = score >= np.float64(cfg.min_similarity)
        at, score = at[keep], score[keep]
        order = np.lexsort((arrays.keys[at], -score))[:depth]
        return [(int(arrays.keys[at[i]]), float(score[i])) for i in order]

    def _search_arrays(self, vectors: MessageVectors) -> _SearchArrays:
        """The searched messages as arrays (rebuilt after changes): keys, vector rows, previous,
        and the position of each vector row's message (-1: not searched)."""
        if self._arrays is None:
            keys = np.array(sorted(self._docs), dtype=np.int64)
            position = {key: i for i, key in enumerate(keys.tolist())}
            rows = np.array(
                [vectors.row(self._docs[key][:2]) for key in keys.tolist()], dtype=np.int64
            )
            prev = np.array(
                [position.get(self._prev.get(key, -1), -1) for key in keys.tolist()],
                dtype=np.int64,
            )
            position_of_row = np.full(len(vectors), -1, dtype=np.int64)
            has = rows >= 0
            position_of_row[rows[has]] = np.flatnonzero(has)
            self._arrays = _SearchArrays(keys, rows, prev, position_of_row, position)
        return self._arrays

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(conversation_id)` after each change; returns the unsubscribe function."""
        return self._subscribers.add(callback)

    def all(self) -> list[ConversationInfo]:
        """All conversations, most recently active first."""
        with self._lock:
            self._refresh()
            ordered = sorted(
                self._entries.items(),
                key=lambda item: (item[1].updated_at, item[1].created_at, item[0]),
                reverse=True,
            )
            return [entry.info(cid) for cid, entry in ordered]

    def _path(self, conversation_id: str) -> Path:
        if not _ID.fullmatch(conversation_id):
            raise ConversationNotFoundError(conversation_id)
        return self.directory / f"{conversation_id}.jsonl"

    def _write(self, conversation_id: str, record: dict[str, Any]) -> os.stat_result:
        """Durably append a record; return the file's new stat."""
        path = self._path(conversation_id)
        try:
            appender = jsonl.Appender(path)
            try:
                appender.append(record)
            finally:
                appender.close()
            return path.stat()
        except OSError as exc:
            raise StorageError(f"Could not save conversation to {path}: {exc}") from exc

    def _fresh_entry(self, conversation_id: str) -> _Entry:
        """The conversation's entry, read again if its file changed."""
        try:
            st = self._path(conversation_id).stat()
        except FileNotFoundError:
            self._forget(conversation_id)
            raise ConversationNotFoundError(conversation_id) from None
        entry = self._entries.get(conversation_id)
        if entry is None or not entry.matches(st):
            self._rescan(conversation_id)
            entry = self._entries[conversation_id]
        return entry

    def _rescan(self, conversation_id: str) -> Conversation:
        """Read a file, renewing its cache entry and (if it changed) its search documents."""
        path = self._path(conversation_id)
        try:
            conversation, warnings = _read_conversation(path)
            st = path.stat()
        except FileNotFoundError:
            self._forget(conversation_id)
            raise ConversationNotFoundError(conversation_id) from None
        except OSError as exc:
            raise StorageError(f"Could not read conversation {path}: {exc}") from exc
        self.warnings += [w for w in warnings if w not in self.warnings]
        entry = _Entry.of(conversation, st)
        changed = self._entries.get(conversation_id) != entry
        self._set_entry(conversation_id, entry)
        if self._search is not None and (changed or conversation_id not in self._doc_keys):
            self._unindex(conversation_id)
            self._doc_keys[conversation_id] = []
            if not conversation.temporary:
                for message in conversation.messages:
                    self._index_message(self._search, conversation_id, message)
        return conversation

    def _try_rescan(self, conversation_id: str) -> bool:
        """Rescan a file; False (with a warning if it exists) when it cannot be read."""
        try:
            self._rescan(conversation_id)
        except ConversationNotFoundError:
            return False
        except StorageError as exc:  # one unreadable file must not hide the others
            log.warning("%s", exc)
            if str(exc) not in self.warnings:
                self.warnings.append(str(exc))
            return False
        return True

    def _refresh(self) -> None:
        """Bring the cache up to date with the directory and save it if anything changed."""
        seen: set[str] = set()
        with os.scandir(self.directory) as it:
            for item in it:
                cid, ext = os.path.splitext(item.name)
                if ext != ".jsonl" or not _ID.fullmatch(cid):
                    continue
                try:
                    st = item.stat()
                except FileNotFoundError:
                    continue
                entry = self._entries.get(cid)
                if (entry is None or not entry.matches(st)) and not self._try_rescan(cid):
                    continue
                seen.add(cid)
        for cid in set(self._entries) - seen:
            self._forget(cid)
        self._save_index()

    def _set_entry(self, conversation_id: str, entry: _Entry) -> None:
        if self._entries.get(conversation_id) != entry:
            self._entries[conversation_id] = entry
            self._index_dirty = True

    def _forget(self, conversation_id: str) -> None:
        if self._entries.pop(conversation_id, None) is not None:
            self._index_dirty = True
        self._unindex(conversation_id)

    def _index_message(self, index: BM25Index, conversation_id: str, message: Message) -> None:
        """Index a searched message, with the text of the one before it as context."""
        if message.role not in SEARCHED_ROLES:
            return
        own = terms(message.content)
        if not own:
            return
        keys = self._doc_keys.setdefault(conversation_id, [])
        key = self._next_key
        self._next_key += 1
        context: list[str] = []
        if keys:
            self._prev[key] = keys[-1]
            if self.config.keyword_context:
                context = terms(self._docs[keys[-1]][2])
        index.add(key, own + context)
        self._docs[key] = (conversation_id, message.id, message.content)
        self._times[key] = stamp(parse_time(message.created_at))
        keys.append(key)
        row = -1 if self._vectors is None else self._vectors.row((conversation_id, message.id))
        if row < 0 and self._pending is not None:
            self._pending.add(key)
        if self._arrays is not None:  # keys grow, so the new one goes last
            self._arrays = self._arrays.appended(key, row, self._prev.get(key, -1))

    def _unindex(self, conversation_id: str) -> None:
        for key in self._doc_keys.pop(conversation_id, []):
            if self._search is not None:
                self._search.remove(key)
            del self._docs[key]
            self._prev.pop(key, None)
            del self._times[key]
            if self._pending is not None:
                self._pending.discard(key)
            self._arrays = None

    def _index_path(self) -> Path:
        return self.directory / INDEX_NAME

    def _load_index(self) -> dict[str, _Entry]:
        try:
            raw = json.loads(self._index_path().read_text(encoding="utf-8"))
            if not isinstance(raw, dict) or raw.get("version") != INDEX_VERSION:
                raise ValueError(f"not a version {INDEX_VERSION} index")
            entries = raw.get("conversations")
            if not isinstance(entries, dict):
                raise ValueError("no 'conversations' object")
            return {
                cid: _Entry.from_json(entry) for cid, entry in entries.items() if _ID.fullmatch(cid)
            }
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.info("rebuilding the conversation index: %s", exc)
            self._index_dirty = True
            return {}

    def _save_index(self) -> None:
        if not self._index_dirty:
            return
        doc = {
            "version": INDEX_VERSION,
            "conversations": {cid: asdict(entry) for cid, entry in self._entries.items()},
        }
        try:
            atomic_write_json(self._index_path(), doc)
        except (OSError, StorageError) as exc:  # only a cache: the next run rebuilds it
            log.warning("could not save the conversation index: %s", exc)
            return
        self._index_dirty = False


def _read_conversation(path: Path) -> tuple[Conversation, list[str]]:
    """Parse a conversation file (repairing it as `jsonl.read` does) and say what was wrong.

    A file with records of a newer version is a StorageError (and is left as it is).
    """
    loaded = jsonl.read(path)
    for record in loaded.records:
        refuse_newer(path, record, RECORD_VERSION)
    problems: list[str] = []
    meta: dict[str, Any] | None = None
    title: str | None = None
    summary = ""
    summary_upto: str | None = None
    messages: list[Message] = []
    leaf: str | None = None
    bad = 0
    for record in loaded.records:
        kind = record.get("type")
        try:
            if kind == "message":
                messages.append(Message.from_json(record))
                leaf = messages[-1].id
            elif kind == "meta" and meta is None:
                string(record, "title")
                string(record, "created_at")
                for flag in ("temporary", "do_not_remember"):
                    if not isinstance(record.get(flag, False), bool):
                        raise ValueError(f"{flag!r} must be true or false")
                meta = record
            elif kind == "update":
                if "title" in record:
                    title = string(record, "title")
                if "summary" in record:
                    summary = string(record, "summary")
                    summary_upto = optional_str(record, "summary_upto")
                if "leaf" in record:
                    leaf = optional_str(record, "leaf")
        except ValueError:
            bad += 1
    if bad:
        problems.append(f"{path.name}: skipped {bad} malformed record(s).")
    if meta is None:
        problems.append(
            f"{path.name}: its header record is missing; titled it {RECOVERED_TITLE!r}."
        )
        created_at = (
            messages[0].created_at
            if messages
            else stamp(datetime.fromtimestamp(path.stat().st_mtime, UTC))
        )
        meta = {"title": RECOVERED_TITLE, "created_at": created_at}
    for msg in problems:
        log.warning(msg)
    if leaf is not None and all(m.id != leaf for m in messages):  # a leaf that was not written
        leaf = messages[-1].id if messages else None
    conversation = Conversation(
        id=path.stem,
        title=title or meta["title"],
        created_at=meta["created_at"],
        updated_at=messages[-1].created_at if messages else meta["created_at"],
        temporary=meta.get("temporary", False),
        summary=summary,
        summary_upto=summary_upto,
        messages=messages,
        do_not_remember=meta.get("do_not_remember", False),
        leaf_id=leaf,
    )
    return conversation, loaded.warnings + problems


def _create_file(path: Path, data: bytes) -> None:
    """Atomically create `path` holding `data`; FileExistsError if it exists (never replaced)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # unlike os.replace, fails if another writer created `path`
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: check, then rename
            if path.exists():
                raise FileExistsError(path) from None
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    fsync_dir(path.parent)


def _record(kind: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """A file record: version, type, then the body's fields."""
    return {"version": RECORD_VERSION, "type": kind, **body}


def _clean_title(title: str) -> str:
    cleaned = " ".join(title.split())
    if not cleaned:
        raise ValueError("a conversation title must not be empty")
    return cleaned


def _snippet(text: str, words: Sequence[str]) -> str:
    """About SNIPPET_CHARS of `text` on one line, around the first of `words` in it."""
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    match = re.search(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", flat.lower())
    pos = match.start() if match else 0
    start = max(0, min(pos - SNIPPET_CHARS // 3, len(flat) - SNIPPET_CHARS))
    end = start + SNIPPET_CHARS
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
