"""Durable file primitives: atomic snapshots, fsynced appends, moving corrupt files aside.

Every write error comes out as a `StorageError` naming the file and the reason in plain words.
Data files are never written through a symbolic link (one is refused with a message), new
directories are private (0700) and new files 0600 on POSIX, and a new or renamed file is made
durable by an fsync of its directory.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from assistant import failpoints
from assistant.errors import StorageError

log = logging.getLogger(__name__)

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
TEMP_SUFFIX = ".tmp"

_REASONS = {
    errno.ENOSPC: "the disk is full",
    getattr(errno, "EDQUOT", errno.ENOSPC): "the disk quota is used up",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ELOOP: "it is a symbolic link",
    errno.ENOENT: "it does not exist",
    errno.EISDIR: "it is a folder",
    errno.EIO: "an input/output error (a failing disk?)",
    errno.EEXIST: "a file of that name is in the way",
    errno.ENOTDIR: "part of the path is a file, not a folder",
}


def reason(exc: OSError) -> str:
    """A plain reason for an OS error."""
    return _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)


def storage_error(action: str, path: Path, exc: OSError) -> StorageError:
    """`Could not <action> <path>: <reason>.` as a StorageError."""
    return StorageError(f"Could not {action} {path}: {reason(exc)}.")


@contextlib.contextmanager
def writing(path: Path, action: str = "write") -> Iterator[None]:
    """Turn an OSError raised inside into a StorageError about `path`."""
    try:
        yield
    except OSError as exc:
        raise storage_error(action, path, exc) from exc


def refuse_newer(path: Path, raw: object, supported: int) -> None:
    """Raise StorageError if the JSON object `raw` read from `path` has a later `version`.

    Such a file was written by a newer Assistant: it is left untouched, never "repaired".
    """
    version = raw.get("version") if isinstance(raw, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > supported:
        raise StorageError(
            f"{path} was made by a newer version of Assistant (format {version}; this version "
            f"reads up to {supported}). Update Assistant to open it; the file was left as it is."
        )


def read_json_object(path: Path, supported: int, what: str) -> dict[str, Any] | None:
    """The JSON object in `path`, None if there is no file.

    StorageError if it cannot be read (it is kept: unreadable is not corrupt) or was made by a
    newer version (`refuse_newer`); ValueError if it is not a JSON object (it is corrupt).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise storage_error(f"read {what} from", path, exc) from exc
    raw = json.loads(data.decode("utf-8"))  # ValueError (UnicodeDecodeError too) if corrupt
    if not isinstance(raw, dict):
        raise ValueError("the top level is not a JSON object")
    refuse_newer(path, raw, supported)
    return raw


DETAIL = "\nDetail: "  # what a warning says after its words: the parser's own message


def set_aside(path: Path, what: str, problem: object, then: str = "") -> str:
    """Move the corrupt file `path` aside; returns (and logs) the warning that says so, in
    words first, the `problem` as found after `DETAIL`."""
    moved = move_aside(path)
    message = f"{what} could not be read{then}; Assistant moved it to {moved.name}."
    message += f"{DETAIL}{problem}"
    log.warning(message)
    return message


def refuse_link(path: Path) -> None:
    """Raise StorageError if `path` is a symbolic link: data files are not written through one."""
    if path.is_symlink():
        raise StorageError(
            f"{path} is a symbolic link; for safety Assistant does not write through links. "
            "Replace it with the file it points to."
        )


def make_dir(path: Path) -> None:
    """Create `path` and missing parents, private (0700 on POSIX)."""
    with writing(path, "create the folder"):
        _make_dir(path)


def _make_dir(path: Path) -> None:
    if path.is_dir():
        return
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    fsync_dir(path.parent)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file."""
    atomic_write_with(path, lambda f: f.write(data))


def atomic_write_with(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Replace `path` with what `write` writes to a temp file beside it, fsynced then renamed.

    The temp file is 0600 (as `mkstemp` makes it); a symbolic link at `path` is refused.
    """
    refuse_link(path)
    with writing(path):
        _make_dir(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                failpoints.reach("snapshot.write", path)
                write(f)
                f.flush()
                failpoints.reach("snapshot.fsync", path)
                os.fsync(f.fileno())
            failpoints.reach("snapshot.rename", path)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        failpoints.reach("snapshot.dirsync", path)
        fsync_dir(path.parent)


def create_new(path: Path, data: bytes) -> None:
    """Atomically create `path` holding `data`; FileExistsError if it exists (never replaced).

    OSError (not a StorageError) on failure, so that callers can tell FileExistsError apart.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            failpoints.reach("create.write", path)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        failpoints.reach("create.link", path)
        try:
            os.link(tmp, path)  # unlike os.replace, fails if another writer created `path`
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: check, then rename
            if path.exists():
                raise FileExistsError(path) from None
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    failpoints.reach("create.dirsync", path)
    fsync_dir(path.parent)


def remove_file(path: Path) -> None:
    """Remove `path` durably (its folder fsynced); OSError as `os.unlink` raises it."""
    failpoints.reach("delete", path)
    path.unlink()
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
    with writing(path, "move aside"):
        failpoints.reach("aside.move", path)
        os.replace(path, target)
        fsync_dir(path.parent)
    return target


def copy_aside(path: Path) -> Path:
    """Copy `path` (before it is repaired) to `<name>.corrupt-<timestamp>`; returns the copy."""
    target = corrupt_name(path)
    with writing(path, "keep a copy of"):
        failpoints.reach("aside.copy", path)
        shutil.copy2(path, target, follow_symlinks=False)
        os.chmod(target, 0o600)
        fsync_dir(path.parent)
    return target


def remove_stale_temp_files(root: Path) -> int:
    """Remove the temp files of atomic writes that a crash left in `root` and below.

    Call only while holding the data dir's lock: nobody else can be writing one. Returns how
    many were removed.
    """
    removed = 0
    for directory, _, names in os.walk(root):
        for name in names:
            if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                path = Path(directory, name)
                try:
                    path.unlink()
                except OSError as exc:
                    log.warning("Could not remove the stale temp file %s: %s", path, exc)
                else:
                    removed += 1
    if removed:
        log.info("Removed %d temp file(s) left by an earlier crash in %s", removed, root)
    return removed
