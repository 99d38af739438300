"""One writer per data directory: a lock file held for the life of the process.

The file is `assistant.lock` in the data directory, in the format of Qt's `QLockFile` (the
process id, the application name and the host name, one a line), so either side sees the
other. It is held with an OS lock (`flock` on POSIX, `msvcrt.locking` on Windows) that the
system drops when the process ends, however it ends: a lock left by a crash is therefore
stale as soon as its process is gone, and the next process takes it over.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from assistant import APP_NAME
from assistant.errors import StorageError
from assistant.fileio import storage_error

LOCK_NAME = "assistant.lock"
_RETRY_S = 0.1


@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as its file says (fields may be empty for an unreadable file)."""

    pid: int | None
    app: str
    host: str


class DataDirLockedError(StorageError):
    """Another process has the data directory open."""

    def __init__(self, root: Path, holder: Holder) -> None:
        who = f"process {holder.pid}" if holder.pid else "another process"
        super().__init__(
            f"{APP_NAME} is already using {root} ({who}). Close it first, or use another "
            "data directory with --data-dir."
        )
        self.root = root
        self.holder = holder


class LockingUnsupportedError(StorageError):
    """The file system of the data directory cannot lock files (some network shares)."""

    def __init__(self, root: Path, err: OSError) -> None:
        reason = err.strerror or type(err).__name__
        super().__init__(
            f"{APP_NAME} cannot lock its data directory {root}: its file system does not "
            f"support file locks ({reason}), as with some network shares; use a data "
            "directory on a local disk (--data-dir)."
        )
        self.root = root


class DataDirLock:
    """The data directory's lock; `acquire` takes it or raises DataDirLockedError."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self, wait_s: float = 0.0) -> None:
        """Take the lock (a stale one too); DataDirLockedError if a live process has it, after
        trying for `wait_s` seconds (for a holder that keeps it briefly: `assistant mcp`)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self._acquire()
                return
            except DataDirLockedError:
                if time.monotonic() >= deadline:
                    raise
            time.sleep(_RETRY_S)

    def _acquire(self) -> None:
        if self._fd is not None:
            return
        for _ in range(5):  # the file may be removed by its holder between open and lock
            fd = _open(self.path)
            try:
                locked = _try_lock(fd)
            except OSError as exc:  # ENOLCK, EOPNOTSUPP, ENOSYS...: no locks on this share
                os.close(fd)
                raise LockingUnsupportedError(self.root, exc) from exc
            if not locked:
                holder = read_holder(self.path)
                os.close(fd)
                raise DataDirLockedError(self.root, holder)
            if _same_file(fd, self.path):
                break
            _unlock(fd)
            os.close(fd)
        else:
            raise StorageError(f"Could not lock {self.path}: it keeps being replaced.")
        try:
            info = f"{os.getpid()}\n{APP_NAME}\n{socket.gethostname()}\n".encode()
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, info)
            os.fsync(fd)
        except OSError as exc:
            _unlock(fd)
            os.close(fd)
            raise storage_error("write the lock file", self.path, exc) from exc
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and let go of the lock."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):  # unlinked while locked: nobody can lock the old file
            os.unlink(self.path)
        _unlock(fd)
        os.close(fd)

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def read_holder(path: Path) -> Holder:
    """What the lock file at `path` says about its holder."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    lines += ["", "", ""]
    pid = int(lines[0]) if lines[0].strip().isdigit() else None
    return Holder(pid, lines[1], lines[2])


def _open(path: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags, 0o600)
    except OSError as exc:
        raise storage_error("open the lock file", path, exc) from exc


def _same_file(fd: int, path: Path) -> bool:
    """Whether `fd` is still the file at `path` (not one its holder removed meanwhile)."""
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return False


if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        """Whether the lock was taken; OSError when the file system cannot lock."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
