"""The memory log, `semantic.jsonl`: reading it, appending to it, compacting it.

An append-only log of records: `put` (the whole item after each change), `used` (access
statistics, and "used" events), `event` (the history: created, edited, merged, ...),
`tombstone` (a forgotten text's fingerprint) and `lift` (a tombstone taken back by a restore).
It is compacted (rewritten atomically: a header with a new id, one `put` per item, the events
kept, the tombstones and, verbatim, the records this version cannot read) when dead records
outnumber live ones. The index cache records the log's id, so a log compacted after the cache
was written is replayed, never taken for one cut short. A record longer than
`MAX_RECORD_BYTES`, or a memory longer than `MAX_TEXT_CHARS`, is not loaded: the file is
copied aside and the user told. Opening replays it on top of the index
cache (`index_cache`) when the cache still matches, in full otherwise, and hands the store what
it replayed (`Replayed`).

Forgetting, on disk: a forget appends the tombstones (one for each text the memory had), then a
`put` of the item in state "forgotten" (`commit`); the item and its events leave the file at the
next rewrite that drops forgotten items: `close`, or the next `load` (which replays the log in
full when the cache does not match). Until then Undo (`restore`) can append the `lift`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from assistant.errors import StorageError
from assistant.fileio import atomic_write_bytes, copy_aside, refuse_link
from assistant.memory import index_cache, jsonl
from assistant.memory.bm25 import Snapshot
from assistant.memory.history import History, events_of
from assistant.memory.items import MAX_TEXT_CHARS, MemoryEvent, MemoryItem, Source
from assistant.memory.tombstones import Fingerprint, Meaning, Resemblance, Tombstone
from assistant.sizes import MB
from assistant.timestamps import stamp

log = logging.getLogger(__name__)

LOG_VERSION = 4  # 2: origins, links and validity in items; `event` records; `used` replies
# 3: origin "mcp" with the MCP client's name; 4: a memory's project (its scope) and "moved"
# events. Only the records that hold them say 3 or 4, so a log without them still opens in a
# version that knows 2, and one with them is refused cleanly.
_PLAIN_VERSION = 2
_MCP_VERSION = 3
LOG_NAME = "semantic.jsonl"
_MIN_COMPACT_DEAD = 500
# A record holds one memory (MAX_TEXT_CHARS, escaped) and its links, or an edit's two texts, or
# the ids used by one reply: far below this. A longer line is not even parsed.
MAX_RECORD_BYTES = MB


class TooLongError(ValueError):
    """A memory over `MAX_TEXT_CHARS` in the log: set aside, not loaded."""


class Contents(Protocol):
    """What the log holds, as the store has it in memory (the index)."""

    @property
    def items(self) -> Sequence[MemoryItem]:
        """Every item, forgotten ones too, in slot order."""
        ...

    def __contains__(self, item_id: object) -> bool:
        """Whether an item has this id."""
        ...

    def snapshot(self) -> Snapshot:
        """The keyword index of the items, for the cache."""
        ...

    def contexts(self) -> dict[str, str]:
        """Per item id, the fingerprint of the context its keyword document holds (if any)."""
        ...


@dataclass(frozen=True)
class Replayed:
    """What `MemoryLog.load` found: the items to fill the index with, in slot order (their
    cached keyword index, if the cache was used), then the items the records after the cache
    changed or added."""

    items: list[MemoryItem]
    index: Snapshot | None  # None: index `items` afresh
    changed: list[MemoryItem]
    contexts: dict[str, str] = field(default_factory=dict)  # what `index` holds (see `context`)
    columns: index_cache.Columns | None = None  # of `items`, from the cache


class MemoryLog:
    """The log of one store. The store calls it with its lock held (`read_history` takes the
    lock itself)."""

    def __init__(self, directory: Path, contents: Contents, lock: threading.RLock) -> None:
        self.directory = directory
        self.path = directory / LOG_NAME
        self.warnings: list[str] = []
        self.history = History()
        # By the forgotten memory's id: one for each of the texts it had.
        self.tombstones: dict[str, list[Tombstone]] = {}
        self._contents = contents
        self._lock = lock
        self._records = 0
        self._dead = 0  # records a compaction would drop (older puts, used records)
        self._offset = 0  # the log's bytes the items reflect
        self._foreign = False  # someone else wrote to the log: never rewrite it or cache it
        self._appender: jsonl.Appender | None = None
        self._unread: list[dict[str, Any]] = []  # records of a later version: kept verbatim

    # -- opening -------------------------------------------------------------------------------

    def load(self) -> Replayed:
        """Read the log (on top of the index cache when it matches) and open it for appending."""
        refuse_link(self.path)
        cached = index_cache.load(self.directory, self.path, self.warnings)
        replayed = None
        if cached is not None and not cached.truncated:
            replayed = self._load_cached(cached)
        if replayed is None:
            replayed = self._load_log(cached if cached is not None and cached.truncated else None)
        if self._unread:
            self.warnings.append(
                f"{LOG_NAME}: {len(self._unread)} record(s) this version cannot read were kept "
                "in the file, unchanged."
            )
        self._appender = jsonl.Appender(self.path)
        self._offset = self._appender.size
        return replayed

    def _load_cached(self, cached: index_cache.Cached) -> Replayed | None:
        """The cache's items and the records after it, replayed; None if it cannot."""
        tail = jsonl.read_tail(self.path, cached.offset, MAX_RECORD_BYTES)
        if tail is None:
            return None
        changed: dict[str, MemoryItem] = {}
        tombstones: dict[str, list[Tombstone]] = {}
        for tombstone in cached.tombstones:
            tombstones.setdefault(tombstone.memory_id, []).append(tombstone)
        slot_of = {item.id: slot for slot, item in enumerate(cached.items)} if tail else {}
        dead = 0
        try:
            for record in tail:
                dead += _is_dead(record, lambda i: i in slot_of or i in changed)
                for item_id in record.get("ids", ()) if record.get("op") == "used" else ():
                    if item_id not in changed and item_id in slot_of:
                        changed[item_id] = cached.items[slot_of[item_id]]
                _replay(record, changed, tombstones)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("%s: replaying the whole log (%s)", LOG_NAME, exc)
            return None
        self.tombstones = tombstones
        self._unread = list(cached.unread)
        self._records = cached.records + len(tail)
        self._dead = cached.dead + dead
        changes = list(changed.values())
        return Replayed(cached.items, cached.index, changes, cached.contexts, cached.columns)

    def _load_log(self, lost: index_cache.Cached | None = None) -> Replayed:
        """Replay the log, dropping forgotten items and moving unreadable records aside.

        With `lost` (a cache of a longer log: the log was cut or replaced), the original is
        copied aside first, the memories only the cache has are put back, and the user is told.
        """
        kept = copy_aside(self.path) if lost is not None and self.path.exists() else None
        loaded = jsonl.read(self.path, vet=_refuse_newer, max_line=MAX_RECORD_BYTES)
        self.warnings.extend(loaded.warnings)
        items: dict[str, MemoryItem] = {}
        events: list[MemoryEvent] = []
        too_long = 0
        for record in loaded.records:
            try:
                events.extend(_replay(record, items, self.tombstones))
            except TooLongError as exc:
                too_long += 1
                log.warning("%s: set aside %s", LOG_NAME, exc)
            except (ValueError, KeyError, TypeError) as exc:
                self._unread.append(record)
                log.warning("%s: kept a record this version cannot read: %s", LOG_NAME, exc)
        if too_long:
            kept = kept or copy_aside(self.path)
            self.warnings.append(
                f"{LOG_NAME}: {too_long} memor{'y was' if too_long == 1 else 'ies were'} longer "
                f"than {MAX_TEXT_CHARS:,} characters and not loaded; the file as found was kept "
                f"as {kept.name}."
            )
        restored = 0
        if lost is not None:
            for item in lost.items:
                if item.id not in items:
                    items[item.id] = item
                    restored += 1
            self.warnings.append(_truncation_warning(lost, restored, kept))
        live = [item for item in items.values() if item.state != "forgotten"]
        live_ids = {item.id for item in live}
        self.history.load(events, live_ids.__contains__)
        self._records = len(loaded.records)
        live_records = len(live) + len(self.history.kept([i.id for i in live]))
        self._dead = max(0, self._records - live_records)
        self._offset = index_cache.log_size(self.path)
        if too_long or restored or len(live) < len(items) or self._needs_compaction():
            self._rewrite(live)
        return Replayed(live, None, [])

    # -- appending -----------------------------------------------------------------------------

    def commit(
        self,
        items: Sequence[MemoryItem],
        events: Sequence[MemoryEvent],
        *,
        buried: Sequence[Tombstone] = (),
        lifted: Sequence[str] = (),
    ) -> None:
        """Append the items, events, new tombstones and lifted ones (by memory id) in one write
        and take in the events and tombstones (the store places the items after). A write cut
        short by a crash keeps a prefix of it: new tombstones come first and lifts last, so
        that such a crash never leaves a forgotten memory without its tombstone."""
        self._append(
            *(_tombstone(t) for t in buried),
            *(_put(i) for i in items),
            *(_event(e) for e in events),
            *({"version": _PLAIN_VERSION, "op": "lift", "memory_id": i} for i in lifted),
        )
        self.history.record(events)
        for tombstone in buried:
            self.tombstones.setdefault(tombstone.memory_id, []).append(tombstone)
        for memory_id in lifted:
            self.tombstones.pop(memory_id, None)

    def used(self, ids: Sequence[str], at: datetime, reply: Source | None) -> None:
        """Append a `used` record for these items (the store updates their counts)."""
        record: dict[str, Any] = {"version": _MCP_VERSION, "op": "used", "ids": ids}
        record["at"] = stamp(at)
        if reply is not None:
            record["reply"] = reply.to_json()
        self._append(record)
        self.history.record(MemoryEvent(i, "used", at, source=reply) for i in ids)

    def _append(self, *records: dict[str, Any]) -> None:
        if self._appender is None:
            raise StorageError("The memory store is closed.")
        if self._needs_compaction():  # before the append: the log matches the items now
            self._rewrite(self._contents.items)
        start = self._appender.append(*records)
        if start != self._offset and not self._foreign:
            log.warning("%s was appended to by another process", LOG_NAME)
            self._foreign = True
        self._offset = self._appender.size
        self._records += len(records)
        self._dead += sum(_is_dead(r, self._contents.__contains__) for r in records)

    # -- tombstones ----------------------------------------------------------------------------

    def buried_as(self, text: str, meaning: Meaning | None = None) -> list[str]:
        """The ids of the forgotten memories whose tombstones say the fact of `text` (by its
        words, and by its `meaning` if given): the "forgotten" band, not a mere resemblance."""
        if not self.tombstones:
            return []
        fingerprint = Fingerprint.of(text, meaning)
        return [
            memory_id
            for memory_id, tombstones in self.tombstones.items()
            if any(t.fingerprint.resemblance(fingerprint) == "forgotten" for t in tombstones)
        ]

    def resemblance(self, text: str, meaning: Meaning | None = None) -> Resemblance | None:
        """The closest band in which `text` (with its `meaning`, if given) matches a tombstone:
        "forgotten" (the same fact), "resembles" (the user is asked), or None."""
        fingerprint = Fingerprint.of(text, meaning)
        found: Resemblance | None = None
        for tombstone in (t for ts in self.tombstones.values() for t in ts):
            band = tombstone.fingerprint.resemblance(fingerprint)
            if band == "forgotten":
                return band
            found = band or found
        return found

    def tombstones_for(self, item: MemoryItem, meaning: Meaning | None) -> list[Tombstone]:
        """Tombstones for forgetting `item`: one for each text it had (its history must be
        read), the text it has now with the sketch of its `meaning` if given."""
        history = [
            text
            for e in self.history.of(item.id)
            for text in (e.text_before, e.text_after)
            if text is not None
        ]
        texts = dict.fromkeys([item.text, *history])
        prints = [Fingerprint.of(t, meaning if t == item.text else None) for t in texts]
        return [Tombstone(item.id, f, item.updated_at) for f in prints]

    def sketched(self, model: str) -> bool:
        """Whether a tombstone has a sketch of `model`'s meaning (else asking by meaning is
        of no use)."""
        stones = (t for ts in self.tombstones.values() for t in ts)
        return any(t.fingerprint.model == model for t in stones)

    # -- history -------------------------------------------------------------------------------

    def read_history(self) -> None:
        """Load the history if it is not, reading most of the log without holding the lock
        (it takes seconds at 100,000 memories): only what was appended meanwhile is read
        under it. A compaction meanwhile loads it itself."""
        with self._lock:
            if self.history.loaded:
                return
            offset = self._offset
        try:
            events = _events_in(self.path, 0, offset)
        except StorageError:
            events = []  # read again below, under the lock, where a failure is reported
            offset = 0
        with self._lock:
            if not self.history.loaded:
                events += _events_in(self.path, offset, self._offset)
                self.history.load(events, self._contents.__contains__)

    def _load_history(self) -> None:
        """Read the events from the log if they were not (the store opened from its cache)."""
        if not self.history.loaded:
            events = _events_in(self.path, 0, self._offset)
            self.history.load(events, self._contents.__contains__)

    # -- compaction and closing ----------------------------------------------------------------

    def _needs_compaction(self) -> bool:
        return self._dead > max(self._records - self._dead, _MIN_COMPACT_DEAD)

    def _is_ours(self) -> bool:
        """Whether the log holds exactly what the items reflect (nobody else wrote to it)."""
        if self._foreign:
            return False
        if self._appender is not None:
            current = self._appender.is_current(self._offset)
        else:  # opening: nothing appended yet
            current = index_cache.log_size(self.path) == self._offset
        if not current:
            log.warning("%s changed under this process: it will not be rewritten", LOG_NAME)
            self._foreign = True
        return not self._foreign

    def compact(self) -> None:
        """Rewrite the log with one record per item (if it is ours)."""
        self._rewrite(self._contents.items)

    def _rewrite(self, items: Sequence[MemoryItem], *, drop_forgotten: bool = False) -> bool:
        """Replace the log by one `put` record per item and the events kept of each
        (atomically); False if it is not ours."""
        if not self._is_ours():
            return False
        self._load_history()
        keep = [i for i in items if not (drop_forgotten and i.state == "forgotten")]
        events = self.history.kept([i.id for i in keep])
        records = [index_cache.log_header(_MCP_VERSION)]
        records += [_put(i) for i in keep] + [_event(e) for e in events]
        records += [_tombstone(t) for ts in self.tombstones.values() for t in ts]
        records += self._unread
        data = b"".join(jsonl.encode(r) for r in records)
        atomic_write_bytes(self.path, data)
        self.history.load(events, lambda _id: True)  # what the log now holds
        self._records = len(records)
        self._dead = 0
        self._offset = len(data)
        if self._appender is not None:
            self._appender.reopen()
        return True

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._appender is None

    def close(self) -> None:
        """Close the log; if it is ours, drop the forgotten items from it and save the index
        cache (else the old cache, if any, stays valid: the records after it are replayed)."""
        if self._appender is None:
            return
        ours = self._is_ours()
        self._appender.close()
        self._appender = None
        if not ours:
            return
        snapshot = self._contents.snapshot()
        contexts = self._contents.contexts()
        items = list(self._contents.items)
        if any(i.state == "forgotten" for i in items):
            try:
                self._rewrite(items, drop_forgotten=True)
            except StorageError as exc:  # they are dropped at the next open instead
                log.warning("Could not compact the memory log: %s", exc)
            else:
                kept = np.array([i.state != "forgotten" for i in items], dtype=bool)
                snapshot = replace(snapshot, keys=(np.cumsum(kept) - 1)[snapshot.keys])
                items = [i for i in items if i.state != "forgotten"]
        try:
            index_cache.save(
                self.directory,
                self.path,
                items,
                snapshot,
                contexts=contexts,
                tombstones=[t for ts in self.tombstones.values() for t in ts],
                unread=self._unread,
                records=self._records,
                dead=self._dead,
                offset=self._offset,
            )
        except (OSError, StorageError) as exc:
            log.warning("Could not write the memory index cache: %s", exc)


