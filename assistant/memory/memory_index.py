"""The memory index: items in slots, their keyword (BM25) and vector indexes, and search.

Each item has a slot: its row in the numpy arrays of state (active, pinned, importance, last
use), its key in the BM25 index of the active items (archived ones have a keyword index of
their own, built on first use) and its row in the vector matrix. `place` keeps them in step
when an item changes. Not thread-safe: the store calls it with its lock held.

An item's keyword document holds its text and its context (`set_contexts`): the words of the
message it was learned from and of the one before it, which say what a short fact was about
in the words a later question may use (document expansion, the converse of a message found
by its memories: `message_keys`). The cache records which context each document holds (a
fingerprint), so that a context that changed while the cache slept is indexed again.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.errors import StorageError
from assistant.memory.arrays import ensure_capacity, with_headroom
from assistant.memory.bm25 import BM25Index, Snapshot
from assistant.memory.index_cache import Columns
from assistant.memory.items import MemoryItem, SearchHit
from assistant.memory.ranking import Ranking, SearchConfig, fuse
from assistant.memory.text import stem, terms
from assistant.memory.vectors import VectorMatrix, vector_key

log = logging.getLogger(__name__)

Mask = npt.NDArray[np.bool_]  # a flag per slot


def _fingerprint(context: str) -> str:
    """What identifies a context in the cache (never its text)."""
    return hashlib.sha256(context.encode("utf-8")).hexdigest()[:16]


def dated(item: MemoryItem) -> float:
    """When an item's fact holds from, as far as known (else when it was learned), in POSIX
    seconds: what a period named in a query is compared with."""
    return (item.valid_from or item.created_at).timestamp()


class MemoryIndex:
    """Items by slot, with the arrays, keyword indexes and vectors that search them."""

    def __init__(self, directory: Path, config: SearchConfig) -> None:
        self.directory = directory  # where the vector cache is
        self.config = config
        self.items: list[MemoryItem] = []
        self._slot_of: dict[str, int] = {}
        self._active = np.zeros(1024, dtype=bool)
        self._pinned = np.zeros(1024, dtype=bool)
        self._importance = np.zeros(1024, dtype=np.float64)
        self._last_used = np.zeros(1024, dtype=np.float64)  # POSIX seconds
        self._dated = np.zeros(1024, dtype=np.float64)  # POSIX seconds of `dated`
        self._scope = np.zeros(1024, dtype=np.int32)  # the code of each item's project
        self._scope_codes: dict[str | None, int] = {None: 0}  # global: 0
        self._bm25 = BM25Index(*self._bm25_params())
        self._past: BM25Index | None = None  # archived items, for searches with history
        self._context: dict[str, str] = {}  # item id -> its context, given this session
        self._given: dict[str, str] = {}  # item id -> fingerprint of its context ("": none)
        self._keys: list[str] = []  # per slot: its item's `vector_key`
        self.vectors: VectorMatrix | None = None
        self.vectors_dirty = False

    # -- slots ---------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of slots (items in any state)."""
        return len(self.items)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._slot_of

    def slot(self, item_id: str) -> int:
        """The slot of the item with this id (KeyError if there is none)."""
        slot = self._slot_of.get(item_id)
        if slot is None:
            raise KeyError(f"no memory with id {item_id!r}")
        return slot

    def item(self, item_id: str) -> MemoryItem:
        """The item with this id (KeyError if there is none)."""
        return self.items[self.slot(item_id)]

    def get(self, item_id: str) -> MemoryItem | None:
        """The item with this id, or None."""
        slot = self._slot_of.get(item_id)
        return None if slot is None else self.items[slot]

    def fill(
        self,
        items: list[MemoryItem],
        index: Snapshot | None,
        contexts: Mapping[str, str] | None = None,
        columns: Columns | None = None,
    ) -> None:
        """Load items into the empty index at once; index the active ones unless given (with
        the contexts of `contexts`, by fingerprint). `columns`: what the cache read of them."""
        n = len(items)
        self.items = items
        ids = [i.id for i in items]
        self._slot_of = dict(zip(ids, range(n), strict=True))
        size = with_headroom(n)
        self._active = np.zeros(size, dtype=bool)
        self._active[:n] = [i.state == "active" for i in items]
        self._pinned = np.zeros(size, dtype=bool)
        self._pinned[:n] = [i.pinned for i in items]
        self._importance = np.zeros(size, dtype=np.float64)
        self._importance[:n] = [i.importance for i in items]
        self._last_used = np.zeros(size, dtype=np.float64)
        self._dated = np.zeros(size, dtype=np.float64)
        if columns is None:
            self._last_used[:n] = [i.last_accessed.timestamp() for i in items]
            self._dated[:n] = [dated(i) for i in items]
            self._keys = [vector_key(i.id, i.text) for i in items]
        else:
            self._last_used[:n], self._dated[:n], self._keys = columns
        self._scope = np.zeros(size, dtype=np.int32)
        for slot in [s for s, i in enumerate(items) if i.project is not None]:
            self._scope[slot] = self._scope_code(items[slot].project)
        if index is None:
            self._bm25 = BM25Index(*self._bm25_params())
            self._given = {}
            active = np.flatnonzero(self._active[:n]).tolist()
            self._bm25.add_many(active, [self._document(s) for s in active])
        else:
            self._bm25 = BM25Index.from_snapshot(index, *self._bm25_params())
            self._given = dict(contexts or {})
        self._past = None

    def _bm25_params(self) -> tuple[float, float]:
        return self.config.bm25_k1, self.config.bm25_b

    def place(self, item: MemoryItem) -> int:
        """Put `item` in its slot (a new one for a new id) and keep the indexes in step."""
        slot = self._slot_of.get(item.id)
        old: MemoryItem | None = None
        if slot is None:
            slot = len(self.items)
            self.items.append(item)
            self._keys.append(vector_key(item.id, item.text))
            self._slot_of[item.id] = slot
            size = slot + 1
            self._active = ensure_capacity(self._active, size)
            self._pinned = ensure_capacity(self._pinned, size)
            self._importance = ensure_capacity(self._importance, size)
            self._last_used = ensure_capacity(self._last_used, size)
            self._dated = ensure_capacity(self._dated, size)
            self._scope = ensure_capacity(self._scope, size)
        else:
            old = self.items[slot]
            self.items[slot] = item
            if old.text != item.text:
                self._keys[slot] = vector_key(item.id, item.text)
        active = item.state == "active"
        if item.state == "forgotten":
            self._context.pop(item.id, None)  # no words of it may stay
            self._given.pop(item.id, None)
        self._active[slot] = active
        self._pinned[slot] = item.pinned
        self._importance[slot] = item.importance
        self._last_used[slot] = item.last_accessed.timestamp()
        self._dated[slot] = dated(item)
        self._scope[slot] = self._scope_code(item.project)
        text_changed = old is None or old.text != item.text
        if slot in self._bm25 and (text_changed or not active):
            self._bm25.remove(slot)
        if active and slot not in self._bm25:
            self._bm25.add(slot, self._document(slot))
        if self._past is not None:
            archived = item.state == "archived"
            if slot in self._past and (text_changed or not archived):
                self._past.remove(slot)
            if archived and slot not in self._past:
                self._past.add(slot, self._document(slot, past=True))
        if text_changed and old is not None and self.vectors is not None:
            self.vectors.clear(slot)
        return slot

    def _scope_code(self, project: str | None) -> int:
        return self._scope_codes.setdefault(project, len(self._scope_codes))

    def scope_mask(self, scopes: Collection[str | None] | None) -> Mask | None:
        """The slots whose items are in one of `scopes` (project ids, None: global); None for
        no limit."""
        if scopes is None:
            return None
        codes = [self._scope_codes[s] for s in scopes if s in self._scope_codes]
        return np.isin(self._scope[: self.size], codes)

    def active_mask(self, allowed: Mask | None = None) -> Mask:
        """The active slots (among the `allowed` ones)."""
        active = self._active[: self.size]
        return active if allowed is None else active & allowed

    def snapshot(self) -> Snapshot:
        """The keyword index of the active items, for the cache."""
        return self._bm25.snapshot()

    def contexts(self) -> dict[str, str]:
        """Per item id, the fingerprint of the context its keyword document holds ("": it was
        given none)."""
        return dict(self._given)

    # -- contexts ------------------------------------------------------------------------------

    def set_contexts(self, changes: Mapping[str, str | None]) -> None:
        """Give these items (by id) these contexts instead of those they had (None: none), and
        index again the active ones whose document held another."""
        if not self.config.source_context:
            return
        for item_id, text in changes.items():
            slot = self._slot_of.get(item_id)
            if slot is None or self.items[slot].state == "forgotten":
                continue
            if text:
                self._context[item_id] = text
            else:
                self._context.pop(item_id, None)
            had, given = self._given.get(item_id), _fingerprint(text) if text else ""
            if had == given:
                continue
            self._given[item_id] = given
            if slot in self._bm25 and (had or given):  # its document changes
                self._bm25.remove(slot)
                self._bm25.add(slot, self._document(slot))
            if self._past is not None and slot in self._past:
                self._past.remove(slot)
                self._past.add(slot, self._document(slot, past=True))

    def unknown_contexts(self, ids: Iterable[str]) -> list[str]:
        """Those of these items (by id) whose context was never given (nor cached)."""
        return [i for i in ids if i not in self._given]

    def _document(self, slot: int, *, past: bool = False) -> list[str]:
        """The keyword document of an item: its text's terms and its context's (if the
        configuration uses contexts)."""
        item = self.items[slot]
        out = terms(item.text)
        context = self._context.get(item.id)
        if context is None and self._given.get(item.id) and not past:
            del self._given[item.id]  # given in an earlier session: it must be given again
        if context and self.config.source_context:
            out += terms(context)
        return out

    # -- by state ------------------------------------------------------------------------------

    def active_count(self) -> int:
        """How many items are active."""
        return int(self._active[: self.size].sum())

    def pinned(self, allowed: Mask | None = None) -> list[MemoryItem]:
        """The active pinned items (among the `allowed` slots), in slot order."""
        chosen = self.active_mask(allowed) & self._pinned[: self.size]
        return [self.items[s] for s in np.flatnonzero(chosen)]

    def unused_since(self, when: float) -> list[int]:
        """The slots of the active unpinned items last used at or before `when` (POSIX)."""
        n = self.size
        due = self._active[:n] & ~self._pinned[:n] & (self._last_used[:n] <= when)
        return list(np.flatnonzero(due).tolist())

    def faded_below(self, below: float) -> list[MemoryItem]:
        """The active unpinned items that decay took below importance `below` (and that a pass
        had no room to archive yet)."""
        n = self.size
        slots = np.flatnonzero(
            self._active[:n] & ~self._pinned[:n] & (self._importance[:n] < below)
        )
        found = (self.items[s] for s in slots.tolist())
        return [item for item in found if item.decayed_at is not None]

    def newest_time(self) -> datetime | None:
        """The newest time an item records: made, changed or used."""
        return max((max(i.updated_at, i.last_accessed) for i in self.items), default=None)

    # -- search --------------------------------------------------------------------------------

    def common_words(self, words: Iterable[str]) -> tuple[tuple[str, int], ...]:
        """Of `words` (as typed), those in the keyword documents of more than half of the active
        memories, with how many have each: BM25 weighs such a word next to nothing. None when
        there is a single memory: there is nothing to set it apart from."""
        total = len(self._bm25)
        if total < 2:
            return ()
        found = []
        for word in words:
            have = self._bm25.frequency(stem(word.lower()))
            if 2 * have > total:
                found.append((word, have))
        return tuple(found)

    def keyword_count(self) -> int:
        """How many memories keyword search looks through (the active ones)."""
        return len(self._bm25)

    def with_prefix(self, prefix: str) -> list[str]:
        """The indexed words that begin with `prefix` (for search as you type)."""
        return self._bm25.with_prefix(prefix)

    def search(
        self,
        tokens: Sequence[str],
        informative: Sequence[str],
        qvec: npt.NDArray[np.float32] | None,
        *,
        k: int,
        config: SearchConfig,
        include_history: bool,
        now: float,
        allowed: Mask | None = None,
        span: tuple[float, float] | None = None,
    ) -> list[SearchHit]:
        """The `k` best active items (and archived ones, with `include_history`) among the
        `allowed` slots for the query words and vector: BM25 and cosine rankings fused with
        importance and recency; those dated in `span` (POSIX seconds, end exclusive: a period
        the query names) favoured."""
        depth = max(config.depth, k)
        n = self.size
        lexical = self._bm25.top(tokens, depth, require=informative, allowed=allowed)
        mask = self._active[:n]
        if include_history:
            past = self.past().top(tokens, depth, require=informative, allowed=allowed)
            lexical = sorted(lexical + past, key=lambda pair: -pair[1])[:depth]
            mask = mask | np.fromiter((i.state == "archived" for i in self.items), bool, n)
        if allowed is not None:
            mask = mask & allowed
        dense = self.dense_top(qvec, depth, config.min_similarity, config, mask)
        return fuse(
            lexical,
            dense,
            items=self.items,
            importance=self._importance,
            last_used=self._last_used,
            now=now,
            k=k,
            config=config,
            in_span=None if span is None else (self._dated >= span[0]) & (self._dated < span[1]),
        )

    def keyword_top(
        self,
        tokens: Sequence[str],
        k: int,
        require: Sequence[str] | None,
        *,
        past: bool = False,
        allowed: Mask | None = None,
    ) -> Ranking:
        """The best `k` slots by BM25 among the active items (or the archived ones), of the
        `allowed` slots only if given."""
        index = self.past() if past else self._bm25
        return index.top(tokens, k, require=require, allowed=allowed)

    def past(self) -> BM25Index:
        """The keyword index of the archived items, built on first use."""
        if self._past is None:
            self._past = BM25Index(*self._bm25_params())
            slots = [s for s, item in enumerate(self.items) if item.state == "archived"]
            self._past.add_many(slots, [self._document(s, past=True) for s in slots])
        return self._past

    def dense_top(
        self,
        qvec: npt.NDArray[np.float32] | None,
        depth: int,
        floor: float,
        cfg: SearchConfig,
        mask: npt.NDArray[np.bool_] | None = None,
    ) -> Ranking:
        """The best `depth` items by cosine among `mask` (default: the active ones), if at
        least `floor`, best first."""
        vectors = self.vectors
        if qvec is None or vectors is None or len(qvec) != vectors.dim:
            return []
        norm = float(np.linalg.norm(qvec))
        if not math.isfinite(norm) or norm == 0:
            return []
        candidates = max(
            depth, cfg.rescore_factor * depth, int(cfg.rescore_fraction * vectors.count)
        )
        slots, sims = vectors.nearest(
            qvec / norm,
            self._active[: self.size] if mask is None else mask,
            depth,
            exact_up_to=cfg.exact_up_to,
            candidates=candidates,
        )
        keep = sims >= np.float64(floor)  # in float64: the floor in float32 may be a bit lower
        return list(zip(slots[keep].tolist(), sims[keep].tolist(), strict=True))

    # -- vectors -------------------------------------------------------------------------------

    def has_vectors(self, name: str) -> bool:
        """Whether there are vectors of the embedder `name`."""
        return self.vectors is not None and self.vectors.name == name

    def has_vector(self, slot: int) -> bool:
        """Whether the item in `slot` has a vector."""
        return self.vectors is not None and self.vectors.has(slot)

    def embedded_count(self) -> int:
        """How many active items have a vector."""
        if self.vectors is None:
            return 0
        n = self.size
        return int((self._active[:n] & self.vectors.present(n)).sum())

    def missing_vectors(self, name: str) -> list[tuple[int, str]]:
        """(slot, text) of the active items without a vector of the embedder `name`."""
        n = self.size
        missing = self._active[:n].copy()
        if self.has_vectors(name) and self.vectors is not None:
            missing &= ~self.vectors.present(n)
        return [(int(s), self.items[s].text) for s in np.flatnonzero(missing)]

    def set_vectors(
        self, name: str, vectors: npt.NDArray[np.float32], slots: Sequence[int]
    ) -> bool:
        """Store vectors of the embedder `name`; True if they replaced vectors of another
        dimension or embedder."""
        dim = vectors.shape[1]
        replaced = False
        if self.vectors is None or self.vectors.name != name or self.vectors.dim != dim:
            replaced = self.vectors is not None
            self.vectors = VectorMatrix(name, dim, capacity=with_headroom(self.size))
        try:
            self.vectors.set_many(slots, vectors)
        except ValueError as exc:
            log.warning("Ignoring unusable vectors from %s: %s", name, exc)
            return replaced
        self.vectors_dirty = True
        return replaced

    def load_vectors(self, name: str) -> None:
        """Take the cached vectors of the embedder `name`, if any."""
        self.vectors = VectorMatrix.from_cache(self.directory, name, self._keys)
        self.vectors_dirty = self.vectors is not None and self.vectors.restamp

    def save_vectors(self) -> None:
        """Write the vector cache if it changed (a failure is logged: it is derived data)."""
        if self.vectors is None or not self.vectors_dirty:
            return
        try:
            self.vectors.save(self.directory, self._keys)
        except (OSError, StorageError) as exc:
            log.warning("Could not save the vector cache: %s", exc)
            return
        self.vectors_dirty = False

    def drop_forgotten_vectors(self) -> None:
        """Clear the vectors of the forgotten items (they must not reach the cache)."""
        if self.vectors is None:
            return
        for slot, item in enumerate(self.items):
            if item.state == "forgotten" and self.vectors.has(slot):
                self.vectors.clear(slot)
                self.vectors_dirty = True
