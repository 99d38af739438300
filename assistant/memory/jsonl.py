"""JSON Lines files: fsynced appends, a torn last line skipped, corrupt lines moved aside."""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from assistant.fileio import atomic_write_bytes, corrupt_name

log = logging.getLogger(__name__)


@dataclass
class Loaded:
    """What a JSON Lines file held, and what was wrong with it."""

    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def encode(record: dict[str, Any]) -> bytes:
    """One record as a compact UTF-8 line with its newline."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def read(path: Path) -> Loaded:
    """Read every record of `path`, repairing the file so that appends can go on.

    A torn last line (a write cut short by a crash) is cut off. Corrupt lines elsewhere are
    skipped: the original file is kept as `<name>.corrupt-<timestamp>` and the file rewritten
    with the good lines, with a warning saying so.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Loaded()
    if not data:
        return Loaded()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    loaded = Loaded()
    try:  # fast path: the whole file parses as one array
        records = json.loads(b"[" + b",".join(line for line in lines if line.strip()) + b"]")
        if all(isinstance(r, dict) for r in records):
            loaded.records = records
            bad = 0
        else:
            raise ValueError("not all records are objects")
    except ValueError:
        bad = _parse_lines(lines, loaded)
    if tail:
        _repair_tail(path, data, tail, loaded)
    if bad:
        kept = corrupt_name(path)
        shutil.copy2(path, kept)
        atomic_write_bytes(path, b"".join(encode(r) for r in loaded.records))
        msg = (
            f"{path.name}: skipped {bad} unreadable line(s); the original file was kept as "
            f"{kept.name}."
        )
        log.warning(msg)
        loaded.warnings.append(msg)
    return loaded


def _parse_lines(lines: list[bytes], loaded: Loaded) -> int:
    bad = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(record, dict):
            loaded.records.append(record)
        else:
            bad += 1
    return bad


def _repair_tail(path: Path, data: bytes, tail: bytes, loaded: Loaded) -> None:
    """Keep a complete last record that only lacks its newline; cut off a torn one."""
    try:
        record = json.loads(tail)
    except ValueError:
        record = None
    with path.open("r+b") as f:
        if isinstance(record, dict):
            loaded.records.append(record)
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
        else:
            f.truncate(len(data) - len(tail))
            log.warning("%s: dropped an incomplete last line (%d bytes)", path.name, len(tail))
        f.flush()
        os.fsync(f.fileno())


class Appender:
    """Appends records to a JSON Lines file; each append is fsynced before it returns."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: BinaryIO = path.open("ab")

    def append(self, *records: dict[str, Any]) -> None:
        """Durably append one or more records (one fsync)."""
        self._file.write(b"".join(encode(r) for r in records))
        self._file.flush()
        os.fsync(self._file.fileno())

    def reopen(self) -> None:
        """Reopen after the file was replaced (by a compaction)."""
        self._file.close()
        self._file = self.path.open("ab")

    def close(self) -> None:
        """Close the file."""
        self._file.close()
