"""The knowledge index on disk: every file's record and passages, in one append-only log.

`knowledge/passages.jsonl` is JSON Lines. A file's entry is a header line, its record (path,
size and modification time when read, status, notes, pages, when read) with the number, bytes
and CRC-32 of the passage lines that follow it, one per passage (its text and place). An entry
is appended whole, with one write and one fsync; a later entry of the same path replaces it and
`{"gone": path}` removes it. What replaced or removed entries take up is garbage: once it is
more than the live entries (and `COMPACT_FROM` bytes), the live entries are copied to a new log
that replaces the old one atomically. So a change writes its own entry and, amortized, as much
again; a crash at any moment leaves the log as it was before or after the change.

In memory: where each live entry is and where its passages start, so that a passage is read
with one seek when a search returns it. Opening reads the log once (the live entries'
passages go to the index as they are read). An incomplete last entry (a crash while appending)
is cut off; a line that does not parse cuts the log off there, and an entry whose CRC does not
match is dropped, with a warning: their files have no record, so the next scan reads them again.
A log of a newer version is left as it is (the index is then held in memory for this run).
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from assistant import failpoints
from assistant.errors import StorageError
from assistant.fileio import BINARY, NOFOLLOW, atomic_write_with, move_aside, storage_error, writing
from assistant.knowledge.reading import Chunk
from assistant.knowledge.records import (
    RECORD_VERSION,
    FileRecord,
    chunk_json,
    parse_chunk,
    parse_record,
    record_json,
)
from assistant.memory import jsonl

log = logging.getLogger(__name__)

LOG_NAME = "passages.jsonl"
COMPACT_FROM = 1 << 20  # bytes of garbage before the log is compacted
COPY_BYTES = 1 << 20  # copied at a time by a compaction
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Entry:
    """Where a file's entry is in the log."""

    start: int  # its header line
    size: int  # bytes, header and passages
    block: int  # where its passage lines begin
    bounds: IntArray  # where each passage line begins, from `block`, and where the last ends

    def moved(self, start: int) -> Entry:
        """The same entry at `start`."""
        return Entry(start, self.size, start + self.block - self.start, self.bounds)


@dataclass(frozen=True)
class _Head:
    start: int
    head: bytes
    raw: dict[str, Any]


