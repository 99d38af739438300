"""Conversation search: the searched messages of a store's conversations, ranked by keywords,
meaning and date.

Search is hybrid, as in the semantic memory: BM25 over word stems and, once messages have
vectors (`embed_pending`, in the background), cosine similarity, fused (see `ranking`). Each
user or assistant message is scored with the one before it in its conversation as context
(`SearchConfig.keyword_context`; `context_weight` does the same for the meaning score), since a
reply ("Yes, a sunrise") often means what the message it answers says. A query that names a
period ("in May 2023", "last week") favours the messages written in it.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.errors import AssistantError
from assistant.memory.bm25 import BM25Index
from assistant.memory.embedding import Embedder, embedding_batches
from assistant.memory.message_vectors import MessageKey, MessageVectors
from assistant.memory.messages import Message
from assistant.memory.ranking import SearchConfig, fuse_rankings
from assistant.memory.text import is_informative, query_terms, terms, tokenize
from assistant.memory.when import time_span
from assistant.timestamps import parse as parse_time
from assistant.timestamps import stamp

log = logging.getLogger(__name__)

SNIPPET_CHARS = 160
SEARCHED_ROLES = ("user", "assistant")
SAVE_EVERY = 2048  # embedded messages between cache saves while embedding


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


class MessageIndex:
    """The user and assistant messages of the non-temporary conversations, by key (a number
    given in the order they are indexed), with their BM25 documents and vectors.

    The store tells it what its files hold (`replace`, `add`, `remove`) and shares its lock:
    `sync` (called with the lock held) brings the index up to date with the files before a
    search, building it on first use (`built`, `build`); `title_of` gives a conversation's
    title for the hits. Vectors come from `embedder` and are cached in `directory`.
    """

    def __init__(
        self,
        directory: Path,
        embedder: Embedder | None,
        config: SearchConfig,
        *,
        lock: threading.RLock,
        sync: Callable[[], None],
        title_of: Callable[[str], str],
    ) -> None:
        self.directory = directory
        self.config = config
        self._lock = lock
        self._sync = sync
        self._title_of = title_of
        self._embedder = embedder
        self._vectors: MessageVectors | None = None
        self._vectors_loaded = False
        self._bm25 = BM25Index(config.bm25_k1, config.bm25_b)
        self._built = False
        self._docs: dict[int, tuple[str, str, str]] = {}  # key: conversation, message, text
        self._doc_keys: dict[str, list[int]] = {}  # conversation -> its keys, in order
        self._prev: dict[int, int] = {}  # key -> key of the message before it, if searched
        self._times: dict[int, str] = {}  # key -> created_at
        self._next_key = 0
        self._arrays: _SearchArrays | None = None
        self._pending: set[int] | None = None  # keys without a vector; None: not known yet

    @property
    def built(self) -> bool:
        """Whether the index holds the messages (it is built on the first search)."""
        return self._built

    def build(self) -> None:
        """Start indexing: from now on `replace` and `add` index messages (before, they do
        nothing: the store's `sync` then gives it every conversation)."""
        self._built = True

    def has(self, conversation_id: str) -> bool:
        """Whether the messages of a conversation are indexed (none, if it is temporary)."""
        return conversation_id in self._doc_keys

    def replace(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Index these messages of a conversation instead of those it had (none: temporary)."""
        if not self._built:
            return
        self.remove(conversation_id)
        self._doc_keys[conversation_id] = []
        for message in messages:
            self.add(conversation_id, message)

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
            self._sync()
            lexical = self._bm25.top(tokens, depth, require=required)
            dense = self._dense_top(qvec, depth) if qvec is not None else []
            if not lexical and not dense:
                return []
            fused = fuse_rankings(lexical, dense, cfg)
            order, relevance = fused.order, fused.relevance
            if span is not None:
                start, end = (stamp(moment) for moment in span)
                inside = [start <= self._times[key] < end for key in order]
                relevance += cfg.date_weight * np.array(inside)
            words = [w for w in tokenize(query) if is_informative(w)]
            hits = []
            for i in np.argsort(-relevance, kind="stable")[:k].tolist():
                cid, mid, text = self._docs[order[i]]
                title = self._title_of(cid)
                snippet = make_snippet(text, words)
                score, written = float(relevance[i]), self._times[order[i]]
                hits.append(ConversationHit(cid, mid, title, snippet, score, written))
            return hits

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
        self._sync()
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
            for batch in embedding_batches(todo):
                if embedder is None or (cancel is not None and cancel()):
                    break
                if progress is not None:
                    progress(done, len(todo))
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

    def add(self, conversation_id: str, message: Message) -> None:
        """Index a message if it is searched, with the text of the one before it as context."""
        if not self._built or message.role not in SEARCHED_ROLES:
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
        self._bm25.add(key, own + context)
        self._docs[key] = (conversation_id, message.id, message.content)
        self._times[key] = stamp(parse_time(message.created_at))
        keys.append(key)
        row = -1 if self._vectors is None else self._vectors.row((conversation_id, message.id))
        if row < 0 and self._pending is not None:
            self._pending.add(key)
        if self._arrays is not None:  # keys grow, so the new one goes last
            self._arrays = self._arrays.appended(key, row, self._prev.get(key, -1))

    def remove(self, conversation_id: str) -> None:
        """Drop the messages of a conversation from the index."""
        for key in self._doc_keys.pop(conversation_id, []):
            self._bm25.remove(key)
            del self._docs[key]
            self._prev.pop(key, None)
            del self._times[key]
            if self._pending is not None:
                self._pending.discard(key)
            self._arrays = None


def make_snippet(text: str, words: Sequence[str], chars: int = SNIPPET_CHARS) -> str:
    """About `chars` of `text` on one line, around the first of `words` in it."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    match = re.search(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", flat.lower())
    pos = match.start() if match else 0
    start = max(0, min(pos - chars // 3, len(flat) - chars))
    end = start + chars
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
