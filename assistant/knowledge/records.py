"""What the index was derived from: a record per file, with its passages, as JSON.

The passage log (`passage_log`) stores each file's record and passages in these shapes. Before
it, `knowledge/files/<hash of the path>.json` held one file each: `legacy_records` reads those
once, so that an index made by an older version is carried over without reading the files.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.errors import StorageError
from assistant.fileio import read_json_object
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


def record_json(record: FileRecord) -> dict[str, Any]:
    """A record as JSON (without its passages)."""
    return {
        "version": RECORD_VERSION,
        "path": record.path,
        "size": record.size,
        "mtime_ns": record.mtime_ns,
        "status": record.status,
        "notes": list(record.notes),
        "pages": record.pages,
        "read_at": record.read_at,
    }


def parse_record(raw: dict[str, Any], chunks: int) -> FileRecord:
    """The record in `raw` (`record_json`'s shape) of a file with `chunks` passages; KeyError,
    TypeError or ValueError if it is not one."""
    pages = raw.get("pages")
    if pages is not None and not isinstance(pages, int):
        raise TypeError("pages is not a number")
    return FileRecord(
        path=_text(raw["path"]),
        size=int(raw["size"]),
        mtime_ns=int(raw["mtime_ns"]),
        status=_text(raw["status"]),
        notes=tuple(str(n) for n in raw.get("notes", ())),
        pages=pages,
        chunks=chunks,
        read_at=str(raw.get("read_at", "")),
    )


def chunk_json(chunk: Chunk) -> dict[str, Any]:
    """A passage as JSON: its text and place."""
    place = chunk.place
    raw: dict[str, Any] = {"text": chunk.text}
    if place.page is not None:
        raw["page"] = place.page
    if place.first_line is not None:
        raw["lines"] = [place.first_line, place.last_line]
    if place.heading:
        raw["heading"] = list(place.heading)
    return raw


def parse_chunk(raw: Any) -> Chunk:
    """The passage in `raw` (`chunk_json`'s shape); KeyError, TypeError or ValueError if it is
    not one."""
    if not isinstance(raw, dict):
        raise TypeError("a passage is not an object")
    lines = raw.get("lines") or [None, None]
    place = Place(raw.get("page"), lines[0], lines[1], tuple(raw.get("heading", ())))
    return Chunk(_text(raw["text"]), place)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def legacy_records(directory: Path) -> Iterator[tuple[FileRecord, list[Chunk]]]:
    """The readable records of the older layout, one JSON file per file, in `directory`."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            raw = read_json_object(directory / name, RECORD_VERSION, "an index record")
            if raw is None:
                continue
            chunks = [parse_chunk(c) for c in raw["chunks"]]
            yield parse_record(raw, len(chunks)), chunks
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("Skipping the unreadable index record %s: %s", name, exc)
        except StorageError as exc:  # unreadable, or of a newer version: read the file again
            log.warning("Skipping the index record %s: %s", name, exc)


def remove_legacy(directory: Path) -> None:
    """Remove the older layout's records (carried over, or to be read again)."""
    shutil.rmtree(directory, ignore_errors=True)
