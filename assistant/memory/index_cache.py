"""A derived cache of the memory store for fast opening: items in columns plus the BM25 index.

Replaying `semantic.jsonl` means parsing every record, tokenizing every text and indexing it;
at 100,000 memories that takes seconds. At close the store writes this cache
(`semantic-index.npz`: numbers and times (microseconds) as arrays, the texts as one block of
UTF-8, the other strings and each item's vector key as one JSON blob, the BM25 index as flat
arrays; opening builds the items column by column and hands the index its arrays), stamped
with the offset the items reflect (the log's size then), its record count, and the time,
inode and CRC-32 of those bytes. Opening uses it only if the log still starts with those
bytes (the same file, or a copy with the same CRC: a restored data dir); the records after
the offset are then replayed on top, so a cache can never hide a record written later by
anyone. The cache also records the log's id (`log_id`: each rewrite of the log, a
compaction, gives it a new one in its first record), so that a log compacted after the cache
was written is told from one cut short: the first is replayed, the second is
`Cached.truncated`. Otherwise the log is replayed in full. The log stays the single source of
truth.
"""

from __future__ import annotations

import json
import logging
import uuid
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import repeat
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from assistant.fileio import atomic_write_with
from assistant.memory.bm25 import Snapshot
from assistant.memory.items import MemoryItem, Source
from assistant.memory.tombstones import Tombstone
from assistant.memory.vectors import vector_key

log = logging.getLogger(__name__)

CACHE_VERSION = 6  # 3: the stamp is a prefix of the log (offset, records, CRC of those bytes)
# 4: the BM25 terms are word stems; 5: origins, links and validity, dead records, tombstones;
# 6: texts as one block, times as microseconds, the items' vector keys
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NONE = np.iinfo(np.int64).min  # a time column's "no time" (decayed_at)
CACHE_NAME = "semantic-index.npz"


@dataclass(frozen=True)
class Cached:
    """A cache that matches the log's first `offset` bytes, or a log cut below them."""

    items: list[MemoryItem]
    columns: Columns
    index: Snapshot
    contexts: dict[str, str]  # item id -> fingerprint of the context its document holds
    tombstones: list[Tombstone]
    unread: list[dict[str, Any]]  # the log's records this version cannot read, verbatim
    records: int  # records in the log's first `offset` bytes
    dead: int  # of those, records a compaction would drop
    offset: int
    log_size: int  # the log's size now (0 if it is missing)

    @property
    def truncated(self) -> bool:
        """Whether the log is shorter than when the cache was written: cut or replaced."""
        return self.log_size < self.offset


class Columns(NamedTuple):
    """Per cached item, what the memory index keeps in arrays, read without the items."""

    last_used: npt.NDArray[np.float64]  # POSIX seconds of `last_accessed`
    dated: npt.NDArray[np.float64]  # POSIX seconds of `memory_index.dated`
    keys: list[str]  # `vector_key` of each item


LOG_HEADER_OP = "log"


def log_header(version: int) -> dict[str, Any]:
    """The first record of a rewritten log: a new id for what it holds from now on."""
    return {"version": version, "op": LOG_HEADER_OP, "id": uuid.uuid4().hex}


def log_id(log_path: Path) -> str | None:
    """The id in the log's first record (None if it has none: never rewritten, or older)."""
    try:
        with log_path.open("rb") as f:
            first = f.readline(4096)
        record = json.loads(first)
    except (OSError, ValueError):
        return None
    if isinstance(record, dict) and record.get("op") == LOG_HEADER_OP:
        value = record.get("id")
        return value if isinstance(value, str) else None
    return None


def fingerprint(log_path: Path) -> dict[str, int]:
    """What identifies one state of the log file, cheaply."""
    stat = log_path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino}


def checksum(log_path: Path, size: int | None = None) -> int:
    """The CRC-32 of the log file's bytes (its first `size` bytes if given)."""
    crc = 0
    with log_path.open("rb") as f:
        while True:
            want = 1 << 20 if size is None else min(1 << 20, size)
            chunk = f.read(want) if want else b""
            if not chunk:
                return crc
            crc = zlib.crc32(chunk, crc)
            if size is not None:
                size -= len(chunk)


def log_size(log_path: Path) -> int:
    """The log's size in bytes (0 if it is missing)."""
    try:
        return log_path.stat().st_size
    except FileNotFoundError:
        return 0


