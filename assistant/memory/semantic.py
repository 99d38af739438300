"""Semantic long-term memory: durable items, hybrid search, pinning, forgetting and decay.

Items live in `semantic.jsonl`, an append-only log of `put` records (the whole item after each
change), `used` records (access statistics, and "used" events) and `event` records (the
history: created, edited, merged, superseded, ...), compacted when dead records outnumber live
ones. Each item has a slot: its row in the numpy arrays of state (active, pinned, importance,
last use), in the BM25 index and in the vector matrix. Forgotten items leave search at once
and the file at the next open or close, so Undo works until the app quits.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assistant.errors import AssistantError, ProviderError, StorageError
from assistant.fileio import atomic_write_bytes, copy_aside, make_dir, refuse_link
from assistant.memory import index_cache, jsonl
from assistant.memory.arrays import ensure_capacity, with_headroom
from assistant.memory.bm25 import BM25Index
from assistant.memory.embedding import Embedder, embedding_batches
from assistant.memory.fading import archive_limit, decay_clock
from assistant.memory.history import History, creation, events_of, select, told, with_text
from assistant.memory.items import (
    KINDS,
    ChangeKind,
    EventType,
    MemoryChange,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    MemoryState,
    Origin,
    SearchHit,
    Source,
    listing_order,
)
from assistant.memory.ranking import SearchConfig, fuse
from assistant.memory.subscribers import Subscribers
from assistant.memory.text import expand_last, matched_words, query_terms, terms, tokenize
from assistant.memory.tombstones import Fingerprint, Meaning, Tombstone, fold
from assistant.memory.vectors import VectorMatrix
from assistant.timestamps import now_utc, stamp

log = logging.getLogger(__name__)

LOG_VERSION = 3  # 2: origins, links and validity in items; `event` records; `used` replies
# 3: origin "mcp" with the MCP client's name. Only the records that hold them say 3, so a log
# without them still opens in a version that knows 2, and one with them is refused cleanly.
_PLAIN_VERSION = 2
LOG_NAME = "semantic.jsonl"
MAX_TEXT_CHARS = 2000  # a memory is a fact, not a document; bounds every prompt it enters
MERGE_THRESHOLD = 0.85  # a new memory this similar to an active one is merged into it
ARCHIVE_BELOW = 0.1  # decay archives a memory whose importance falls below this
_DECAY_FACTOR = 0.8  # decay changes a memory once its importance would fall to this share
_MIN_COMPACT_DEAD = 500

# Never learn a forgotten fact again from these (the user's own adding lifts the tombstone).
LEARNED: tuple[Origin, ...] = ("curator", "reflection", "mcp")

Subscriber = Callable[[MemoryChange], None]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Inserted:
    """What `insert` did with each item (by the id it came with)."""

    stored: list[MemoryItem]  # added as new memories
    ids: dict[str, str]  # item id -> the id of its memory here (stored, merged or present)
    merged: list[str]  # merged into a memory here that says the same
    present: list[str]  # their id is here already: left alone
    forgotten: list[str]  # a fact the user made the assistant forget: not brought back


class ForgottenFactError(AssistantError):
    """The curator or a reflection tried to learn a fact the user made the assistant forget."""


@dataclass(frozen=True)
class Embedded:
    """Vectors and the embedder that made them."""

    embedder: Embedder
    vectors: npt.NDArray[np.float32]


@dataclass(frozen=True)
class EmbeddingStatus:
    """How much of the active memory has vectors, and why search may be keyword-only."""

    model: str | None
    embedded: int
    total: int
    error: str | None = None

    @property
    def keyword_only(self) -> bool:
        """Whether searches currently use BM25 alone."""
        return self.model is None or self.error is not None or self.embedded == 0


class SemanticMemory:
    """The long-term memory store; every public method is thread-safe."""

    def __init__(
        self, directory: Path, embedder: Embedder | None, config: SearchConfig | None = None
    ) -> None:
        """Use `SemanticMemory.open`."""
        self.directory = directory
        self.config = config or SearchConfig()
        self.warnings: list[str] = []
        self.clock_warning: str | None = None  # what the last decay said of the clock
        self._lock = threading.RLock()
        self._subscribers: Subscribers[MemoryChange] = Subscribers("memory")
        self._embedder = embedder
        self._embed_error: str | None = None
        self._vectors: VectorMatrix | None = None
        self._vectors_dirty = False
        self._refitting = False  # a projection is being fitted, outside the lock
        self._items: list[MemoryItem] = []
        self._slot_of: dict[str, int] = {}
        self._active = np.zeros(1024, dtype=bool)
        self._pinned = np.zeros(1024, dtype=bool)
        self._importance = np.zeros(1024, dtype=np.float64)
        self._last_used = np.zeros(1024, dtype=np.float64)  # POSIX seconds
        self._bm25 = BM25Index(*self._bm25_params())
        self._past: BM25Index | None = None  # archived items, for searches with history
        self._history = History()
        # By the forgotten memory's id: one for each of the texts it had.
        self._tombstones: dict[str, list[Tombstone]] = {}
        self._records = 0
        self._dead = 0  # records a compaction would drop (older puts, used records)
        self._offset = 0  # the log's bytes these items reflect
        self._foreign = False  # someone else wrote to the log: never rewrite it or cache it
        self._log: jsonl.Appender | None = None

    # -- opening, closing, files ---------------------------------------------------------------

    @classmethod
    def open(
        cls, path: Path, embedder: Embedder | None = None, config: SearchConfig | None = None
    ) -> SemanticMemory:
        """Open (or create) the store in directory `path`."""
        make_dir(path)
        mem = cls(path, embedder, config)
        mem._load()
        return mem

    @property
    def _log_path(self) -> Path:
        return self.directory / LOG_NAME

    def _load(self) -> None:
        refuse_link(self._log_path)
        cached = index_cache.load(self.directory, self._log_path)
        if cached is None or cached.truncated or not self._load_cached(cached):
            self._load_log(cached if cached is not None and cached.truncated else None)
        self._log = jsonl.Appender(self._log_path)
        self._offset = self._log.size
        if self._embedder is not None:
            self._load_vectors(self._embedder.name)

    def _load_cached(self, cached: index_cache.Cached) -> bool:
        """Take the items from the cache and replay the records after it; False if it cannot."""
        tail = jsonl.read_tail(self._log_path, cached.offset)
        if tail is None:
            return False
        changed: dict[str, MemoryItem] = {}
        tombstones: dict[str, list[Tombstone]] = {}
        for tombstone in cached.tombstones:
            tombstones.setdefault(tombstone.memory_id, []).append(tombstone)
        slot_of = {item.id: slot for slot, item in enumerate(cached.items)}
        dead = 0
        try:
            for record in tail:
                dead += _is_dead(record, lambda i: i in slot_of or i in changed)
                for item_id in record.get("ids", ()) if record.get("op") == "used" else ():
                    if item_id not in changed and item_id in slot_of:
                        changed[item_id] = cached.items[slot_of[item_id]]
                self._replay(record, changed, tombstones)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("%s: replaying the whole log (%s)", LOG_NAME, exc)
            return False
        self._fill(cached.items, BM25Index.from_snapshot(cached.index, *self._bm25_params()))
        for item in changed.values():
            self._place(item)
        self._tombstones = tombstones
        self._records = cached.records + len(tail)
        self._dead = cached.dead + dead
        return True

    def _load_log(self, lost: index_cache.Cached | None = None) -> None:
        """Replay the log, dropping forgotten items and moving unreadable records aside.

        With `lost` (a cache of a longer log: the log was cut or replaced), the original is
        copied aside first, the memories only the cache has are put back, and the user is told.
        """
        kept = copy_aside(self._log_path) if lost is not None and self._log_path.exists() else None
        loaded = jsonl.read(self._log_path)
        self.warnings.extend(loaded.warnings)
        items: dict[str, MemoryItem] = {}
        events: list[MemoryEvent] = []
        bad = 0
        for record in loaded.records:
            _refuse_newer(record)
            try:
                events.extend(self._replay(record, items, self._tombstones))
            except (ValueError, KeyError, TypeError) as exc:
                bad += 1
                log.warning("%s: skipped a bad record: %s", LOG_NAME, exc)
        if bad:
            kept = kept or copy_aside(self._log_path)
            self.warnings.append(
                f"{LOG_NAME}: skipped {bad} unreadable memory record(s); "
                f"the original file was kept as {kept.name}."
            )
        restored = 0
        if lost is not None:
            for item in lost.items:
                if item.id not in items:
                    items[item.id] = item
                    restored += 1
            self.warnings.append(_truncation_warning(lost, restored, kept))
        live = [item for item in items.values() if item.state != "forgotten"]
        self._fill(live, None)
        self._history.load(events, lambda item_id: item_id in self._slot_of)
        self._records = len(loaded.records)
        live_records = len(live) + len(self._history.kept([i.id for i in live]))
        self._dead = max(0, self._records - live_records)
        self._offset = index_cache.log_size(self._log_path)
        if bad or restored or len(live) < len(items) or self._needs_compaction():
            self._rewrite_log()

    def _fill(self, items: list[MemoryItem], index: BM25Index | None) -> None:
        """Load items into the empty store at once; index the active ones unless given."""
        n = len(items)
        self._items = items
        self._slot_of = {item.id: slot for slot, item in enumerate(items)}
        size = with_headroom(n)
        self._active = np.zeros(size, dtype=bool)
        self._active[:n] = [i.state == "active" for i in items]
        self._pinned = np.zeros(size, dtype=bool)
        self._pinned[:n] = [i.pinned for i in items]
        self._importance = np.zeros(size, dtype=np.float64)
        self._importance[:n] = [i.importance for i in items]
        self._last_used = np.zeros(size, dtype=np.float64)
        self._last_used[:n] = [i.last_accessed.timestamp() for i in items]
        if index is None:
            index = BM25Index(*self._bm25_params())
            active = np.flatnonzero(self._active[:n]).tolist()
            index.add_many(active, [terms(items[s].text) for s in active])
        self._bm25 = index
        self._past = None

    def _bm25_params(self) -> tuple[float, float]:
        return self.config.bm25_k1, self.config.bm25_b

    @staticmethod
    def _replay(
        record: dict[str, Any],
        items: dict[str, MemoryItem],
        tombstones: dict[str, list[Tombstone]],
    ) -> list[MemoryEvent]:
        """Apply a record to `items` and `tombstones`; the events it holds (history only: read,
        not applied)."""
        if record.get("version") not in (1, _PLAIN_VERSION, LOG_VERSION):
            raise ValueError(f"unsupported record version {record.get('version')!r}")
        events = events_of(record)
        op = record.get("op")
        if op == "tombstone":
            tombstone = Tombstone.from_json(record["tombstone"])
            tombstones.setdefault(tombstone.memory_id, []).append(tombstone)
        elif op == "lift":
            tombstones.pop(_field(record, "memory_id"), None)
        elif op == "put":
            item = MemoryItem.from_json(record["item"])
            items[item.id] = item
        elif op == "used":
            at = datetime.fromisoformat(record["at"])
            for item_id in record["ids"]:
                if item_id in items:
                    old = items[item_id]
                    items[item_id] = old._replace(
                        access_count=old.access_count + 1, last_accessed=at
                    )
        elif op != "event":
            raise ValueError(f"unknown operation {op!r}")
        return events

    def _needs_compaction(self) -> bool:
        return self._dead > max(self._records - self._dead, _MIN_COMPACT_DEAD)

    def _log_is_ours(self) -> bool:
        """Whether the log holds exactly what these items reflect (nobody else wrote to it)."""
        if self._foreign:
            return False
        if self._log is not None:
            current = self._log.is_current(self._offset)
        else:  # opening: nothing appended yet
            current = index_cache.log_size(self._log_path) == self._offset
        if not current:
            log.warning("%s changed under this process: it will not be rewritten", LOG_NAME)
            self._foreign = True
        return not self._foreign

    def _rewrite_log(self, *, drop_forgotten: bool = False) -> bool:
        """Replace the log by one `put` record per item and the events kept of each
        (atomically); False if it is not ours."""
        if not self._log_is_ours():
            return False
        self._load_history()
        keep = [i for i in self._items if not (drop_forgotten and i.state == "forgotten")]
        events = self._history.kept([i.id for i in keep])
        records = [_put(i) for i in keep] + [_event(e) for e in events]
        records += [_tombstone(t) for ts in self._tombstones.values() for t in ts]
        data = b"".join(jsonl.encode(r) for r in records)
        atomic_write_bytes(self._log_path, data)
        self._history.load(events, lambda _id: True)  # what the log now holds
        self._records = len(records)
        self._dead = 0
        self._offset = len(data)
        if self._log is not None:
            self._log.reopen()
        return True

    def _append(self, *records: dict[str, Any]) -> None:
        if self._log is None:
            raise StorageError("The memory store is closed.")
        if self._needs_compaction():  # before the append: the log matches the items now
            self._rewrite_log()
        start = self._log.append(*records)
        if start != self._offset and not self._foreign:
            log.warning("%s was appended to by another process", LOG_NAME)
            self._foreign = True
        self._offset = self._log.size
        self._records += len(records)
        self._dead += sum(_is_dead(r, self._slot_of.__contains__) for r in records)

    def _commit(
        self,
        items: Sequence[MemoryItem],
        events: Sequence[MemoryEvent],
        *,
        buried: Sequence[Tombstone] = (),
        lifted: Sequence[str] = (),
    ) -> list[int]:
        """Append the items, events, new tombstones and lifted ones (by memory id) in one write
        and apply them (under the lock); the items' slots. A write cut short by a crash keeps
        a prefix of it: new tombstones come first and lifts last, so that such a crash never
        leaves a forgotten memory without its tombstone."""
        self._append(
            *(_tombstone(t) for t in buried),
            *(_put(i) for i in items),
            *(_event(e) for e in events),
            *({"version": _PLAIN_VERSION, "op": "lift", "memory_id": i} for i in lifted),
        )
        slots = [self._place(item) for item in items]
        self._history.record(events)
        for tombstone in buried:
            self._tombstones.setdefault(tombstone.memory_id, []).append(tombstone)
        for memory_id in lifted:
            self._tombstones.pop(memory_id, None)
        return slots

    def _load_history(self) -> None:
        """Read the events from the log if they were not (the store opened from its cache);
        under the lock."""
        if not self._history.loaded:
            events = _events_in(self._log_path, 0, self._offset)
            self._history.load(events, self._slot_of.__contains__)

    @property
    def history_loaded(self) -> bool:
        """Whether `history` answers without reading the log."""
        with self._lock:
            return self._history.loaded

    def load_history(self) -> None:
        """Read the memories' histories from the log now, if they were not (call it off the
        GUI thread after opening: the first `history` or `timeline` need not wait then), and
        tell the subscribers ("history")."""
        self._history_ready()
        self._emit("history")

    def _history_ready(self) -> None:
        """Load the history if it is not, reading most of the log without holding the lock
        (it takes seconds at 100,000 memories): only what was appended meanwhile is read
        under it. A compaction meanwhile loads it itself."""
        with self._lock:
            if self._history.loaded:
                return
            offset = self._offset
        try:
            events = _events_in(self._log_path, 0, offset)
        except StorageError:
            events = []  # read again below, under the lock, where a failure is reported
            offset = 0
        with self._lock:
            if not self._history.loaded:
                events += _events_in(self._log_path, offset, self._offset)
                self._history.load(events, self._slot_of.__contains__)

    def compact(self) -> None:
        """Rewrite the log with one record per item."""
        with self._lock:
            self._rewrite_log()

    def close(self) -> None:
        """Save the vector cache (without the forgotten items' vectors), drop forgotten items
        from disk and close the log."""
        with self._lock:
            if self._log is None:
                return
            if self._vectors is not None:
                for slot, item in enumerate(self._items):
                    if item.state == "forgotten" and self._vectors.has(slot):
                        self._vectors.clear(slot)
                        self._vectors_dirty = True
            self._save_vectors()
            ours = self._log_is_ours()
            self._log.close()
            self._log = None
            if not ours:
                return  # the old cache (if any) stays valid: the records after it are replayed
            snapshot = self._bm25.snapshot()
            items = self._items
            if any(i.state == "forgotten" for i in self._items):
                try:
                    self._rewrite_log(drop_forgotten=True)
                except StorageError as exc:  # they are dropped at the next open instead
                    log.warning("Could not compact the memory log: %s", exc)
                else:
                    kept = np.array([i.state != "forgotten" for i in self._items], dtype=bool)
                    keys = (np.cumsum(kept) - 1)[snapshot.keys]
                    snapshot = dataclasses.replace(snapshot, keys=keys)
                    items = [i for i in self._items if i.state != "forgotten"]
            try:
                index_cache.save(
                    self.directory,
                    self._log_path,
                    items,
                    snapshot,
                    tombstones=[t for ts in self._tombstones.values() for t in ts],
                    records=self._records,
                    dead=self._dead,
                    offset=self._offset,
                )
            except (OSError, StorageError) as exc:
                log.warning("Could not write the memory index cache: %s", exc)

    # -- slots ---------------------------------------------------------------------------------

    def _place(self, item: MemoryItem) -> int:
        """Put `item` in its slot (a new one for a new id) and keep the indexes in step."""
        slot = self._slot_of.get(item.id)
        old: MemoryItem | None = None
        if slot is None:
            slot = len(self._items)
            self._items.append(item)
            self._slot_of[item.id] = slot
            size = slot + 1
            self._active = ensure_capacity(self._active, size)
            self._pinned = ensure_capacity(self._pinned, size)
            self._importance = ensure_capacity(self._importance, size)
            self._last_used = ensure_capacity(self._last_used, size)
        else:
            old = self._items[slot]
            self._items[slot] = item
        active = item.state == "active"
        self._active[slot] = active
        self._pinned[slot] = item.pinned
        self._importance[slot] = item.importance
        self._last_used[slot] = item.last_accessed.timestamp()
        text_changed = old is None or old.text != item.text
        if slot in self._bm25 and (text_changed or not active):
            self._bm25.remove(slot)
        if active and slot not in self._bm25:
            self._bm25.add(slot, terms(item.text))
        if self._past is not None:
            archived = item.state == "archived"
            if slot in self._past and (text_changed or not archived):
                self._past.remove(slot)
            if archived and slot not in self._past:
                self._past.add(slot, terms(item.text))
        if text_changed and old is not None and self._vectors is not None:
            self._vectors.clear(slot)
        return slot

    def _item(self, item_id: str) -> MemoryItem:
        slot = self._slot_of.get(item_id)
        if slot is None:
            raise KeyError(f"no memory with id {item_id!r}")
        return self._items[slot]

    def _n(self) -> int:
        return len(self._items)

    # -- subscribers ---------------------------------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback` after each change, on the changing thread; returns an unsubscribe."""
        return self._subscribers.add(callback)

    def _emit(self, kind: ChangeKind, ids: Iterable[str] = ()) -> None:
        self._subscribers.notify(MemoryChange(kind, tuple(ids)))

    # -- embeddings ----------------------------------------------------------------------------

    def _embed(self, texts: Sequence[str], *, strict: bool = False) -> Embedded | None:
        """Embed texts (call outside the lock); on failure remember the error and return None.

        With `strict`, the error is raised instead.
        """
        embedder = self._embedder
        if embedder is None or not texts:
            return None
        try:
            vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
            if vectors.ndim != 2 or len(vectors) != len(texts):
                raise ProviderError(
                    f"The embedding server returned vectors of shape {vectors.shape}."
                )
        except (AssistantError, ValueError) as exc:
            self._set_embed_error(str(exc))
            if strict:
                raise
            log.warning("Embedding failed, using keyword search only: %s", exc)
            return None
        self._set_embed_error(None)
        self._check_dimension(embedder, vectors.shape[1])
        return Embedded(embedder, vectors)

    def _check_dimension(self, embedder: Embedder, dim: int) -> None:
        """Drop cached vectors of this model if the server now returns another dimension."""
        with self._lock:
            stale = self._vectors
            if stale is None or stale.name != embedder.name or stale.dim == dim:
                return
            log.warning("Embedding model %s changed dimension; re-embedding all", stale.name)
            self._vectors = None
            self._vectors_dirty = False
        self._emit("embeddings")

    def _set_embed_error(self, error: str | None) -> None:
        if error != self._embed_error:
            self._embed_error = error
            self._emit("embeddings")

    def _store_vectors(self, embedded: Embedded, slots: Sequence[int]) -> bool:
        """Store vectors (under the lock); True if they replaced vectors of another dimension."""
        if embedded.embedder is not self._embedder:
            return False  # the embedder changed while these were computed
        name, dim = embedded.embedder.name, embedded.vectors.shape[1]
        replaced = False
        if self._vectors is None or self._vectors.name != name or self._vectors.dim != dim:
            replaced = self._vectors is not None
            self._vectors = VectorMatrix(name, dim, capacity=with_headroom(self._n()))
        try:
            self._vectors.set_many(slots, embedded.vectors)
        except ValueError as exc:
            log.warning("Ignoring unusable vectors from %s: %s", name, exc)
            return replaced
        self._vectors_dirty = True
        return replaced

    def _refit_projection(self) -> None:
        """Fit the dense search's projection if it is due (see `VectorMatrix.refit_due`).

        Call without the lock held: it is taken only to snapshot and to adopt, so the GUI's
        reads never wait for a fit (up to a second at 100,000 vectors).
        """
        with self._lock:
            vectors = self._vectors
            if vectors is None or self._refitting or not vectors.refit_due(self.config.exact_up_to):
                return
            self._refitting = True
            refit = vectors.begin_refit()
        fitted = None
        try:
            fitted = refit.compute()
        finally:
            with self._lock:
                self._refitting = False
                vectors.end_refit(refit, fitted)
                if fitted is not None and vectors is self._vectors:
                    self._vectors_dirty = True

    def _load_vectors(self, name: str) -> None:
        self._vectors = VectorMatrix.from_cache(self.directory, name, self._slot_of)
        self._vectors_dirty = self._vectors is not None and self._vectors.restamp

    def _save_vectors(self) -> None:
        if self._vectors is None or not self._vectors_dirty:
            return
        try:
            self._vectors.save(self.directory, [i.id for i in self._items])
        except (OSError, StorageError) as exc:
            log.warning("Could not save the vector cache: %s", exc)
            return
        self._vectors_dirty = False

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Switch embedders; vectors of another model are set aside and items re-embedded later."""
        with self._lock:
            self._embedder = embedder
            self._embed_error = None
            if self._vectors is not None and (
                embedder is None or self._vectors.name != embedder.name
            ):
                self._save_vectors()
                self._vectors = None
            if embedder is not None and self._vectors is None:
                self._load_vectors(embedder.name)
        self._emit("embeddings")

    def embedding_status(self) -> EmbeddingStatus:
        """How many active items have vectors of the current embedder."""
        with self._lock:
            n = self._n()
            active = self._active[:n]
            embedded = 0
            if self._vectors is not None:
                embedded = int((active & self._vectors.present(n)).sum())
            model = self._embedder.name if self._embedder is not None else None
            return EmbeddingStatus(model, embedded, int(active.sum()), self._embed_error)

    def embed_missing(
        self, progress: Progress | None = None, cancel: Callable[[], bool] | None = None
    ) -> int:
        """Embed the active items that have no vector, in batches; returns how many were embedded.

        `progress(done, total)` is called after each batch; `cancel()` is checked between
        batches. Raises the embedder's error (a ProviderError) if a batch fails.
        """
        done = 0
        restart = True
        while restart:
            restart = False
            todo = self._missing_vectors()
            total = done + len(todo)
            if progress is not None:
                progress(done, total)
            for batch in embedding_batches(todo):
                if cancel is not None and cancel():
                    break
                embedded = self._embed([text for _, text in batch], strict=True)
                if embedded is None:  # the embedder was removed
                    return done
                with self._lock:
                    fresh = [i for i, (s, text) in enumerate(batch) if self._items[s].text == text]
                    restart = self._store_vectors(
                        Embedded(embedded.embedder, embedded.vectors[fresh]),
                        [batch[i][0] for i in fresh],
                    )
                self._refit_projection()
                done += len(batch)
                if progress is not None:
                    progress(done, total)
                if restart:
                    break
        with self._lock:
            self._save_vectors()
        self._emit("embeddings")
        return done

    def _missing_vectors(self) -> list[tuple[int, str]]:
        """(slot, text) of the active items without a vector of the current embedder."""
        with self._lock:
            if self._embedder is None:
                return []
            n = self._n()
            missing = self._active[:n].copy()
            if self._vectors is not None and self._vectors.name == self._embedder.name:
                missing &= ~self._vectors.present(n)
            return [(int(s), self._items[s].text) for s in np.flatnonzero(missing)]

    # -- items ---------------------------------------------------------------------------------

    def add(
        self,
        text: str,
        kind: MemoryKind = "fact",
        importance: float = 0.5,
        *,
        source: Source | None = None,
        tags: Sequence[str] = (),
        pinned: bool = False,
        vector: npt.ArrayLike | None = None,
        origin: Origin = "user",
        valid_from: datetime | None = None,
        rests_on: Sequence[str] = (),
        client: str | None = None,
    ) -> MemoryItem:
        """Remember `text` (a "created" event says who and from where); durable when this
        returns. `vector` skips the embedder; `client` names the MCP client (origin "mcp").

        A fact that was forgotten is refused (ForgottenFactError) if the curator or a
        reflection learns it; the user adding it lifts its tombstone.
        """
        text = _clean_text(text)
        _check(kind, importance)
        self._refuse_forgotten(text, origin)
        embedded = self._vector_for(text, vector)
        item = MemoryItem.new(
            text,
            kind,
            importance,
            source=source,
            tags=tags,
            pinned=pinned,
            origin=origin,
            valid_from=valid_from,
            rests_on=tuple(rests_on),
            client=client,
        )
        with self._lock:
            lifted = self._buried_as(text) if origin == "user" else []
            [slot] = self._commit([item], [creation(item)], lifted=lifted)
            if embedded is not None:
                self._store_vectors(embedded, [slot])
        self._refit_projection()
        self._emit("added", [item.id])
        return item

    def is_forgotten_fact(self, text: str) -> bool:
        """Whether `text` says a fact that was forgotten: it matches a tombstone by its words
        or, with the embedder at hand, by its meaning (other words, a homoglyph)."""
        with self._lock:
            if self._buried_as(text):
                return True
            model = self._embedder.name if self._embedder is not None else None
            sketched = any(
                t.fingerprint.model == model for ts in self._tombstones.values() for t in ts
            )
        if not sketched:
            return False
        meaning = self._meanings([text])[0]
        with self._lock:
            return bool(meaning is not None and self._buried_as(text, meaning))

    def _meanings(self, texts: Sequence[str]) -> list[Meaning | None]:
        """The meanings of `texts` (their folded text's vectors) for tombstones; call outside
        the lock. None for each when there is no embedder or it fails."""
        embedded = self._embed([fold(t) for t in texts])
        if embedded is None:
            return [None] * len(texts)
        return [Meaning(embedded.embedder.name, v) for v in embedded.vectors]

    def _buried_as(self, text: str, meaning: Meaning | None = None) -> list[str]:
        """The ids of the forgotten memories whose tombstones match `text` (under the lock):
        by its words, and by its `meaning` if given."""
        if not self._tombstones:
            return []
        fingerprint = Fingerprint.of(text, meaning)
        return [
            memory_id
            for memory_id, tombstones in self._tombstones.items()
            if any(t.fingerprint.matches(fingerprint) for t in tombstones)
        ]

    def _refuse_forgotten(self, text: str, by: Origin) -> None:
        if by in LEARNED and self.is_forgotten_fact(text):
            raise ForgottenFactError(
                f"Not learned again: the user made the assistant forget this ({text[:60]!r})."
            )

    def insert(
        self,
        items: Sequence[MemoryItem],
        *,
        events: Iterable[MemoryEvent] = (),
        dedupe: bool = True,
    ) -> Inserted:
        """Store items as they are (ids, times, counts, links), e.g. from an import, with their
        `events`; memories are never duplicated.

        An item whose id is here already is left alone; one that says a forgotten fact is not
        brought back; one whose normalised text (word stems) is that of a memory here, or
        whose meaning is as close as MERGE_THRESHOLD to an active one (or to an item stored
        earlier in this call), is merged into it: its id is mapped to that memory's, which
        gains a "merged" event and the item's history. Links between the items (supersedes,
        superseded_by, rests_on) follow the mapping. Embeds in one batch, outside the lock.
        Without `dedupe` (a bulk load, such as a benchmark's), every item with a new id is
        stored, forgotten facts too.
        """
        for item in items:
            if len(item.text) > MAX_TEXT_CHARS:
                raise ValueError(f"memory {item.id}: {_too_long(item.text)}")
        history: dict[str, list[MemoryEvent]] = {}
        for event in events:
            history.setdefault(event.memory_id, []).append(event)
        done = Inserted([], {}, [], [], [])
        with self._lock:
            fresh = []
            for item in items:
                if item.id in self._slot_of or item.id in done.ids:
                    done.present.append(item.id)
                else:
                    fresh.append(item)
                done.ids[item.id] = item.id
        embedded = self._embed([i.text for i in fresh]) if fresh else None
        vectors = None if embedded is None else _unit_rows(embedded.vectors)
        with self._lock:
            new, merges = self._sort_imports(fresh, vectors, done, dedupe)
            stored = [_relinked(item, done.ids) for item, _ in new]
            imported = [e for item in stored for e in history.get(item.id, ())]
            for merge in merges:  # a merged item's history, but its creation (the merge is that)
                merged = history.get(merge.related_id or "", ())
                imported += [e for e in merged if e.type != "created"]
            changes = [_reassigned(e, done.ids) for e in imported] + merges
            slots = self._commit(stored, changes) if stored or changes else []
            active = [(s, r) for s, (i, r) in zip(slots, new, strict=True) if i.state == "active"]
            if embedded is not None and active:
                rows = [r for _, r in active]
                self._store_vectors(
                    Embedded(embedded.embedder, embedded.vectors[rows]), [s for s, _ in active]
                )
            done.stored.extend(stored)
        self._refit_projection()
        if stored:
            self._emit("added", [i.id for i in stored])
        if merges:
            self._emit("updated", list(dict.fromkeys(e.memory_id for e in merges)))
        return done

    def _sort_imports(
        self,
        fresh: list[MemoryItem],
        vectors: npt.NDArray[np.float32] | None,
        done: Inserted,
        dedupe: bool,
    ) -> tuple[list[tuple[MemoryItem, int]], list[MemoryEvent]]:
        """Decide, for `insert`, what becomes of each item with a new id (under the lock): the
        items to store (with their rows in `vectors`) and the "merged" events of the others;
        `done` learns where each went."""
        new: list[tuple[MemoryItem, int]] = []
        merges: list[MemoryEvent] = []
        now = now_utc()
        for row, item in enumerate(fresh):
            if item.id in self._slot_of:  # added meanwhile
                done.present.append(item.id)
            elif dedupe and self._buried_as(item.text, self._meaning_of(vectors, row)):
                done.forgotten.append(item.id)
                del done.ids[item.id]
            else:
                vector = None if vectors is None else vectors[row]
                pending = [(i, None if vectors is None else vectors[r]) for i, r in new]
                same = self._same_memory(item, vector, pending) if dedupe else None
                if same is None:
                    new.append((item, row))
                    continue
                done.ids[item.id] = same
                done.merged.append(item.id)
                reason = "imported again: the same memory"
                merges.append(
                    MemoryEvent(same, "merged", now, by="import", related_id=item.id, reason=reason)
                )
        return new, merges

    def _meaning_of(self, vectors: npt.NDArray[np.float32] | None, row: int) -> Meaning | None:
        """The meaning of an item being imported, from its row of `vectors` (of the embedder)."""
        if vectors is None or self._embedder is None:
            return None
        return Meaning(self._embedder.name, vectors[row])

    def _same_memory(
        self,
        item: MemoryItem,
        vector: npt.NDArray[np.float32] | None,
        pending: list[tuple[MemoryItem, npt.NDArray[np.float32] | None]],
    ) -> str | None:
        """The id of a memory here, or of an item about to be stored (`pending`), that says
        the same as `item`: the same word stems in the same order (any state but forgotten),
        or a meaning as close as MERGE_THRESHOLD (active ones: by the cosine of unit
        `vector`s, else by the Jaccard index of the word sets); None if none does (under the
        lock)."""
        norm = terms(item.text)
        query, informative = query_terms(item.text)
        here = [
            self._items[slot]
            for index in (self._bm25, self._past_index())
            for slot, _ in index.top(query, 20, require=informative or None)
        ]
        for other in [i for i, _ in pending] + here:
            if terms(other.text) == norm:
                return other.id
        active = [(i, v) for i, v in pending if i.state == "active"]
        if vector is not None:
            for other, other_vector in active:
                if other_vector is not None and float(other_vector @ vector) >= MERGE_THRESHOLD:
                    return other.id
            dense = self._dense_top(vector, 1, MERGE_THRESHOLD, self.config)
            return self._items[dense[0][0]].id if dense else None
        words = set(tokenize(item.text))
        for other, _ in active:
            if _jaccard(words, set(tokenize(other.text))) >= MERGE_THRESHOLD:
                return other.id
        similar = self._similar_by_words(item.text, MERGE_THRESHOLD, 1)
        return similar[0][0].id if similar else None

    def _vector_for(self, text: str, vector: npt.ArrayLike | None) -> Embedded | None:
        if vector is None:
            return self._embed([text])
        if self._embedder is None:
            raise ValueError("a vector can only be given when the store has an embedder")
        return Embedded(self._embedder, np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def update(
        self,
        item_id: str,
        *,
        text: str | None = None,
        kind: MemoryKind | None = None,
        importance: float | None = None,
        tags: Sequence[str] | None = None,
        by: Origin = "user",
        source: Source | None = None,
    ) -> MemoryItem:
        """Change an item's text, kind, importance or tags (an "edited" event says what)."""
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = _clean_text(text)
        if kind is not None:
            changes["kind"] = kind
        if importance is not None:
            changes["importance"] = float(importance)
        if tags is not None:
            changes["tags"] = tuple(tags)
        return self._edit(item_id, changes, "edited", by=by, source=source)

    def merge_into(
        self,
        item_id: str,
        text: str,
        *,
        by: Origin,
        source: Source | None = None,
        kind: MemoryKind | None = None,
        importance: float | None = None,
        related_id: str | None = None,
        client: str | None = None,
    ) -> MemoryItem:
        """Refine a memory with a new statement of the same fact (a "merged" event keeps the
        text before); `related_id` names a memory merged in, if it was one (an import);
        `client`, the MCP client that did it."""
        changes: dict[str, Any] = {"text": _clean_text(text)}
        self._refuse_forgotten(changes["text"], by)
        if kind is not None:
            changes["kind"] = kind
        if importance is not None:
            changes["importance"] = float(importance)
        return self._edit(
            item_id, changes, "merged", by=by, source=source, related_id=related_id, client=client
        )

    def _edit(
        self,
        item_id: str,
        changes: dict[str, Any],
        kind: EventType,
        *,
        by: Origin,
        source: Source | None,
        related_id: str | None = None,
        client: str | None = None,
    ) -> MemoryItem:
        """Apply changes of content with an "edited" or "merged" event and new vectors."""
        with self._lock:
            old = self._item(item_id)
        _check(changes.get("kind", old.kind), changes.get("importance", old.importance))
        text = changes.get("text", old.text)
        embedded = self._embed([text]) if text != old.text else None
        with self._lock:
            old = self._item(item_id)
            item = old._replace(updated_at=now_utc(), **changes)
            event = MemoryEvent(
                item_id,
                kind,
                item.updated_at,
                by=by,
                source=source,
                text_before=old.text if text != old.text else None,
                text_after=text if text != old.text else None,
                related_id=related_id,
                reason=_what_changed(old, item),
                client=client,
            )
            [slot] = self._commit([item], [event])
            if embedded is not None and self._items[slot].text == text:
                self._store_vectors(embedded, [slot])
        if embedded is not None:
            self._refit_projection()
        self._emit("updated", [item_id])
        return item

    def supersede(
        self,
        old_id: str,
        text: str,
        kind: MemoryKind = "fact",
        importance: float = 0.5,
        *,
        by: Origin,
        source: Source | None = None,
        reason: str,
        valid_from: datetime | None = None,
        tags: Sequence[str] = (),
        client: str | None = None,
    ) -> MemoryItem:
        """Replace a memory by a new fact: the new memory is created (`supersedes` names the
        old one); the old one is archived, stops holding at `valid_from` (default now), links
        to its successor, and keeps its history with a "superseded" event saying why."""
        text = _clean_text(text)
        _check(kind, importance)
        self._refuse_forgotten(text, by)
        embedded = self._embed([text])
        with self._lock:
            old = self._item(old_id)
            new = MemoryItem.new(
                text,
                kind,
                importance,
                source=source,
                tags=tags,
                origin=by,
                valid_from=valid_from,
                supersedes=(old_id,),
                client=client,
            )
            ended = old._replace(
                state="archived",
                valid_to=valid_from or new.created_at,
                superseded_by=new.id,
                updated_at=new.created_at,
            )
            event = MemoryEvent(
                old_id,
                "superseded",
                new.created_at,
                by=by,
                source=source,
                related_id=new.id,
                reason=reason,
                client=client,
            )
            _, slot = self._commit([ended, new], [event, creation(new)])
            if embedded is not None:
                self._store_vectors(embedded, [slot])
        self._refit_projection()
        self._emit("updated", [old_id])
        self._emit("added", [new.id])
        return new

    def _change(
        self, item_id: str, kind: EventType, by: Origin | None, **changes: Any
    ) -> MemoryItem:
        """Change an item's state or pin with an event of `kind`; a forget leaves a
        tombstone for each text the memory had, a restore lifts them."""
        if kind == "forgotten":
            self._history_ready()  # the texts it had before
        with self._lock:
            item = self._item(item_id)._replace(updated_at=now_utc(), **changes)
            buried = []
            if kind == "forgotten":
                # The meaning of the text it has now, from its vector (no embedding: forget
                # runs on the GUI thread too); earlier texts by their words.
                meaning = self._stored_meaning(item_id)
                prints = [
                    Fingerprint.of(text, meaning if text == item.text else None)
                    for text in self._texts_had(item_id)
                ]
                buried = [Tombstone(item_id, f, item.updated_at) for f in prints]
            lifted = [item_id] if kind == "restored" and item_id in self._tombstones else []
            event = MemoryEvent(item_id, kind, item.updated_at, by=by)
            self._commit([item], [event], buried=buried, lifted=lifted)
        self._emit("updated", [item_id])
        return item

    def _stored_meaning(self, item_id: str) -> Meaning | None:
        """The meaning of a memory's text from its stored vector, if it has one (under the
        lock)."""
        slot = self._slot_of.get(item_id)
        if self._vectors is None or slot is None:
            return None
        vector = self._vectors.vector(slot)
        return None if vector is None else Meaning(self._vectors.name, vector)

    def _texts_had(self, item_id: str) -> list[str]:
        """Every text a memory had: now and in its history."""
        with self._lock:
            item = self._item(item_id)
            history = [
                text
                for e in self._history.of(item_id)
                for text in (e.text_before, e.text_after)
                if text is not None
            ]
        return list(dict.fromkeys([item.text, *history]))

    def pin(self, item_id: str, pinned: bool = True, *, by: Origin = "user") -> MemoryItem:
        """Pin (always in the prompt, never decays) or unpin an item."""
        return self._change(item_id, "pinned" if pinned else "unpinned", by, pinned=pinned)

    def forget(self, item_id: str, *, by: Origin = "user") -> MemoryItem:
        """Remove an item from search now and from disk (with its history) at the next open or
        close, leaving tombstones (one for each text it had) that keep the fact from being
        learned again; `restore` (Undo) lifts them."""
        return self._change(item_id, "forgotten", by, state="forgotten")

    def archive(self, item_id: str, *, by: Origin | None = "user") -> MemoryItem:
        """Take an item out of search without forgetting it."""
        return self._change(item_id, "archived", by, state="archived")

    def restore(self, item_id: str, *, by: Origin = "user") -> MemoryItem:
        """Bring a forgotten or archived item back into search; a superseded one holds again
        (its end and its link to a successor are cleared: undoing a supersede)."""
        item = self._change(
            item_id, "restored", by, state="active", valid_to=None, superseded_by=None
        )
        with self._lock:
            slot = self._slot_of[item_id]
            missing = self._vectors is None or not self._vectors.has(slot)
        embedded = self._embed([item.text]) if missing else None
        if embedded is not None:
            with self._lock:
                self._store_vectors(embedded, [slot])
            self._refit_projection()
        return item

    def get(self, item_id: str) -> MemoryItem | None:
        """The item with this id, in any state, or None."""
        with self._lock:
            slot = self._slot_of.get(item_id)
            return None if slot is None else self._items[slot]

    def all(self, state: MemoryState | None = "active") -> list[MemoryItem]:
        """Items in `state` (all with None), pinned first, then newest first."""
        with self._lock:
            chosen = [i for i in self._items if state is None or i.state == state]
        chosen.sort(key=listing_order)
        return chosen

    def pinned(self) -> list[MemoryItem]:
        """Active pinned items, newest first: they go into every prompt."""
        with self._lock:
            n = self._n()
            slots = np.flatnonzero(self._active[:n] & self._pinned[:n])
            chosen = [self._items[s] for s in slots]
        chosen.sort(key=lambda i: -i.created_at.timestamp())
        return chosen

    def __len__(self) -> int:
        with self._lock:
            return int(self._active[: self._n()].sum())

    def mark_used(
        self, ids: Iterable[str], now: datetime | None = None, *, reply: Source | None = None
    ) -> None:
        """Record that the agent used these items (access count, last access, and a "used"
        event naming the `reply`, the assistant message they were in the prompt of)."""
        at = now or now_utc()
        with self._lock:
            known = [i for i in dict.fromkeys(ids) if i in self._slot_of]
            if not known:
                return
            record: dict[str, Any] = {
                "version": LOG_VERSION,
                "op": "used",
                "ids": known,
                "at": stamp(at),
            }
            if reply is not None:
                record["reply"] = reply.to_json()
            self._append(record)
            for item_id in known:
                old = self._item(item_id)
                self._place(old._replace(access_count=old.access_count + 1, last_accessed=at))
            self._history.record(MemoryEvent(i, "used", at, source=reply) for i in known)
        self._emit("used", known)

    def history(self, item_id: str) -> list[MemoryEvent]:
        """A memory's events, oldest first (empty for an unknown id); see `history.told`."""
        self._history_ready()  # once loaded, it stays loaded
        with self._lock:
            item = self.get(item_id)
            return [] if item is None else told(item, self._history.of(item_id))

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
        self._history_ready()
        with self._lock:
            events = list(self._history.every())
            have = self._history.created
            events.extend(creation(item) for item in self._items if item.id not in have)
            events.extend(  # memories gone from disk: their tombstones say when
                MemoryEvent(memory_id, "forgotten", tombstones[0].at)
                for memory_id, tombstones in self._tombstones.items()
                if memory_id not in self._slot_of
            )
            chosen = select(events, since=since, until=until, types=types, limit=limit)
            return [self._with_text(e) for e in chosen]

    def _with_text(self, event: MemoryEvent) -> MemoryEvent:
        item = self.get(event.memory_id)
        return event if item is None else with_text(event, item, self._history.of(item.id))

    def decay(
        self,
        now: datetime | None = None,
        *,
        half_life_days: float,
        archive_below: float = ARCHIVE_BELOW,
    ) -> list[MemoryEvent]:
        """Let unused memories fade: each unpinned active memory's importance is halved for
        every `half_life_days` since its last use or its last decay, whichever is later (so
        a period never counts twice). A memory changes only once it has lost a fifth or more
        (no daily trickle of events); a "decayed" event says by how much and why. One that
        falls below `archive_below` is archived, a few a pass (see `fading`). Pinned memories
        never decay. A clock behind or far ahead of the store is guarded against and reported
        in `clock_warning`. Returns the events, decayed and archived."""
        if not half_life_days > 0:
            raise ValueError(
                f"The half-life must be a positive number of days, not {half_life_days}."
            )
        with self._lock:
            clock = decay_clock(now or now_utc(), self._newest_time())
        self.clock_warning = clock.warning
        if clock.warning is not None:
            log.warning("Decay: %s", clock.warning)
        if clock.at is None:
            return []
        at = clock.at
        when = at.timestamp()
        step = half_life_days * 86400 * math.log2(1 / _DECAY_FACTOR)  # seconds to lose a fifth
        changed: list[MemoryItem] = []
        events: list[MemoryEvent] = []
        with self._lock:
            n = self._n()
            due = self._active[:n] & ~self._pinned[:n] & (self._last_used[:n] <= when - step)
            faded: list[tuple[MemoryItem, MemoryEvent]] = []
            for slot in np.flatnonzero(due).tolist():
                item = self._items[slot]
                since = max(item.last_accessed, item.decayed_at or item.last_accessed)
                days = (at - since).total_seconds() / 86400
                if days * 86400 < step or item.importance == 0:
                    continue
                importance = item.importance * 0.5 ** (days / half_life_days)
                unused = (at - item.last_accessed).days
                event = MemoryEvent(
                    item.id,
                    "decayed",
                    at,
                    reason=f"not used for {unused} days",
                    importance_before=item.importance,
                    importance_after=importance,
                )
                item = item._replace(importance=importance, decayed_at=at, updated_at=at)
                faded.append((item, event))
            # The least important of those below the line go, a few a pass (see `fading`):
            # faded now, or in an earlier pass that had no room for them.
            earlier = self._faded_earlier(n, archive_below, {i.id for i, _ in faded})
            now_below = [i for i, _ in faded if i.importance < archive_below]
            below = sorted([*now_below, *earlier], key=_importance)
            archived = {i.id for i in below[: archive_limit(int(self._active[:n].sum()))]}
            reason = f"importance below {archive_below:g}"
            for item, event in faded:
                events.append(event)
                if item.id in archived:
                    events.append(MemoryEvent(item.id, "archived", at, reason=reason))
                changed.append(item._replace(state="archived") if item.id in archived else item)
            for item in earlier:
                if item.id in archived:
                    events.append(MemoryEvent(item.id, "archived", at, reason=reason))
                    changed.append(item._replace(state="archived", updated_at=at))
            if changed:
                self._commit(changed, events)
        if changed:
            self._emit("updated", [i.id for i in changed])
        return events

    def _faded_earlier(self, n: int, below: float, besides: set[str]) -> list[MemoryItem]:
        """Active unpinned memories that faded below the line in an earlier pass (under the
        lock), but those in `besides`."""
        slots = np.flatnonzero(self._active[:n] & ~self._pinned[:n]).tolist()
        return [
            item
            for item in (self._items[slot] for slot in slots)
            if item.decayed_at is not None and item.importance < below and item.id not in besides
        ]

    def _newest_time(self) -> datetime | None:
        """The newest time the store recorded: a memory made, changed or used (under the
        lock)."""
        times = [max(i.updated_at, i.last_accessed) for i in self._items[: self._n()]]
        return max(times, default=None)

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
    ) -> list[SearchHit]:
        """The `k` active items most relevant to `query`, best first; with `include_history`
        archived ones too (superseded, faded or archived by hand; not forgotten ones).

        BM25 (over word stems) and cosine rankings are fused (see `ranking`), then importance
        and recency add small boosts. An item qualifies only if it shares a non-stop word with
        the query (one that is not in most items, if the query has such a word) or its
        similarity reaches `min_similarity`, so nothing unrelated comes back; a query of stop
        words alone finds nothing. With `prefix` (search as you type) the last word also
        matches the words it begins: "siste" finds "sister". Archived items have a keyword
        index of their own, whose BM25 ranking is merged with the active items' by score.
        """
        cfg = config or self.config
        tokens, informative = query_terms(query)
        if prefix:
            with self._lock:
                tokens, informative = expand_last(
                    query, tokens, informative, self._bm25.with_prefix
                )
        if not informative:
            return []  # only stop words: nothing to look for
        if query_vector is not None:
            qvec: npt.NDArray[np.float32] | None = np.asarray(
                query_vector, dtype=np.float32
            ).reshape(-1)
        else:
            embedded = self._embed([query]) if self._has_vectors() else None
            qvec = None if embedded is None else embedded.vectors[0]
        depth = max(cfg.depth, k)
        self._refit_projection()  # due after a cache without one; else nothing to do
        with self._lock:
            n = self._n()
            lexical = self._bm25.top(tokens, depth, require=informative)
            mask = self._active[:n]
            if include_history:
                past = self._past_index().top(tokens, depth, require=informative)
                lexical = sorted(lexical + past, key=lambda pair: -pair[1])[:depth]
                mask = mask | np.fromiter((i.state == "archived" for i in self._items), bool, n)
            dense = self._dense_top(qvec, depth, cfg.min_similarity, cfg, mask)
            hits = fuse(
                lexical,
                dense,
                items=self._items,
                importance=self._importance,
                last_used=self._last_used,
                now=now_utc().timestamp(),
                k=k,
                config=cfg,
            )
        return [
            dataclasses.replace(hit, matched=matched_words(query, hit.item.text, prefix=prefix))
            if hit.keyword_rank is not None
            else hit
            for hit in hits
        ]

    def _past_index(self) -> BM25Index:
        """The keyword index of the archived items, built on first use (under the lock)."""
        if self._past is None:
            self._past = BM25Index(*self._bm25_params())
            slots = [s for s, item in enumerate(self._items) if item.state == "archived"]
            self._past.add_many(slots, [terms(self._items[s].text) for s in slots])
        return self._past

    def _has_vectors(self) -> bool:
        """Whether the current embedder has vectors to compare a query with."""
        with self._lock:
            return (
                self._embedder is not None
                and self._vectors is not None
                and self._vectors.name == self._embedder.name
            )

    def _dense_top(
        self,
        qvec: npt.NDArray[np.float32] | None,
        depth: int,
        floor: float,
        cfg: SearchConfig,
        mask: npt.NDArray[np.bool_] | None = None,
    ) -> list[tuple[int, float]]:
        """The best `depth` items by cosine among `mask` (default: the active ones), if at
        least `floor`, best first."""
        vectors = self._vectors
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
            self._active[: self._n()] if mask is None else mask,
            depth,
            exact_up_to=cfg.exact_up_to,
            candidates=candidates,
        )
        keep = sims >= np.float64(floor)  # in float64: the floor in float32 may be a bit lower
        return list(zip(slots[keep].tolist(), sims[keep].tolist(), strict=True))

    def save(
        self,
        text: str,
        kind: MemoryKind = "fact",
        importance: float = 0.5,
        *,
        source: Source | None = None,
        tags: Sequence[str] = (),
        may_change: Callable[[MemoryItem], bool] = lambda _old: True,
        origin: Origin,
    ) -> tuple[MemoryItem, MemoryItem | None]:
        """Add `text`, or merge it into the active memory that says nearly the same.

        Merging replaces that memory's text and kind and keeps the higher importance (with a
        "merged" event), but only if `may_change(old)` agrees (pinned memories change only
        when the user confirms). Returns (the memory now, the merged memory as it was before:
        None when added).
        """
        similar = self.find_similar(text, MERGE_THRESHOLD, k=1)
        if not similar:
            return self.add(text, kind, importance, source=source, tags=tags, origin=origin), None
        old = similar[0][0]
        if (old.text, old.kind) == (_clean_text(text), kind) or not may_change(old):
            return old, old
        item = self.merge_into(
            old.id,
            text,
            by=origin,
            source=source,
            kind=kind,
            importance=max(importance, old.importance),
        )
        return item, old

    def find_related(self, text: str, k: int = 5) -> list[SearchHit]:
        """The current memories most related to `text` by the hybrid search, best first: what a
        new statement is compared with (same fact, an update, a contradiction, or new)."""
        return self.search(text, k)

    def find_similar(
        self, text: str, threshold: float = MERGE_THRESHOLD, k: int = 5
    ) -> list[tuple[MemoryItem, float]]:
        """Active items that say nearly the same as `text`, most similar first.

        Similarity is the cosine of the embeddings, or without them the Jaccard index of the
        two texts' word sets.
        """
        embedded = self._embed([text]) if self._has_vectors() else None
        with self._lock:
            if embedded is not None:
                dense = self._dense_top(embedded.vectors[0], k, threshold, self.config)
                if dense:
                    return [(self._items[s], sim) for s, sim in dense]
            return self._similar_by_words(text, threshold, k)

    def _similar_by_words(
        self, text: str, threshold: float, k: int
    ) -> list[tuple[MemoryItem, float]]:
        """Active items whose word sets have a Jaccard index of at least `threshold` with
        `text`'s, most similar first (under the lock)."""
        words = set(tokenize(text))
        query, informative = query_terms(" ".join(words))
        found = []
        for slot, _ in self._bm25.top(query, max(50, k), require=informative or None):
            jaccard = _jaccard(words, set(tokenize(self._items[slot].text)))
            if jaccard >= threshold:
                found.append((self._items[slot], jaccard))
        found.sort(key=lambda pair: -pair[1])
        return found[:k]


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _unit_rows(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _mapped(memory_id: str, ids: dict[str, str]) -> str:
    return ids.get(memory_id, memory_id)


def _reassigned(event: MemoryEvent, ids: dict[str, str]) -> MemoryEvent:
    """An imported event, on the memory its item became, naming memories by their ids here."""
    related = event.related_id
    return dataclasses.replace(
        event,
        memory_id=_mapped(event.memory_id, ids),
        related_id=None if related is None else _mapped(related, ids),
    )


def _relinked(item: MemoryItem, ids: dict[str, str]) -> MemoryItem:
    """`item` with its links to other memories following an import's id mapping."""
    successor = item.superseded_by
    return item._replace(
        supersedes=tuple(_mapped(i, ids) for i in item.supersedes),
        superseded_by=None if successor is None else _mapped(successor, ids),
        rests_on=tuple(_mapped(i, ids) for i in item.rests_on),
    )


def _refuse_newer(record: dict[str, Any]) -> None:
    """Raise StorageError for a record of a later format: this version must not rewrite it."""
    version = record.get("version")
    if isinstance(version, int) and version > LOG_VERSION:
        raise StorageError(
            f"{LOG_NAME} was made by a newer version of Assistant (record version {version}); "
            "update Assistant to open it. The file was left as it is."
        )


def _importance(item: MemoryItem) -> float:
    return item.importance


def _truncation_warning(lost: index_cache.Cached, restored: int, kept: Path | None) -> str:
    found = f"{lost.log_size:,} of the {lost.offset:,} bytes it had when last closed"
    copy = f" The file as found was kept as {kept.name}." if kept is not None else ""
    return (
        f"{LOG_NAME} was cut short or replaced ({found}). {restored} memor"
        f"{'y was' if restored == 1 else 'ies were'} restored from the index cache.{copy}"
    )


def _tombstone(tombstone: Tombstone) -> dict[str, Any]:
    return {"version": _PLAIN_VERSION, "op": "tombstone", "tombstone": tombstone.to_json()}


def _field(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string")
    return value


def _put(item: MemoryItem) -> dict[str, Any]:
    return {"version": _version(item.client), "op": "put", "item": item.to_json()}


def _event(event: MemoryEvent) -> dict[str, Any]:
    return {"version": _version(event.client), "op": "event", "event": event.to_json()}


def _version(client: str | None) -> int:
    """The version of a record that names an MCP client (3) or not (2)."""
    return _PLAIN_VERSION if client is None else LOG_VERSION


def _events_in(path: Path, start: int, end: int) -> list[MemoryEvent]:
    """The events of the log's records between byte offsets `start` and `end`."""
    records = jsonl.read_range(path, start, end)
    return [e for r in records if r.get("op") in ("event", "used") for e in _events_of(r)]


def _events_of(record: dict[str, Any]) -> list[MemoryEvent]:
    """A record's events, or none if it is unreadable (it was reported when the log opened)."""
    try:
        return events_of(record)
    except (ValueError, KeyError, TypeError):
        return []


def _is_dead(record: dict[str, Any], known: Callable[[str], bool]) -> bool:
    """Whether a compaction drops `record` (given the ids known before it): a `put` of a
    known item (a later one replaces it), a `used` record (its counts go into the put) or a
    `lift` (it and its tombstone go)."""
    op = record.get("op")
    if op == "put":
        return known(record["item"]["id"])
    return op in ("used", "lift")


def _what_changed(old: MemoryItem, new: MemoryItem) -> str | None:
    """Changes other than the text, in words ("kind fact -> plan, importance 0.5 -> 0.8")."""
    parts = []
    if old.kind != new.kind:
        parts.append(f"kind {old.kind} -> {new.kind}")
    if old.importance != new.importance:
        parts.append(f"importance {old.importance:.2g} -> {new.importance:.2g}")
    if old.tags != new.tags:
        parts.append(f"tags {', '.join(old.tags) or 'none'} -> {', '.join(new.tags) or 'none'}")
    return ", ".join(parts) or None


def _clean_text(text: str) -> str:
    text = text.strip()
    if not text:
        raise ValueError("A memory needs some text.")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"A memory {_too_long(text)}")
    return text


def _too_long(text: str) -> str:
    return (
        f"can be at most {MAX_TEXT_CHARS:,} characters; this one has {len(text):,}. Keep the "
        "essential fact, or split it into several memories."
    )


def _check(kind: str, importance: float) -> None:
    if kind not in KINDS:
        raise ValueError(f"Unknown memory kind {kind!r}; expected one of {', '.join(KINDS)}.")
    if not 0.0 <= importance <= 1.0:
        raise ValueError(f"Importance must be between 0 and 1, not {importance}.")
