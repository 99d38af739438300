"""Failpoints: named by the file and the step, off unless a child process is started with
`ASSISTANT_FAILPOINTS`; and a few crashes of the harness (`make test-reliability` runs them
all: `tests/reliability/test_failpoints.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant import failpoints, fileio
from assistant.errors import StorageError
from tests.reliability.crashes import check, crash_and_check, workload

# A few crash points of each kind of step: a torn append, a snapshot before its rename, a cache,
# a removal; a compacted log with the cache of the log before it, an edit the vector cache
# does not know of (these two brought forgotten memories back and kept a stale vector).
SAMPLE = [
    ("conversation.append.write", 3),
    ("settings.snapshot.rename", 2),
    ("conversation-index.snapshot.fsync", 1),
    ("memory-log.append.write", 4),
    ("conversation.delete", 1),
    ("memory-index.snapshot.write", 2),
    ("memory-log.append.fsync", 15),
    ("projects.snapshot.rename", 2),  # the project's change: the first version or the second
    ("projects.delete", 1),
    ("inbox.snapshot.write", 1),
    ("inbox.snapshot.rename", 2),
    ("inbox.snapshot.fsync", 3),
    ("knowledge-passages.append.write", 3),  # a file's changed entry torn in half
    ("knowledge-passages.snapshot.rename", 1),  # the log compacted or not
    ("knowledge-vectors.append.write", 2),
    ("knowledge-vectors.snapshot.rename", 1),
]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("data/settings.json", "settings"),
        ("data/memory/working.json", "working"),
        ("data/memory/semantic.jsonl", "memory-log"),
        ("data/memory/semantic-index.npz", "memory-index"),
        ("data/memory/vectors-hash-0a1b2c3d.npy", "memory-vectors"),
        ("data/conversations/0a1b.jsonl", "conversation"),
        ("data/conversations/index.json", "conversation-index"),
        ("data/conversations/vectors-hash.npz", "message-vectors"),
        ("data/mcp.json", "mcp"),
        ("data/memory/inbox.json", "inbox"),
        ("data/projects/0a1b.json", "projects"),
        ("data/knowledge/passages.jsonl", "knowledge-passages"),
        ("data/knowledge/vectors-hash.bin", "knowledge-vectors"),
        ("data/elsewhere.txt", "other"),
    ],
)
def test_a_failpoint_is_named_by_its_kind_of_file(path: str, kind: str) -> None:
    assert failpoints.kind_of(Path(path)) == kind


def test_failpoints_are_off_unless_asked_for() -> None:
    assert failpoints._ARMED is None
    failpoints.reach("snapshot.rename", Path("settings.json"))  # nothing happens


def test_the_workload_passes_a_failpoint_of_every_step_of_every_store(tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    root = tmp_path / "data"
    root.mkdir()
    run = workload(root, f"trace:{trace}")
    assert run.acks[-1]["ack"] == "done" and check(root, run) == []
    names = set(trace.read_text().split())
    for kind in ("settings", "working", "conversation-index", "memory-index", "inbox"):
        assert {f"{kind}.snapshot.{step}" for step in ("write", "fsync", "rename")} <= names
    assert {"conversation.append.write", "conversation.create.link", "conversation.delete"} <= names
    assert {"memory-log.append.fsync", "memory-log.snapshot.rename"} <= names
    assert {"memory-vectors.snapshot.rename", "message-vectors.snapshot.rename"} <= names
    assert {f"projects.snapshot.{step}" for step in ("write", "fsync", "rename")} <= names
    assert "projects.delete" in names
    for kind in ("knowledge-passages", "knowledge-vectors"):
        assert {f"{kind}.append.write", f"{kind}.append.fsync", f"{kind}.snapshot.rename"} <= names


@pytest.mark.parametrize(("name", "at"), SAMPLE)
def test_a_crash_there_loses_nothing_acknowledged(tmp_path: Path, name: str, at: int) -> None:
    assert crash_and_check(tmp_path, name, at) == []


def test_a_fail_failpoint_refuses_that_step_once_and_the_process_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b"before")
    monkeypatch.setattr(failpoints, "_ARMED", failpoints.parse("fail:settings.snapshot.rename@2"))
    fileio.atomic_write_bytes(path, b"first")  # the first passage goes through
    with pytest.raises(StorageError, match="input/output error"):
        fileio.atomic_write_bytes(path, b"second")
    assert path.read_bytes() == b"first"
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]  # no temp file left
    fileio.atomic_write_bytes(path, b"third")
    assert path.read_bytes() == b"third"