def _starts_with(recorded: Any, log_path: Path, size: int) -> bool:
    """Whether the log starts with the bytes the cache was made from (the same file, or a
    copy of it)."""
    offset = recorded["size"]
    if size < offset:
        return False
    actual = fingerprint(log_path)
    if size == offset and all(recorded.get(key) == value for key, value in actual.items()):
        return True  # the very file, unchanged: no need to read it
    return "crc32" in recorded and recorded["crc32"] == checksum(log_path, offset)


def save(
    directory: Path,
    log_path: Path,
    items: list[MemoryItem],
    index: Snapshot,
    *,
    contexts: dict[str, str],
    tombstones: list[Tombstone],
    unread: list[dict[str, Any]],
    records: int,
    dead: int,
    offset: int,
) -> None:
    """Write the cache for `items` (in slot order) and the BM25 index (whose documents hold the
    contexts of `contexts`, by fingerprint): what the first `offset` bytes of the log,
    `records` records, hold (the log may be longer: those are replayed)."""
    texts = [i.text for i in items]
    strings = {
        "id": [i.id for i in items],
        "keys": [vector_key(i.id, i.text) for i in items],
        "kind": [i.kind for i in items],
        "state": [i.state for i in items],
        "source": [
            None if i.source is None else [i.source.conversation_id, i.source.message_id]
            for i in items
        ],
        "tags": [list(i.tags) for i in items],
        "origin": [i.origin for i in items],
        "links": {str(slot): _links(i) for slot, i in enumerate(items) if _has_links(i)},
        "tombstones": [t.to_json() for t in tombstones],
        "unread": unread,
        "terms": index.terms,
        "contexts": {i.id: contexts[i.id] for i in items if i.id in contexts},
    }
    meta = {
        "version": CACHE_VERSION,
        "log": {
            **fingerprint(log_path),
            "size": offset,
            "crc32": checksum(log_path, offset),
            "id": log_id(log_path),
        },
        "count": len(items),
        "records": records,
        "dead": dead,
    }
    arrays: dict[str, npt.NDArray[Any]] = {
        "meta": _blob(meta),
        "strings": _blob(strings),
        "texts": np.frombuffer("".join(texts).encode("utf-8"), dtype=np.uint8),
        "text_ends": np.cumsum([len(t) for t in texts], dtype=np.int64),
        "created_at": _micros(i.created_at for i in items),
        "updated_at": _micros(i.updated_at for i in items),
        "last_accessed": _micros(i.last_accessed for i in items),
        "decayed_at": _micros(i.decayed_at for i in items),
        "importance": np.array([i.importance for i in items], dtype=np.float64),
        "pinned": np.array([i.pinned for i in items], dtype=bool),
        "access_count": np.array([i.access_count for i in items], dtype=np.int64),
        **index.columns(),
    }
    atomic_write_with(directory / CACHE_NAME, lambda f: np.savez(f, **arrays))  # type: ignore[arg-type]


def load(directory: Path, log_path: Path, problems: list[str] | None = None) -> Cached | None:
    """The cache, if the log starts with what it was made from or was cut below it; else None
    (then the log is replayed; if the cache was unreadable, `problems` gets a notice)."""
    path = directory / CACHE_NAME
    size = log_size(log_path)
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = _unblob(data["meta"])
            if meta.get("version") != CACHE_VERSION:
                return None
            offset = int(meta["log"]["size"])
            if meta["log"].get("id") != log_id(log_path):
                return None  # the log was rewritten (compacted) since: replay it, never restore
            if size >= offset and not _starts_with(meta["log"], log_path, size):
                return None  # the log was rewritten since: replay it
            strings = _unblob(data["strings"])
            columns = {name: data[name] for name in data.files if name not in ("meta", "strings")}
        items, item_columns = _items(strings, columns, meta["count"])
        tombstones = [Tombstone.from_json(t) for t in strings["tombstones"]]
        index = Snapshot.from_columns(strings["terms"], columns)
        contexts = {str(i): str(c) for i, c in dict(strings.get("contexts", {})).items()}
    except FileNotFoundError:
        return None
    except (
        OSError,
        EOFError,
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        zipfile.BadZipFile,
    ) as exc:
        problem = (
            f"The memory index cache {CACHE_NAME} was unreadable ({exc or 'it is empty'}); "
            "rebuilt it from the memory log."
        )
        log.warning("%s", problem)
        if problems is not None:
            problems.append(problem)
        return None
    unread = strings.get("unread", [])
    if not isinstance(unread, list) or not all(isinstance(r, dict) for r in unread):
        return None
    records, dead = int(meta["records"]), int(meta["dead"])
    return Cached(
        items, item_columns, index, contexts, tombstones, unread, records, dead, offset, size
    )


