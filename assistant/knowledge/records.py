"""What the index was derived from, on disk: one record per file, with its chunks.

`knowledge/files/<hash of the path>.json` holds a file's path, the size and modification time
it had when read, its kind and status (why it gives no text, if it does not), its pages and
its chunks. The records are derived files: written atomically, and one that cannot be read is
deleted (its file is read again at the next scan), never trusted half.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.fileio import atomic_write_json, make_dir, read_json_object
from assistant.knowledge.reading import Chunk, Place
from assistant.timestamps import stamp

log = logging.getLogger(__name__)

RECORD_VERSION = 1


@dataclass(frozen=True)
class FileRecord:
    """A file as it was when it was last read, and what came of it."""

    path: str
    size: int
    mtime_ns: int
    status: str = ""  # "" when its text is indexed; else why not, in words
    notes: tuple[str, ...] = ()  # things to know about an indexed file ("bytes not UTF-8")
    pages: int | None = None
    chunks: int = 0
    read_at: str = field(default_factory=stamp)

    @property
    def indexed(self) -> bool:
        """Whether the file's text is in the index."""
        return not self.status

    def is_current(self, stat: os.stat_result) -> bool:
        """Whether the file still has the size and modification time it was read with."""
        return self.size == stat.st_size and self.mtime_ns == stat.st_mtime_ns


class RecordStore:
    """The records in a directory, by file path."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, path: str) -> Path:
        return self.directory / f"{hashlib.sha256(path.encode()).hexdigest()[:32]}.json"

    def write(self, record: FileRecord, chunks: list[Chunk]) -> None:
        """Save a file's record and chunks (atomically; StorageError on failure)."""
        make_dir(self.directory)
        raw: dict[str, Any] = {
            "version": RECORD_VERSION,
            "path": record.path,
            "size": record.size,
            "mtime_ns": record.mtime_ns,
            "status": record.status,
            "notes": list(record.notes),
            "pages": record.pages,
            "read_at": record.read_at,
            "chunks": [_chunk_json(c) for c in chunks],
        }
        atomic_write_json(self._path(record.path), raw)

    def remove(self, path: str) -> None:
        """Delete a file's record, if any."""
        try:
            self._path(path).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("Could not remove the index record of %s: %s", path, exc)

    def read_all(self) -> Iterator[tuple[FileRecord, list[Chunk]]]:
        """Every readable record with its chunks; unreadable ones are deleted."""
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return
        for name in names:
            if not name.endswith(".json"):
                continue
            file = self.directory / name
            try:
                raw = read_json_object(file, RECORD_VERSION, "an index record")
                if raw is None:
                    continue
                yield _parse(raw)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("Dropping the unreadable index record %s: %s", name, exc)
                file.unlink(missing_ok=True)


def _chunk_json(chunk: Chunk) -> dict[str, Any]:
    place = chunk.place
    raw: dict[str, Any] = {"text": chunk.text}
    if place.page is not None:
        raw["page"] = place.page
    if place.first_line is not None:
        raw["lines"] = [place.first_line, place.last_line]
    if place.heading:
        raw["heading"] = list(place.heading)
    return raw


def _parse(raw: dict[str, Any]) -> tuple[FileRecord, list[Chunk]]:
    chunks = []
    for c in raw["chunks"]:
        lines = c.get("lines") or [None, None]
        place = Place(c.get("page"), lines[0], lines[1], tuple(c.get("heading", ())))
        if not isinstance(c["text"], str):
            raise TypeError("a chunk's text is not a string")
        chunks.append(Chunk(c["text"], place))
    record = FileRecord(
        path=str(raw["path"]),
        size=int(raw["size"]),
        mtime_ns=int(raw["mtime_ns"]),
        status=str(raw["status"]),
        notes=tuple(str(n) for n in raw.get("notes", ())),
        pages=raw.get("pages"),
        chunks=len(chunks),
        read_at=str(raw.get("read_at", "")),
    )
    return record, chunks