class PassageLog:
    """The log at `path`; not thread-safe. `FileIndex` holds its lock for reads and commits; a
    write (`append`, `append_gone`, `compacted`) is done by one writer at a time and changes
    nothing that is read, until it is committed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warnings: list[str] = []
        self.usable = True  # False: a newer version's log, or one that cannot be written
        self._entries: dict[str, Entry] = {}
        self._appender: jsonl.Appender | None = None
        self._reader: BinaryIO | None = None
        self._size = 0  # bytes in the log
        self._live = 0  # bytes of live entries

    def has(self, path: str) -> bool:
        """Whether the log holds an entry of `path`."""
        return path in self._entries

    @property
    def garbage(self) -> int:
        """Bytes of entries replaced or removed."""
        return self._size - self._live

    # -- opening -------------------------------------------------------------------------------

    def open(self) -> Iterator[tuple[FileRecord, list[Chunk]]]:
        """Read the log: each live file's record and passages, in the log's order (repairing
        it first: see the module)."""
        try:
            heads = self._heads()
        except StorageError as exc:  # newer, or unreadable: left as it is
            self._warn(str(exc))
            self.usable = False
            return
        except OSError as exc:
            self._set_aside(reason=str(exc))
            return
        for head in sorted(heads.values(), key=lambda h: h.start):
            found = self._entry(head)
            if found is not None:
                yield found

    def _heads(self) -> dict[str, _Head]:
        """The last entry of each path (removed ones left out), the log cut off at a torn or
        damaged end."""
        heads: dict[str, _Head] = {}
        try:
            fd = os.open(self.path, os.O_RDONLY | NOFOLLOW | BINARY)
        except FileNotFoundError:
            return heads
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            pos = 0
            while pos < size:
                line = f.readline()
                if not line.endswith(b"\n"):  # torn: an append cut short
                    self._cut(pos, "")
                    break
                try:
                    raw = json.loads(line)
                    if not isinstance(raw, dict):
                        raise ValueError("not an object")
                    if int(raw.get("version", 0)) > RECORD_VERSION:
                        raise StorageError(
                            f"{self.path} was made by a newer version of Assistant; it was "
                            "left as it is, and the knowledge folders are read again."
                        )
                    path = raw["path"] if "gone" not in raw else raw["gone"]
                    end = pos + len(line) + (0 if "gone" in raw else int(raw["bytes"]))
                except (ValueError, KeyError, TypeError):
                    self._cut(pos, "a line that cannot be read")
                    break
                if end > size:  # torn: the passages of the last entry cut short
                    self._cut(pos, "")
                    break
                if "gone" in raw:
                    heads.pop(str(path), None)
                else:
                    heads[str(path)] = _Head(pos, line, raw)
                f.seek(end)
                pos = end
            self._size = pos
        return heads

    def _entry(self, head: _Head) -> tuple[FileRecord, list[Chunk]] | None:
        """The record and passages of an entry, the entry noted as live; None (with a warning)
        if it is damaged."""
        raw = head.raw
        try:
            count, length = int(raw["chunks"]), int(raw["bytes"])
            block = head.start + len(head.head)
            data = self._read_at(block, length)
            if zlib.crc32(data) != int(raw["crc"]):
                raise ValueError("its CRC does not match")
            lines = data.split(b"\n")
            if len(lines) != count + 1 or lines[-1]:
                raise ValueError(f"{len(lines) - 1} passages, not {count}")
            chunks = [parse_chunk(json.loads(line)) for line in lines[:-1]]
            record = parse_record(raw, count)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self._warn(f"{self.path.name}: the entry of {raw.get('path')} is damaged ({exc}); "
                       "the file is read again")  # fmt: skip
            return None
        bounds = np.zeros(count + 1, dtype=np.int64)
        np.cumsum([len(line) + 1 for line in lines[:-1]], out=bounds[1:])
        self._entries[record.path] = Entry(head.start, len(head.head) + length, block, bounds)
        self._live += len(head.head) + length
        return record, chunks

    def _cut(self, at: int, damage: str) -> None:
        """Cut the log off at byte `at`: an append cut short (quietly), or `damage`."""
        if damage:
            self._warn(f"{self.path.name}: {damage} at byte {at:,}; what followed is read "
                       "again from the files")  # fmt: skip
        with writing(self.path, "repair"):
            failpoints.reach("repair", self.path)
            fd = os.open(self.path, os.O_WRONLY | NOFOLLOW | BINARY)
            try:
                os.ftruncate(fd, at)
                os.fsync(fd)
            finally:
                os.close(fd)

    def _set_aside(self, reason: str) -> None:
        """Start a new log beside one that cannot be read."""
        self._warn(f"{self.path.name} could not be read ({reason}); the files are read again")
        try:
            move_aside(self.path)
        except StorageError as exc:
            self._warn(str(exc))
            self.usable = False

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        self.warnings.append(message)

    # -- reading -------------------------------------------------------------------------------

    def _read_at(self, offset: int, length: int) -> bytes:
        if self._reader is None:
            fd = os.open(self.path, os.O_RDONLY | NOFOLLOW | BINARY)
            self._reader = os.fdopen(fd, "rb", buffering=0)
        self._reader.seek(offset)
        data = self._reader.read(length)
        if len(data) != length:
            raise ValueError("the log is shorter than it was")
        return data

    def chunk(self, path: str, n: int) -> Chunk:
        """Passage `n` of `path` (StorageError if it cannot be read)."""
        entry = self._entries[path]
        begin, end = int(entry.bounds[n]), int(entry.bounds[n + 1])
        try:
            return parse_chunk(json.loads(self._read_at(entry.block + begin, end - begin - 1)))
        except OSError as exc:
            raise storage_error("read", self.path, exc) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise StorageError(f"Could not read a passage of {path}: {exc}") from exc

    def chunks(self, path: str) -> list[Chunk]:
        """The passages of `path`, in order (StorageError if they cannot be read)."""
        entry = self._entries[path]
        try:
            data = self._read_at(entry.block, int(entry.bounds[-1]))
            return [parse_chunk(json.loads(line)) for line in data.split(b"\n")[:-1]]
        except OSError as exc:
            raise storage_error("read", self.path, exc) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise StorageError(f"Could not read the passages of {path}: {exc}") from exc

    # -- writing -------------------------------------------------------------------------------

    def append(self, record: FileRecord, chunks: Sequence[Chunk]) -> Entry:
        """Append a file's entry, durably (StorageError if it cannot be); `commit` it next."""
        head, lines = _encoded(record, chunks)
        block = b"".join(lines)
        start = self._write(head + block)
        bounds = np.zeros(len(lines) + 1, dtype=np.int64)
        np.cumsum([len(line) for line in lines], out=bounds[1:])
        return Entry(start, len(head) + len(block), start + len(head), bounds)

    def append_gone(self, path: str) -> None:
        """Append that `path` has no entry any more, durably; `commit(path, None)` next."""
        self._write(jsonl.encode({"version": RECORD_VERSION, "gone": path}))

    def _write(self, data: bytes) -> int:
        if not self.usable:
            raise StorageError(f"{self.path} is not written: see the warning when it was opened")
        if self._appender is None:
            self._appender = jsonl.Appender(self.path)
        start = self._appender.append_bytes(data)
        self._size = start + len(data)
        return start

    def commit(self, path: str, entry: Entry | None) -> None:
        """Make `entry` (appended) the one of `path`, or none."""
        old = self._entries.pop(path, None)
        if old is not None:
            self._live -= old.size
        if entry is not None:
            self._entries[path] = entry
            self._live += entry.size

    def compaction_due(self) -> bool:
        """Whether the garbage is more than the live entries (and `COMPACT_FROM` bytes)."""
        return self.usable and self.garbage > max(COMPACT_FROM, self._live)

    def compacted(self) -> dict[str, Entry]:
        """Write the live entries to a new log that replaces this one (atomically); returns
        where they now are, for `commit_compaction`. StorageError if it cannot be written."""
        live = sorted(self._entries.items(), key=lambda item: item[1].start)
        moved: dict[str, Entry] = {}
        fd = os.open(self.path, os.O_RDONLY | NOFOLLOW | BINARY)
        with os.fdopen(fd, "rb") as source:

            def write(f: BinaryIO) -> None:
                at = 0
                for path, entry in live:
                    source.seek(entry.start)
                    for done in range(0, entry.size, COPY_BYTES):
                        f.write(source.read(min(COPY_BYTES, entry.size - done)))
                    moved[path] = entry.moved(at)
                    at += entry.size

            atomic_write_with(self.path, write)
        return moved

    def commit_compaction(self, moved: dict[str, Entry]) -> None:
        """The log is the compacted one: its entries are where `moved` says."""
        self._entries = moved
        self._live = self._size = sum(e.size for e in moved.values())
        self.close()

    def close(self) -> None:
        """Close the files (they are opened again when needed)."""
        if self._appender is not None:
            self._appender.close()
            self._appender = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def _encoded(record: FileRecord, chunks: Sequence[Chunk]) -> tuple[bytes, list[bytes]]:
    """A file's entry: its header line and its passage lines."""
    lines = [jsonl.encode(chunk_json(c)) for c in chunks]
    block = b"".join(lines)
    header = {**record_json(record), "chunks": len(lines), "bytes": len(block),
              "crc": zlib.crc32(block)}  # fmt: skip
    return jsonl.encode(header), lines


def write_log(path: Path, files: Iterator[tuple[FileRecord, list[Chunk]]]) -> None:
    """Write a new log at `path` holding these files (atomically)."""

    def write(f: BinaryIO) -> None:
        for record, chunks in files:
            head, lines = _encoded(record, chunks)
            f.write(head + b"".join(lines))

    atomic_write_with(path, write)