def _items(
    strings: dict[str, Any], columns: dict[str, Any], count: int
) -> tuple[list[MemoryItem], Columns]:
    """The items of the cache, built column by column (no Python code runs per plain item),
    and the columns the index takes as they are."""
    ids, kinds, states = strings["id"], strings["kind"], strings["state"]
    sources, tags, origins, keys = (
        strings["source"],
        strings["tags"],
        strings["origin"],
        strings["keys"],
    )
    texts = _texts(columns["texts"], columns["text_ends"])
    times = [columns[name] for name in ("created_at", "updated_at", "last_accessed", "decayed_at")]
    numbers = [columns[name] for name in ("importance", "pinned", "access_count")]
    lengths = {len(x) for x in (ids, texts, kinds, states, sources, tags, origins, keys)}
    if lengths | {len(x) for x in (*times, *numbers)} != {count}:
        raise ValueError("columns of different lengths")
    created, updated, accessed, decayed = _datetimes(times)
    importance, pinned, access = (column.tolist() for column in numbers)
    none = repeat(None)
    items = list(
        map(
            MemoryItem._make,
            zip(
                ids,
                texts,
                kinds,
                importance,
                created,
                updated,
                accessed,
                pinned,
                access,
                states,
                [None if s is None else Source(s[0], s[1]) for s in sources],
                map(tuple, tags),
                origins,
                none,  # valid_from ... client, project: the links below
                none,
                repeat(()),
                none,
                repeat(()),
                decayed,
                none,
                none,
            ),
        )
    )
    dated = times[0] / 1e6  # as `datetime.timestamp` computes it: exact microseconds / 10**6
    for slot, links in strings["links"].items():
        item = items[int(slot)]
        item = items[int(slot)] = MemoryItem.from_json({**item.to_json(), **links})
        dated[int(slot)] = (item.valid_from or item.created_at).timestamp()
    return items, Columns(times[2] / 1e6, dated, keys)


def _texts(block: npt.NDArray[np.uint8], ends: npt.NDArray[np.int64]) -> list[str]:
    """The texts stored as one block of UTF-8 and where each ends (in characters)."""
    whole = block.tobytes().decode("utf-8")
    bounds = ends.tolist()
    if bounds and bounds[-1] != len(whole):
        raise ValueError("the texts do not fill their block")
    return [whole[a:b] for a, b in zip([0, *bounds], bounds, strict=False)]


def _micros(times: Iterable[datetime | None]) -> npt.NDArray[np.int64]:
    """Times as microseconds since 1970 in UTC (`_NONE` for None)."""
    return np.array(
        [_NONE if t is None else (t.astimezone(UTC) - _EPOCH) // _MICROSECOND for t in times],
        dtype=np.int64,
    )


def _datetimes(columns: list[npt.NDArray[np.int64]]) -> list[list[datetime | None]]:
    """The columns of `_micros` as aware UTC datetimes, one object per distinct time (an
    item's times are often equal, and so are many items')."""
    distinct, where = np.unique(np.concatenate(columns), return_inverse=True)
    moments = np.array(
        [None if t == _NONE else _EPOCH + t * _MICROSECOND for t in distinct.tolist()],
        dtype=object,
    )
    out = moments[where].tolist()
    n = len(columns[0])
    return [out[i * n : (i + 1) * n] for i in range(len(columns))]


# Fields most items lack (kept by slot, as `to_json` writes them); "client": origin "mcp";
# "project": a memory's scope, when it is not global.
_LINKS = (
    "valid_from",
    "valid_to",
    "supersedes",
    "superseded_by",
    "rests_on",
    "client",
    "project",
)


def _has_links(item: MemoryItem) -> bool:
    return bool(
        item.valid_from
        or item.valid_to
        or item.supersedes
        or item.superseded_by
        or item.rests_on
        or item.client
        or item.project
    )


def _links(item: MemoryItem) -> dict[str, Any]:
    """The item's links and validity, as `to_json` writes them."""
    raw = item.to_json()
    return {name: raw[name] for name in _LINKS if name in raw}


def _blob(value: Any) -> npt.NDArray[np.uint8]:
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def _unblob(array: npt.NDArray[np.uint8]) -> Any:
    return json.loads(array.tobytes().decode("utf-8"))
