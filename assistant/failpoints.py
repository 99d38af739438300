"""Named failpoints at every write, fsync, rename and removal of a data file, for crash tests.

The file layer (`fileio`, `memory.jsonl`) calls `reach(op, path)` just before each step that
changes the disk, and `tear(op, path, fd, data)` where a write may be cut short. A failpoint's
name is `<file>.<op>`: the kind of file (`FILES`, from its path: "memory-log",
"conversation", "settings"...) and the step ("append.fsync", "snapshot.rename"...). A new kind
of data file gets its name by adding a line to `FILES`; a new way of writing, by calling
`reach` before each of its steps.

Off (the default) each call is one test of a module global. `ASSISTANT_FAILPOINTS`, read once
at import, turns them on in a child process of the crash harness (`tests/reliability`):

- `trace:FILE`: append the name of each failpoint reached to FILE, one a line;
- `crash:NAME@N`: at the N-th time NAME is reached, the process kills itself with SIGKILL (at a
  `tear` failpoint, after writing the first half of the bytes): a crash at that very step;
- `fail:NAME@N`: at the N-th time NAME is reached, that step fails with an OSError (EIO, nothing
  written) and the process goes on: a disk that refuses a write. Tests arm it in their own
  process with `parse` (`monkeypatch.setattr(failpoints, "_ARMED", failpoints.parse(...))`).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import signal
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ENV = "ASSISTANT_FAILPOINTS"

# The kinds of data file, by a pattern of the path's last two parts (first match wins).
FILES: tuple[tuple[str, str], ...] = (
    ("*/settings.json", "settings"),
    ("memory/working.json", "working"),
    ("memory/topics.json", "topics"),
    ("memory/inbox.json", "inbox"),
    ("memory/semantic.jsonl", "memory-log"),
    ("memory/semantic-index.npz", "memory-index"),
    ("memory/vectors-*", "memory-vectors"),
    ("conversations/index.json", "conversation-index"),
    ("conversations/vectors-*", "message-vectors"),
    ("conversations/.writes", "write-marker"),
    ("conversations/*.jsonl", "conversation"),
    ("knowledge/passages.jsonl", "knowledge-passages"),
    ("knowledge/vectors-*", "knowledge-vectors"),
    ("*/mcp.json", "mcp"),
    ("projects/*", "projects"),
    ("*.corrupt-*", "copy-aside"),
)


def kind_of(path: Path) -> str:
    """The kind of data file `path` is (`FILES`), or "other"."""
    tail = "/".join(path.parts[-2:])
    return next((kind for pattern, kind in FILES if fnmatch.fnmatchcase(tail, pattern)), "other")


@dataclass
class _Armed:
    """What `ASSISTANT_FAILPOINTS` asked for."""

    trace: Path | None = None
    crash: str | None = None  # the failpoint where the process crashes (or fails: `fail`)
    at: int = 1
    fail: bool = False
    seen: Counter[str] = field(default_factory=Counter)

    def due(self, name: str) -> bool:
        """Note that `name` was reached; whether the process must crash there."""
        if self.trace is not None:
            with self.trace.open("a", encoding="utf-8") as f:
                f.write(name + "\n")
        if name != self.crash:
            return False
        self.seen[name] += 1
        return self.seen[name] == self.at


def parse(spec: str) -> _Armed | None:
    """What a value of `ASSISTANT_FAILPOINTS` asks for (None: nothing)."""
    if spec.startswith("trace:"):
        return _Armed(trace=Path(spec.removeprefix("trace:")))
    for mode in ("crash:", "fail:"):
        if spec.startswith(mode):
            name, _, at = spec.removeprefix(mode).partition("@")
            return _Armed(crash=name, at=int(at or "1"), fail=mode == "fail:")
    return None


_ARMED = parse(os.environ.get(ENV, ""))


def reach(op: str, path: Path) -> None:
    """The failpoint of step `op` on `path` (a crash or a failure there when armed so)."""
    if _ARMED is not None and _ARMED.due(f"{kind_of(path)}.{op}"):
        _fail_or_crash(_ARMED, f"{kind_of(path)}.{op}")


def tear(op: str, path: Path, fd: int, data: bytes) -> None:
    """A failpoint where writing `data` to `fd` may be cut short: armed to crash, it writes
    half first."""
    if _ARMED is not None and _ARMED.due(f"{kind_of(path)}.{op}"):
        if not _ARMED.fail:
            os.write(fd, data[: max(1, len(data) // 2)])
        _fail_or_crash(_ARMED, f"{kind_of(path)}.{op}")


def _fail_or_crash(armed: _Armed, name: str) -> None:
    if armed.fail:
        raise OSError(errno.EIO, f"Input/output error (failpoint {name})")
    _crash()


def _crash() -> None:
    kill = getattr(signal, "SIGKILL", None)
    if kill is not None:
        os.kill(os.getpid(), kill)
    os._exit(137)  # where there is no SIGKILL: as abrupt (no cleanup, no buffers flushed)