def _replay(
    record: dict[str, Any],
    items: dict[str, MemoryItem],
    tombstones: dict[str, list[Tombstone]],
) -> list[MemoryEvent]:
    """Apply a record to `items` and `tombstones`; the events it holds (history only: read,
    not applied)."""
    if record.get("version") not in (1, _PLAIN_VERSION, _MCP_VERSION, LOG_VERSION):
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
        if len(item.text) > MAX_TEXT_CHARS:
            raise TooLongError(f"memory {item.id}: {len(item.text):,} characters")
        items[item.id] = item
    elif op == "used":
        at = datetime.fromisoformat(record["at"])
        for item_id in record["ids"]:
            if item_id in items:
                old = items[item_id]
                items[item_id] = old._replace(access_count=old.access_count + 1, last_accessed=at)
    elif op not in ("event", index_cache.LOG_HEADER_OP):
        raise ValueError(f"unknown operation {op!r}")
    return events


def _refuse_newer(record: dict[str, Any]) -> None:
    """Raise StorageError for a record of a later format: this version must not rewrite it."""
    version = record.get("version")
    if isinstance(version, int) and version > LOG_VERSION:
        raise StorageError(
            f"{LOG_NAME} was made by a newer version of Assistant (record version {version}); "
            "update Assistant to open it. The file was left as it is."
        )


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
    version = _version(item.client, scoped=item.project is not None)
    return {"version": version, "op": "put", "item": item.to_json()}


def _event(event: MemoryEvent) -> dict[str, Any]:
    version = _version(event.client, scoped=event.type == "moved")
    return {"version": version, "op": "event", "event": event.to_json()}


def _version(client: str | None, *, scoped: bool) -> int:
    """The version of a record: 4 if it names a project, 3 an MCP client, else 2."""
    if scoped:
        return LOG_VERSION
    return _PLAIN_VERSION if client is None else _MCP_VERSION


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
