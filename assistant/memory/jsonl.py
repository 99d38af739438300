"""JSON Lines files: fsynced appends, a torn last line skipped, corrupt lines moved aside."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant import failpoints
from assistant.errors import StorageError
from assistant.fileio import (
    BINARY,
    NOFOLLOW,
    atomic_write_bytes,
    copy_aside,
    fsync_dir,
    make_dir,
    refuse_link,
    storage_error,
    writing,
)

log = logging.getLogger(__name__)

_APPEND_FLAGS = (
    os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW | BINARY | getattr(os, "O_CLOEXEC", 0)
)


@dataclass
class Loaded:
    """What a JSON Lines file held, and what was wrong with it."""

    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    damaged_end: Path | None = None  # the copy kept of a file whose damaged end was cut off


Vet = Callable[[dict[str, Any]], None]


def encode(record: dict[str, Any]) -> bytes:
    """One record as a compact UTF-8 line with its newline."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def read(
    path: Path,
    *,
    known_size: int | None = None,
    vet: Vet | None = None,
    max_line: int | None = None,
) -> Loaded:
    """Read every record of `path`, repairing the file so that appends can go on.

    `vet` sees each record before anything is changed: an exception it raises (a record of a
    newer version) leaves the file as it is. A torn last line (an append cut short by a crash,
    never acknowledged) is cut off quietly. An end that is damaged instead (NUL bytes, not the
    start of a record, or starting before `known_size`, the size the file is known to have had
    whole) is cut off too, after the original file was copied to `<name>.corrupt-<timestamp>`
    (`Loaded.damaged_end`), with a warning. Corrupt lines elsewhere are skipped: the original
    file is first copied aside, then rewritten with the good lines, with a warning saying so;
    so are lines longer than `max_line` bytes (not even parsed: the limits of writing hold on
    reading). A symbolic link is refused (StorageError), as is a file that cannot be read.
    """
    refuse_link(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Loaded()
    except OSError as exc:
        raise storage_error("read", path, exc) from exc
    if not data:
        return Loaded()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    too_long = _too_long(lines, max_line)
    if too_long:
        lines = [line for line in lines if len(line) <= (max_line or 0)]
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
    last = _complete(tail) if max_line is None or len(tail) <= max_line else None
    if vet is not None:
        for record in [*loaded.records, *([last] if last else [])]:
            vet(record)
    damaged = bool(tail) and last is None and not _torn(tail, len(data) - len(tail), known_size)
    kept = copy_aside(path) if bad or damaged or too_long else None  # before any change
    if tail:
        _repair_tail(path, len(data), tail, last, loaded)
    if damaged and kept is not None:
        loaded.damaged_end = kept
        msg = (
            f"{path.name}: its last {len(tail):,} bytes were damaged and cut off; the file as "
            f"found was kept as {kept.name}."
        )
        log.warning(msg)
        loaded.warnings.append(msg)
    if (bad or too_long) and kept is not None:
        atomic_write_bytes(path, b"".join(encode(r) for r in loaded.records))
        skipped = [f"{bad} unreadable line(s)"] if bad else []
        if too_long:
            skipped.append(
                f"{len(too_long)} record(s) over the limit of {max_line:,} bytes (the longest "
                f"{max(too_long):,} bytes)"
            )
        msg = (
            f"{path.name}: skipped {' and '.join(skipped)}; the original file was kept as "
            f"{kept.name}."
        )
        log.warning(msg)
        loaded.warnings.append(msg)
    return loaded


def _too_long(lines: list[bytes], max_line: int | None) -> list[int]:
    """The lengths of the lines longer than `max_line` bytes (none without a limit)."""
    if max_line is None:
        return []
    return [len(line) for line in lines if len(line) > max_line]


def _complete(tail: bytes) -> dict[str, Any] | None:
    """The record in a last line that only lacks its newline, else None."""
    try:
        record = json.loads(tail) if tail else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _torn(tail: bytes, start: int, known_size: int | None) -> bool:
    """Whether an incomplete last line at byte `start` is an append cut short by a crash: the
    start of a record, without NUL bytes (a zeroed end), after what the file had whole."""
    after_known = known_size is None or start >= known_size
    return after_known and tail.startswith(b"{") and b"\0" not in tail


def read_tail(path: Path, offset: int, max_line: int | None = None) -> list[dict[str, Any]] | None:
    """The records after byte `offset`, a torn last line cut off as `read` does; None if a
    line there is unreadable or longer than `max_line` (then read the whole file with `read`)."""
    refuse_link(path)
    with writing(path, "read"), path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    if not data:
        return []
    lines = data.split(b"\n")
    tail = lines.pop()
    loaded = Loaded()
    if _too_long([*lines, tail], max_line) or _parse_lines(lines, loaded):
        return None
    if tail:
        last = _complete(tail)
        if last is None and not _torn(tail, offset + len(data) - len(tail), None):
            return None  # a damaged end: `read` keeps a copy and says so
        _repair_tail(path, offset + len(data), tail, last, loaded)
    return loaded.records


def read_range(path: Path, start: int, end: int) -> list[dict[str, Any]]:
    """The records between byte offsets `start` and `end` of `path` (both at line starts),
    changing nothing: an unreadable line is skipped (`read` reported it when the file was
    opened)."""
    refuse_link(path)
    with writing(path, "read"), path.open("rb") as f:
        f.seek(start)
        data = f.read(max(0, end - start))
    lines = data.split(b"\n")
    try:  # fast path, as in `read`
        records = json.loads(b"[" + b",".join(line for line in lines if line.strip()) + b"]")
        if all(isinstance(r, dict) for r in records):
            return list(records)
    except ValueError:
        pass
    loaded = Loaded()
    _parse_lines(lines, loaded)
    return loaded.records


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


def _repair_tail(
    path: Path, size: int, tail: bytes, record: dict[str, Any] | None, loaded: Loaded
) -> None:
    """Keep a complete last `record` that only lacks its newline; else cut the tail off."""
    with writing(path, "repair"):
        failpoints.reach("repair", path)
        fd = os.open(path, os.O_WRONLY | NOFOLLOW | BINARY)
        try:
            if record is not None:
                loaded.records.append(record)
                os.lseek(fd, size, os.SEEK_SET)
                _write_all(fd, b"\n")
            else:
                os.ftruncate(fd, size - len(tail))
                log.warning("%s: dropped an incomplete last line (%d bytes)", path.name, len(tail))
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Appender:
    """Appends records to a JSON Lines file; each append is fsynced before it returns.

    A failed append (a full disk) is cut off again, so no half-written record can come back
    later; appending to a file that was replaced or removed meanwhile is refused rather than
    written where nobody reads it. Errors are StorageErrors.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = -1
        self._open()

    def _open(self) -> None:
        make_dir(self.path.parent)
        refuse_link(self.path)
        with writing(self.path, "open"):
            created = not self.path.exists()
            if created:
                failpoints.reach("append.create", self.path)
            self._fd = os.open(self.path, _APPEND_FLAGS, 0o600)
            if created:
                fsync_dir(self.path.parent)
            self._stat = os.fstat(self._fd)
        self.size = self._stat.st_size

    def append(self, *records: dict[str, Any]) -> int:
        """Durably append one or more records (one fsync); returns the offset they start at."""
        return self.append_bytes(b"".join(encode(r) for r in records))

    def append_bytes(self, data: bytes) -> int:
        """Durably append `data`, encoded records (one fsync); returns the offset it starts at."""
        with writing(self.path, "save to"):
            self._check_same_file()
            start = os.fstat(self._fd).st_size
            try:
                failpoints.tear("append.write", self.path, self._fd, data)
                _write_all(self._fd, data)
                failpoints.reach("append.fsync", self.path)
                os.fsync(self._fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, start)
                    os.fsync(self._fd)
                raise
        self.size = start + len(data)
        return start

    def is_current(self, size: int) -> bool:
        """Whether the path is still the file this appender writes, and `size` bytes long."""
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return os.path.samestat(now, self._stat) and now.st_size == size

    def _check_same_file(self) -> None:
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is None or not os.path.samestat(now, self._stat):
            raise StorageError(
                f"Could not save to {self.path}: the file was replaced or removed by another "
                "program while it was open. Restart Assistant to reload it."
            )

    def reopen(self) -> None:
        """Reopen after the file was replaced (by a compaction)."""
        self.close()
        self._open()

    def close(self) -> None:
        """Close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
