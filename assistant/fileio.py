"""Durable file primitives: atomic snapshots, fsynced appends, moving corrupt files aside."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file."""
    atomic_write_with(path, lambda f: f.write(data))


def atomic_write_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Replace `path` with what `write` writes to a temp file beside it, fsynced then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_write_json(path: Path, obj: Any) -> None:
    """Atomically write `obj` as indented UTF-8 JSON."""
    text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in `path` durable (no-op where directories can't be opened)."""
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def corrupt_name(path: Path) -> Path:
    """Where a corrupt `path` is kept: `<name>.corrupt-<timestamp>` beside it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return path.with_name(f"{path.name}.corrupt-{stamp}")


def move_aside(path: Path) -> Path:
    """Rename a corrupt file to `<name>.corrupt-<timestamp>` and return the new path."""
    target = corrupt_name(path)
    os.replace(path, target)
    return target
