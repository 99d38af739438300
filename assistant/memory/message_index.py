"""Conversation search: the searched messages of a store's conversations, ranked by keywords,
meaning and date.

Search is hybrid, as in the semantic memory: BM25 over word stems and, once messages have
vectors (`embed_pending`, in the background), cosine similarity, fused (see `ranking`). Each
user or assistant message is scored with the one before it in its conversation as context
(`SearchConfig.keyword_context`; `context_weight` does the same for the meaning score), since a
reply ("Yes, a sunrise") often means what the message it answers says. A query that names a
period ("in May 2023", "last week") favours the messages written in it. A conversation's
summary, if it has one, says what it was about: the relevance of its summary to the query
(BM25 over the summaries, 1 for the best) adds to that of its messages
(`SearchConfig.summary_weight`), as passage retrieval adds a document's score to its
passages' (Callan, "Passage-level evidence in document retrieval", 1994). And a message's
neighbours lend it part of their relevance (`neighbours`): an answer sits next to its question.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.memory.bm25 import BM25Index
from assistant.memory.embedding import Embedder, embedding_batches, query_vector
from assistant.memory.entities import mentions, names
from assistant.memory.message_arrays import SearchArrays
from assistant.memory.message_context import SEARCHED_ROLES, context_of
from assistant.memory.message_index_cache import IndexState
from assistant.memory.message_keys import MessageKeys
from assistant.memory.message_vectors import MessageKey, MessageVectors
from assistant.memory.messages import Message
from assistant.memory.neighbours import keyless_relevance, neighbour_relevance
from assistant.memory.periods import Timeline, best, flags, joined
from assistant.memory.ranking import Fusion, SearchConfig, fuse_rankings
from assistant.memory.snippets import make_snippet
from assistant.memory.text import is_informative, query_terms, terms, tokenize
from assistant.memory.when import time_span
from assistant.timestamps import parse as parse_time
from assistant.timestamps import stamp

log = logging.getLogger(__name__)

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
        self._key_of: dict[MessageKey, int] = {}  # (conversation, message) -> key
        self._keys = MessageKeys()  # the texts messages are also found by
        self._doc_keys: dict[str, list[int]] = {}  # conversation -> its keys, in order
        self._summaries: dict[str, str] = {}  # conversation -> its summary, if any
        self._summary_bm25: tuple[BM25Index, list[str]] | None = None  # and the conversations
        self._prev: dict[int, int] = {}  # key -> key of the message before it, if searched
        self._times = Timeline()  # key -> created_at
        self._next_key = 0
        self._arrays: SearchArrays | None = None
        self._pending: set[int] | None = None  # keys without a vector; None: not known yet
        self._pending_keys: list[str] | None = None  # key texts without a vector
        self.dirty = False  # changed since it was read from or written to the cache

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

    def replace(self, conversation_id: str, messages: Sequence[Message], summary: str = "") -> None:
        """Index these messages of a conversation and its summary instead of those it had
        (none: temporary)."""
        if not self._built:
            return
        self.remove(conversation_id)
        self._doc_keys[conversation_id] = []
        self.set_summary(conversation_id, summary)
        if len(messages) > 1:
            self._arrays = None  # rebuilt once, not copied for each message (an import)
        for message in messages:
            self.add(conversation_id, message)
        self.dirty = True

    def snapshot(self, files: Mapping[str, tuple[int, int]]) -> IndexState:
        """What the index holds, for the cache; `files` has the (size, mtime_ns) of the file
        of each conversation as the index holds it."""
        keys = sorted(self._docs)
        docs = [self._docs[key] for key in keys]
        return IndexState(
            files={cid: files[cid] for cid in self._doc_keys if cid in files},
            order={cid: list(keys) for cid, keys in self._doc_keys.items()},
            keys=np.array(keys, dtype=np.int64),
            conversations=[d[0] for d in docs],
            messages=[d[1] for d in docs],
            texts=[d[2] for d in docs],
            times=[self._times[key] for key in keys],
            prev=np.array([self._prev.get(key, -1) for key in keys], dtype=np.int64),
            key_texts={m: t for m, t in self._keys.texts.items() if m in self._key_of},
            summaries=dict(self._summaries),
            bm25=self._bm25.snapshot(),
            next_key=self._next_key,
            flavour=self._flavour(),
        )

    def restore(self, state: IndexState) -> bool:
        """Hold what a cache holds (before any conversation is indexed); False if it was made
        with other settings. The store then drops the conversations changed since."""
        if state.flavour != self._flavour():
            return False
        cfg = self.config
        self._bm25 = BM25Index.from_snapshot(state.bm25, cfg.bm25_k1, cfg.bm25_b)
        keys = state.keys.tolist()
        docs = zip(state.conversations, state.messages, state.texts, strict=True)
        self._docs = dict(zip(keys, docs, strict=True))
        pairs = zip(state.conversations, state.messages, strict=True)
        self._key_of = dict(zip(pairs, keys, strict=True))
        self._times = Timeline(zip(keys, state.times, strict=True))
        self._prev = {k: p for k, p in zip(keys, state.prev.tolist(), strict=True) if p >= 0}
        self._doc_keys = {cid: list(ks) for cid, ks in state.order.items()}
        self._summaries = {c: t for c, t in state.summaries.items() if c in self._doc_keys}
        self._summary_bm25 = None
        self._next_key = state.next_key
        self._arrays, self._pending = None, None
        # Documents indexed with keys that have changed since (memories edited or forgotten)
        were, now = state.key_texts, self._keys.texts
        stale = [m for m in set(were) | set(now) if were.get(m, ()) != now.get(m, ())]
        for message in stale:
            self._reindex(message)
        self.dirty = bool(stale)
        return True

    def _flavour(self) -> str:
        """What the keyword documents hold (a cache made otherwise is not used)."""
        return f"context={self.config.keyword_context};keys={self.config.message_keys}"

    def _reindex(self, message: MessageKey) -> None:
        """Index a message's keyword document again (its keys changed)."""
        key = self._key_of.get(message)
        if key is not None:
            self._bm25.remove(key)
            self._bm25.add(key, self._terms(key))
            self.dirty = True

    def set_summary(self, conversation_id: str, summary: str) -> None:
        """A conversation's summary, if it is indexed (empty: it has none)."""
        if not self._built or conversation_id not in self._doc_keys:
            return
        if self._summaries.get(conversation_id, "") == summary.strip():
            return
        if summary.strip():
            self._summaries[conversation_id] = summary.strip()
        else:
            self._summaries.pop(conversation_id, None)
        self._summary_bm25 = None
        self.dirty = True

    def _conversation_relevance(
        self, tokens: Sequence[str], required: Sequence[str]
    ) -> dict[str, float]:
        """Per conversation whose summary shares a non-stop word with the query, its summary's
        BM25 score divided by the best (built on first use after a change)."""
        if self._summary_bm25 is None:
            cids = sorted(self._summaries)
            index = BM25Index(self.config.bm25_k1, self.config.bm25_b)
            index.add_many(range(len(cids)), [terms(self._summaries[c]) for c in cids])
            self._summary_bm25 = index, cids
        index, cids = self._summary_bm25
        ranked = index.top(tokens, len(cids), require=required)
        best = max((score for _, score in ranked), default=0.0)
        if best <= 0:
            return {}
        return {cids[n]: max(score, 0.0) / best for n, score in ranked}

    def set_keys(self, changes: Mapping[MessageKey, Sequence[str]]) -> None:
        """Index these messages also under these texts (the memories extracted from them),
        instead of the keys they had; no texts: no keys (see `message_keys`)."""
        with self._lock:
            for message in self._keys.set(changes):
                self._reindex(message)
            self._pending_keys = None

    def contexts(self, messages: Sequence[MessageKey]) -> dict[MessageKey, str]:
        """The context of each of these messages that is searched (see `context_of`), from the
        index: call it once the index is built."""
        with self._lock:
            self._sync()
            out = {}
            for message in messages:
                key = self._key_of.get(message)
                if key is None:
                    continue
                before = self._prev.get(key)
                text = self._docs[key][2]
                out[message] = context_of(None if before is None else self._docs[before][2], text)
            return out

    def search(
        self, query: str, k: int = 10, *, now: datetime | None = None
    ) -> list[ConversationHit]:
        """The `k` best-matching user and assistant messages of non-temporary conversations.

        A message qualifies if it (or the message before it) shares a non-stop word with the
        query, or its meaning score reaches `min_similarity`. Scores are 0..1 (see `ranking`).
        A period the query names ("last May") is resolved against `now` (default: now).
        """
        tokens, required = query_terms(query)
        if not required or k <= 0:
            return []
        qvec = self._query_vector(query)
        span = time_span(query, now)
        cfg = self.config
        depth = max(cfg.depth, k)
        with self._lock:
            self._sync()
            lexical = self._bm25.top(tokens, depth, require=required)
            dense = self._dense_top(qvec, depth) if qvec is not None else []
            start, end = (stamp(moment) for moment in span) if span else ("", "")
            if span is not None and cfg.period_candidates:  # see `periods`
                inside = self._times.written_in(start, end)
                extra = self._bm25.top(tokens, depth, require=required, allowed=flags(inside))
                lexical = joined(lexical, extra)
                if qvec is not None:
                    similar = self._own_similarity(inside, qvec)
                    dense = joined(dense, best(inside, similar, depth, cfg.min_similarity))
            if not lexical and not dense:
                return []
            fused = fuse_rankings(lexical, dense, cfg)
            order, relevance = fused.order, fused.relevance
            if cfg.neighbour_weight:
                passed = self._own_relevance(fused, tokens, required, qvec)
                around = neighbour_relevance(order, passed, self._prev)
                relevance = relevance + cfg.neighbour_weight * around
            if span is not None:
                inside = [start <= self._times[key] < end for key in order]
                relevance += cfg.date_weight * np.array(inside)
            if cfg.summary_weight and self._summaries:
                by_conversation = self._conversation_relevance(tokens, required)
                if by_conversation:
                    prior = [by_conversation.get(self._docs[key][0], 0.0) for key in order]
                    relevance += cfg.summary_weight * np.array(prior)
            wanted = names(query)
            if wanted and cfg.entity_weight:
                named = [mentions(self._docs[key][2], wanted) for key in order]
                relevance += cfg.entity_weight * np.array(named)
            words = [w for w in tokenize(query) if is_informative(w)]
            hits = []
            for i in np.argsort(-relevance, kind="stable")[:k].tolist():
                cid, mid, text = self._docs[order[i]]
                title = self._title_of(cid)
                snippet = make_snippet(text, words)
                score, written = float(relevance[i]), self._times[order[i]]
                hits.append(ConversationHit(cid, mid, title, snippet, score, written))
            return hits

    def _own_relevance(
        self,
        fused: Fusion[int],
        tokens: Sequence[str],
        required: Sequence[str],
        qvec: npt.NDArray[np.float32] | None,
    ) -> npt.NDArray[np.float64]:
        """The candidates' relevance by their own words and meaning, without their keys'."""
        texts = self._keys.texts
        keyed = [key for key in fused.order if self._docs[key][:2] in texts]
        if not keyed or not self.config.message_keys:
            return fused.relevance
        documents = [self._terms(key, keys=False) for key in keyed]
        words = self._bm25.score_documents(tokens, documents, require=required)
        meaning = self._own_similarity(keyed, qvec)
        return keyless_relevance(fused, keyed, words, meaning, self.config)

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
            self._keys.vectors = None

    def _current_vectors(self) -> MessageVectors | None:
        """The vectors of the current embedder, read from the cache on first use."""
        if self._embedder is None:
            return None
        if not self._vectors_loaded:
            self._vectors = MessageVectors.load(self.directory, self._embedder.name)
            self._keys.load(self.directory, self._embedder.name)
            self._vectors_loaded = True
            self._arrays = None
            self._pending = None
        return self._vectors

    def _save_vectors(self) -> None:
        if self._vectors is not None and self._vectors.unsaved:
            self._vectors.save(self.directory)
        self._keys.save(self.directory)

    def _query_vector(self, query: str) -> npt.NDArray[np.float32] | None:
        """The query's unit vector, if some messages have vectors to compare it with."""
        with self._lock:
            embedder = self._embedder
            vectors = self._current_vectors() or self._keys.vectors
            if embedder is None or vectors is None or not len(vectors):
                return None
        return query_vector(embedder, query, vectors.dim)

    def pending_embeddings(self) -> int:
        """How many searched messages have no vector of the current embedder."""
        with self._lock:
            return len(self._unembedded()) + len(self._unembedded_keys())

    def _unembedded_keys(self) -> list[str]:
        """The key texts without a vector of the current embedder."""
        if self._embedder is None or not self.config.message_keys:
            return []
        self._current_vectors()
        if self._pending_keys is None:
            self._pending_keys = self._keys.pending()
        return self._pending_keys

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

        Resumable: vectors are cached as they come (every `SAVE_EVERY` messages or a tenth of
        those with vectors, and at the end if they are a twentieth of all), so a run that is
        stopped goes on from there next time.
        `progress(done, total)` follows each batch; `cancel()` is checked between batches.
        Raises the embedder's error (a ProviderError) if a batch fails.
        """
        with self._lock:
            embedder = self._embedder
            todo = self._unembedded() + [(-1, text) for text in self._unembedded_keys()]
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
                    own = [i for i, (key, _) in enumerate(batch) if key >= 0]
                    if own and self._vectors is None:
                        self._vectors = MessageVectors(embedder.name, vectors.shape[1])
                    if own and self._vectors is not None:
                        keys = [batch[i][0] for i in own]
                        self._store_vectors(self._vectors, keys, vectors[own])
                    if len(own) < len(batch):
                        texts = [t for key, t in batch if key < 0]
                        self._keys.store(embedder.name, texts, vectors[len(own) :])
                        self._pending_keys = None
                    unsaved = [v.unsaved for v in (self._vectors, self._keys.vectors) if v]
                    # Every SAVE_EVERY rows, or a tenth of all: each save rewrites the file.
                    total = len(self._vectors or ()) + len(self._keys.vectors or ())
                    if max(unsaved, default=0) >= max(SAVE_EVERY, total // 10):
                        self._save_vectors()
                done += len(batch)
        finally:
            with self._lock:
                store = self._vectors if embedder is self._embedder else None
                # Rewriting the cache costs its whole size: only once it has grown by a
                # twentieth (the rest is saved by `close`, or embedded again after a crash).
                if store is not None and store.unsaved * 20 >= len(store):
                    self._save_vectors()
                elif embedder is self._embedder:
                    self._keys.save(self.directory)
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
        score = score + self._context_similarity(vectors, arrays, at, qvec)
        if cfg.message_keys and len(self._keys):
            at, score = self._with_keys(qvec, wanted, at, score)
        keep = score >= np.float64(cfg.min_similarity)
        at, score = at[keep], score[keep]
        order = np.lexsort((arrays.keys[at], -score))[:depth]
        return [(int(arrays.keys[at[i]]), float(score[i])) for i in order]

    def _context_similarity(
        self,
        vectors: MessageVectors,
        arrays: SearchArrays,
        at: npt.NDArray[np.int64],
        qvec: npt.NDArray[np.float32],
    ) -> npt.NDArray[np.float64]:
        """What `context_weight` adds to the cosines of the messages at `at` (the previous's)."""
        extra = np.zeros(len(at))
        if self.config.context_weight:
            before = arrays.prev[at]
            before_rows = np.where(before >= 0, arrays.rows[np.maximum(before, 0)], -1)
            has = before_rows >= 0
            extra[has] = self.config.context_weight * vectors.similarity(before_rows[has], qvec)
        return extra

    def _own_similarity(
        self, keys: Sequence[int], qvec: npt.NDArray[np.float32] | None
    ) -> list[float]:
        """The meaning scores of these messages by their own vectors (0 without one)."""
        vectors = self._current_vectors()
        if qvec is None or vectors is None or vectors.dim != len(qvec):
            return [0.0] * len(keys)
        arrays = self._search_arrays(vectors)
        at = np.array([arrays.position[key] for key in keys], dtype=np.int64)
        rows = arrays.rows[at]
        own = np.zeros(len(at))
        own[rows >= 0] = vectors.similarity(rows[rows >= 0], qvec)
        own += self._context_similarity(vectors, arrays, at, qvec)
        return [float(score) for score in own]

    def _with_keys(
        self,
        qvec: npt.NDArray[np.float32],
        wanted: int,
        at: npt.NDArray[np.int64],
        score: npt.NDArray[np.float64],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The candidates (positions, meaning scores) with those of the messages whose keys are
        among the closest: a message's score is the best of its own and its keys'."""
        best = dict(zip(at.tolist(), score.tolist(), strict=True))
        position = self._arrays.position if self._arrays is not None else {}
        for message, sim in self._keys.best(qvec, wanted).items():
            key = self._key_of.get(message)
            place = position.get(key, -1) if key is not None else -1
            if place >= 0 and sim > best.get(place, -np.inf):
                best[place] = sim
        places = np.fromiter(best, dtype=np.int64, count=len(best))
        return places, np.fromiter(best.values(), dtype=np.float64, count=len(best))

    def _search_arrays(self, vectors: MessageVectors) -> SearchArrays:
        """The searched messages as arrays (rebuilt after changes; see `SearchArrays`)."""
        if self._arrays is None:
            self._arrays = SearchArrays.of(self._docs, self._prev, vectors)
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
        if keys:
            self._prev[key] = keys[-1]
        self._docs[key] = (conversation_id, message.id, message.content)
        self._key_of[(conversation_id, message.id)] = key
        self._bm25.add(key, self._terms(key, own))
        self.dirty = True
        self._times[key] = stamp(parse_time(message.created_at))
        keys.append(key)
        row = -1 if self._vectors is None else self._vectors.row((conversation_id, message.id))
        if row < 0 and self._pending is not None:
            self._pending.add(key)
        if self._arrays is not None:  # keys grow, so the new one goes last
            self._arrays = self._arrays.appended(key, row, self._prev.get(key, -1))

    def _terms(self, key: int, own: list[str] | None = None, *, keys: bool = True) -> list[str]:
        """The keyword document of an indexed message: its words, those of the message before
        it (`keyword_context`) and (with `keys`) those of its keys (`message_keys`)."""
        cid, mid, text = self._docs[key]
        out = terms(text) if own is None else own
        if self.config.keyword_context and key in self._prev:
            out = out + terms(self._docs[self._prev[key]][2])
        if keys and self.config.message_keys:
            for key_text in self._keys.texts.get((cid, mid), ()):
                out = out + terms(key_text)
        return out

    def remove(self, conversation_id: str) -> None:
        """Drop the messages of a conversation from the index."""
        self.dirty |= conversation_id in self._doc_keys
        if self._summaries.pop(conversation_id, None) is not None:
            self._summary_bm25 = None
        for key in self._doc_keys.pop(conversation_id, []):
            self._bm25.remove(key)
            del self._key_of[self._docs[key][:2]]
            del self._docs[key]
            self._prev.pop(key, None)
            del self._times[key]
            if self._pending is not None:
                self._pending.discard(key)
            self._arrays = None
