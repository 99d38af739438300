"""The memory store's ground floor: its log, index and embeddings under one lock.

`MemoryStore` keeps every memory in two places: the log on disk (`memory_log`: what is
durable, and how a forget reaches the file) and the index in memory (`memory_index`: slots,
keyword and vector indexes, search), with the embedder's upkeep (`embedding_upkeep`: embedding
happens outside the lock). It opens, closes, reads and searches; `SemanticMemory` (`semantic`)
adds the lifecycle verbs, each of which appends its records to the log, places the items in the
index, then tells the subscribers (`_commit`, `_emit`).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Self

import numpy as np
import numpy.typing as npt

from assistant.fileio import make_dir
from assistant.memory import collector
from assistant.memory.embedding import Embedder
from assistant.memory.embedding_upkeep import EmbeddingStatus, EmbeddingUpkeep, Progress
from assistant.memory.history import creation, select, told, with_text
from assistant.memory.items import (
    ChangeKind,
    EventType,
    MemoryChange,
    MemoryEvent,
    MemoryItem,
    MemoryState,
    SearchHit,
    listing_order,
)
from assistant.memory.memory_index import MemoryIndex
from assistant.memory.memory_log import MemoryLog
from assistant.memory.ranking import SearchConfig
from assistant.memory.same_memory import MERGE_THRESHOLD, same_memory, similar
from assistant.memory.scopes import Scope
from assistant.memory.subscribers import Subscribers
from assistant.memory.text import expand_last, matched_words, query_terms
from assistant.memory.tombstones import REJECTED_PROPOSAL, Tombstone
from assistant.memory.when import time_span
from assistant.timestamps import now_utc

Subscriber = Callable[[MemoryChange], None]


class MemoryStore:
    """The store's log, index and embeddings under one lock: opening, reading, searching.

    `SemanticMemory` adds the verbs that change memories; every public method is thread-safe.
    """

    def __init__(
        self, directory: Path, embedder: Embedder | None, config: SearchConfig | None = None
    ) -> None:
        """Use `open`."""
        self.directory = directory
        self.config = config or SearchConfig()
        self.clock_warning: str | None = None  # what the last decay said of the clock
        self._lock = threading.RLock()
        self._subscribers: Subscribers[MemoryChange] = Subscribers("memory")
        self._index = MemoryIndex(directory, self.config)
        self._log = MemoryLog(directory, self._index, self._lock)
        self._vectors = EmbeddingUpkeep(
            self._index, self._lock, embedder, lambda: self._emit("embeddings")
        )

    # -- opening, closing ----------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: Path, embedder: Embedder | None = None, config: SearchConfig | None = None
    ) -> Self:
        """Open (or create) the store in directory `path`."""
        make_dir(path)
        mem = cls(path, embedder, config)
        with mem._lock, collector.paused():
            replayed = mem._log.load()
            mem._index.fill(replayed.items, replayed.index, replayed.contexts, replayed.columns)
            for item in replayed.changed:
                mem._index.place(item)
            mem._vectors.load()
        return mem

    @property
    def warnings(self) -> list[str]:
        """What opening the log found wrong and repaired, for the user."""
        return self._log.warnings

    @property
    def history_loaded(self) -> bool:
        """Whether `history` answers without reading the log."""
        with self._lock:
            return self._log.history.loaded

    def load_history(self) -> None:
        """Read the memories' histories from the log now, if they were not (call it off the
        GUI thread after opening: the first `history` or `timeline` need not wait then), and
        tell the subscribers ("history")."""
        self._log.read_history()
        self._emit("history")

    def compact(self) -> None:
        """Rewrite the log with one record per item."""
        with self._lock:
            self._log.compact()

    def close(self) -> None:
        """Save the vector cache (without the forgotten items' vectors), drop forgotten items
        from disk and close the log."""
        with self._lock:
            if self._log.closed:
                return
            self._index.drop_forgotten_vectors()
            self._index.save_vectors()
            self._log.close()

    def _commit(
        self,
        items: Sequence[MemoryItem],
        events: Sequence[MemoryEvent],
        *,
        buried: Sequence[Tombstone] = (),
        lifted: Sequence[str] = (),
    ) -> list[int]:
        """Append the items and events to the log, then place the items (under the lock);
        their slots."""
        self._log.commit(items, events, buried=buried, lifted=lifted)
        return [self._index.place(item) for item in items]

    # -- subscribers ---------------------------------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback` after each change, on the changing thread; returns an unsubscribe."""
        return self._subscribers.add(callback)

    def _emit(self, kind: ChangeKind, ids: Iterable[str] = ()) -> None:
        self._subscribers.notify(MemoryChange(kind, tuple(ids)))

    # -- embeddings ----------------------------------------------------------------------------

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Switch embedders; vectors of another model are set aside and items re-embedded later."""
        self._vectors.set_embedder(embedder)

    def embedding_status(self) -> EmbeddingStatus:
        """How many active items have vectors of the current embedder."""
        return self._vectors.status()

    def embed_missing(
        self, progress: Progress | None = None, cancel: Callable[[], bool] | None = None
    ) -> int:
        """Embed the active items that have no vector, in batches; returns how many were embedded.

        `progress(done, total)` is called after each batch; `cancel()` is checked between
        batches. Raises the embedder's error (a ProviderError) if a batch fails.
        """
        return self._vectors.embed_missing(progress, cancel)

    # -- reading -------------------------------------------------------------------------------

    def get(self, item_id: str) -> MemoryItem | None:
        """The item with this id, in any state, or None."""
        with self._lock:
            return self._index.get(item_id)

    def all(self, state: MemoryState | None = "active") -> list[MemoryItem]:
        """Items in `state` (all with None), pinned first, then newest first."""
        with self._lock:
            chosen = [i for i in self._index.items if state is None or i.state == state]
        chosen.sort(key=listing_order)
        return chosen

    def pinned(self, scopes: Collection[Scope] | None = None) -> list[MemoryItem]:
        """Active pinned items (of `scopes` only, if given), newest first: they go into every
        prompt that sees their scope."""
        with self._lock:
            chosen = self._index.pinned(self._index.scope_mask(scopes))
        chosen.sort(key=lambda i: -i.created_at.timestamp())
        return chosen

    def __len__(self) -> int:
        with self._lock:
            return self._index.active_count()

    def history(self, item_id: str) -> list[MemoryEvent]:
        """A memory's events, oldest first (empty for an unknown id); see `history.told`."""
        self._log.read_history()  # once loaded, it stays loaded
        with self._lock:
            item = self._index.get(item_id)
            return [] if item is None else told(item, self._log.history.of(item_id))

    def timeline(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        types: Iterable[EventType] | None = None,
        limit: int | None = None,
    ) -> list[MemoryEvent]:
        """Events of all memories in [since, until), of the given types, newest first (a
        memory forgotten in an earlier session shows only as its "forgotten" event)."""
        self._log.read_history()
        with self._lock:
            history = self._log.history
            events = list(history.every())
            events.extend(creation(i) for i in self._index.items if i.id not in history.created)
            events.extend(  # memories gone from disk (or proposals rejected): tombstones say when
                _burial(memory_id, tombstones[0])
                for memory_id, tombstones in self._log.tombstones.items()
                if memory_id not in self._index
            )
            chosen = select(events, since=since, until=until, types=types, limit=limit)
            return [self._with_text(e) for e in chosen]

    def _with_text(self, event: MemoryEvent) -> MemoryEvent:
        item = self._index.get(event.memory_id)
        return event if item is None else with_text(event, item, self._log.history.of(item.id))

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        query_vector: npt.ArrayLike | None = None,
        config: SearchConfig | None = None,
        prefix: bool = False,
        include_history: bool = False,
        scopes: Collection[Scope] | None = None,
        now: datetime | None = None,
    ) -> list[SearchHit]:
        """The `k` active items most relevant to `query`, best first; with `include_history`
        archived ones too (superseded, faded or archived by hand; not forgotten ones); with
        `scopes`, only the memories of those scopes (project ids; None: the global ones).

        BM25 (over word stems) and cosine rankings are fused (see `ranking`), then importance
        and recency add small boosts. An item qualifies only if it shares a non-stop word with
        the query (one that is not in most items, if the query has such a word) or its
        similarity reaches `min_similarity`, so nothing unrelated comes back; a query of stop
        words alone finds nothing. With `prefix` (search as you type) the last word also
        matches the words it begins: "siste" finds "sister". Archived items have a keyword
        index of their own, whose BM25 ranking is merged with the active items' by score. A
        period the query names ("in May 2023", "last week", resolved against `now`, default
        now) favours the memories that hold from it (see `SearchConfig.date_weight`).
        """
        cfg = config or self.config
        tokens, informative = query_terms(query)
        if prefix:
            with self._lock:
                tokens, informative = expand_last(
                    query, tokens, informative, self._index.with_prefix
                )
        if not informative:
            return []  # only stop words: nothing to look for
        if query_vector is not None:
            qvec: npt.NDArray[np.float32] | None = np.asarray(
                query_vector, dtype=np.float32
            ).reshape(-1)
        else:
            qvec = self._vectors.embed_if_searchable(query)
        self._vectors.refit()  # due after a cache without one; else nothing to do
        at = now or now_utc()
        period = time_span(query, at)
        span = None if period is None else (period[0].timestamp(), period[1].timestamp())
        with self._lock:
            hits = self._index.search(
                tokens,
                informative,
                qvec,
                k=k,
                config=cfg,
                include_history=include_history,
                now=at.timestamp(),
                allowed=self._index.scope_mask(scopes),
                span=span,
            )
        matched = [
            matched_words(query, hit.item.text, prefix=prefix) if hit.keyword_rank else ()
            for hit in hits
        ]
        with self._lock:
            searched = self._index.keyword_count()
            common = [self._index.common_words(words) for words in matched]
        return [
            dataclasses.replace(hit, matched=words, common=shared, searched=searched)
            for hit, words, shared in zip(hits, matched, common, strict=True)
        ]

    def set_contexts(self, changes: Mapping[str, str | None]) -> None:
        """Find these memories (by id) also by these texts, instead of those they had (None:
        by their own text only): the message each was learned from and the one before it."""
        with self._lock:
            self._index.set_contexts(changes)

    def unknown_contexts(self, ids: Iterable[str]) -> list[str]:
        """Those of these memories (by id) that were never given a context, nor none (see
        `set_contexts`; the index cache keeps what was given)."""
        with self._lock:
            return self._index.unknown_contexts(ids)

    def find_related(
        self, text: str, k: int = 5, scopes: Collection[Scope] | None = None
    ) -> list[SearchHit]:
        """The current memories (of `scopes`, if given) most related to `text` by the hybrid
        search, best first: what a new statement is compared with (same fact, an update, a
        contradiction, or new)."""
        return self.search(text, k, scopes=scopes)

    def same_as(self, text: str, scopes: Collection[Scope] | None = None) -> MemoryItem | None:
        """The active memory (of `scopes`, if given) that says the same as `text`, if one does
        (see `same_memory`): what saving merges into, and what the curator need not learn."""
        vector = self._vectors.embed_if_searchable(text)
        with self._lock:
            allowed = self._index.scope_mask(scopes)
            return same_memory(self._index, text, vector, allowed=allowed)

    def find_similar(
        self, text: str, threshold: float = MERGE_THRESHOLD, k: int = 5
    ) -> list[tuple[MemoryItem, float]]:
        """Active items that say nearly the same as `text`, most similar first.

        Similarity is the cosine of the embeddings, or without them the Jaccard index of the
        two texts' word sets.
        """
        vector = self._vectors.embed_if_searchable(text)
        with self._lock:
            return similar(self._index, text, vector, threshold, k)


def _burial(memory_id: str, tombstone: Tombstone) -> MemoryEvent:
    """The "forgotten" event of a memory known only by its tombstone; one of a proposal the
    user rejected says so (its reason is REJECTED_PROPOSAL)."""
    if tombstone.rejected:
        return MemoryEvent(
            memory_id, "forgotten", tombstone.at, by="user", reason=REJECTED_PROPOSAL
        )
    return MemoryEvent(memory_id, "forgotten", tombstone.at)
