"""Nothing lost, nothing leaked: the data dir's lock, caches that cannot hide records, corrupt,
cut and future files, write errors, links and permissions."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.datalock import LOCK_NAME, DataDirLock, DataDirLockedError
from assistant.errors import StorageError
from assistant.fileio import atomic_write_json, remove_stale_temp_files
from assistant.memory import jsonl
from assistant.memory.index_cache import CACHE_NAME
from assistant.memory.memory_log import LOG_NAME
from assistant.memory.semantic import SemanticMemory
from assistant.paths import memory_dir
from tests.reliability.harness import Acked, run_and_kill
from tests.reliability.writer import WRITERS

REPO = Path(__file__).resolve().parent.parent

EXPORTS = Path(__file__).parent / "data" / "exports"


def run_step(*args: str) -> subprocess.CompletedProcess[str]:
    """Run one step of `tests.procs` in a second process."""
    return subprocess.run(
        [sys.executable, "-m", "tests.procs", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )


@pytest.fixture
def holder(data_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """A second process holding the data dir's lock (killed at the end)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.procs", "hold-lock", str(data_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def mem_dir(tmp_path: Path) -> Path:
    """A memory directory of its own."""
    return tmp_path / "memory"


# -- one writer per data dir -------------------------------------------------------------------


def test_a_second_process_cannot_take_the_lock_until_the_first_dies(
    data_dir: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(DataDirLockedError, match=f"process {holder.pid}"):
        DataDirLock(data_dir).acquire()
    holder.send_signal(signal.SIGKILL)  # a crash: the lock file stays, the OS lock goes
    holder.wait()
    assert (data_dir / LOCK_NAME).exists()
    with DataDirLock(data_dir) as lock:  # the stale lock is taken over
        assert lock.held
        assert (data_dir / LOCK_NAME).read_text().split("\n")[0] == str(os.getpid())
    assert not (data_dir / LOCK_NAME).exists()


def test_the_lock_is_the_one_qlockfile_uses(data_dir: Path, holder: subprocess.Popen[str]) -> None:
    from PySide6.QtCore import QLockFile

    qt = QLockFile(str(data_dir / LOCK_NAME))
    assert not qt.tryLock(0)
    pid, _, app = qt.getLockInfo()
    assert (pid, app) == (holder.pid, "Assistant")
    holder.kill()
    holder.wait()
    qt.setStaleLockTime(0)
    assert qt.tryLock(0)  # stale once its process is gone
    with pytest.raises(DataDirLockedError):
        DataDirLock(data_dir).acquire()
    qt.unlock()
    with DataDirLock(data_dir):
        pass


def test_cli_import_while_the_app_runs_is_refused_and_changes_nothing(
    data_dir: Path,
    holder: subprocess.Popen[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = EXPORTS / "chatgpt-realistic.json"
    before = sorted(p.name for p in data_dir.rglob("*"))
    assert main(["import", str(source)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already using" in err
    assert sorted(p.name for p in data_dir.rglob("*")) == before


def test_two_processes_on_one_log_lose_no_acknowledged_memory(data_dir: Path) -> None:
    """Without the lock (it is the app's and the CLI's job), the store still hides nothing."""
    ours = SemanticMemory.open(memory_dir(data_dir))
    a1 = ours.add("first from this process")
    run_step("add", str(data_dir), *(f"from the other process {i}" for i in range(20)))
    a2 = ours.add("second from this process")
    ours.close()  # must neither rewrite the log nor stamp a cache over the other's records
    again = SemanticMemory.open(memory_dir(data_dir))
    texts = {i.text for i in again.all()}
    assert {a1.text, a2.text} <= texts
    assert sum(t.startswith("from the other process") for t in texts) == 20


def test_a_log_compacted_by_another_process_refuses_later_appends(data_dir: Path) -> None:
    ours = SemanticMemory.open(memory_dir(data_dir))
    ours.add("kept")
    run_step("add", str(data_dir), "other", "doomed")
    run_step("forget", str(data_dir), "doomed")  # its close rewrites the log: a new file
    with pytest.raises(StorageError, match="replaced or removed by another program"):
        ours.add("written where nobody would read it")
    ours.close()
    texts = {i.text for i in SemanticMemory.open(memory_dir(data_dir)).all()}
    assert texts == {"kept", "other"}


def test_a_cache_replays_records_appended_after_it(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    first = mem.add("tea, written before the cache")
    mem.close()
    crashed = SemanticMemory.open(mem_dir)  # from the cache
    later = crashed.add("coffee, written after the cache")
    crashed.mark_used([first.id])
    # no close: a crash. The cache is older than the log.
    again = SemanticMemory.open(mem_dir)
    assert {i.id for i in again.all()} == {first.id, later.id}
    assert again.get(first.id).access_count == 1  # type: ignore[union-attr]
    assert again.search("coffee")[0].item.id == later.id


# -- corruption is detected and reported ---------------------------------------------------------


@pytest.mark.parametrize("keep", [5, 0, None])
def test_a_cut_log_is_reported_and_restored_from_the_cache(mem_dir: Path, keep: int | None) -> None:
    mem = SemanticMemory.open(mem_dir)
    items = [mem.add(f"memory number {i}") for i in range(100)]
    mem.close()
    log_path = mem_dir / LOG_NAME
    lines = log_path.read_bytes().splitlines(keepends=True)
    if keep is None:
        log_path.unlink()
    else:
        log_path.write_bytes(b"".join(lines[:keep]))
    again = SemanticMemory.open(mem_dir)
    assert {i.id for i in again.all()} == {i.id for i in items}
    assert any("cut short or replaced" in w for w in again.warnings)
    copies = list(mem_dir.glob(f"{LOG_NAME}.corrupt-*"))
    if keep is None:
        assert copies == []
    else:
        assert [c.read_bytes() for c in copies] == [b"".join(lines[:keep])]  # as found
    again.close()
    assert len(SemanticMemory.open(mem_dir)) == 100


def test_corrupt_lines_are_copied_aside_before_the_tail_is_repaired(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    mem.add("good")
    mem.close()
    (mem_dir / CACHE_NAME).unlink()
    log_path = mem_dir / LOG_NAME
    original = log_path.read_bytes() + b"garbage\n" + b'{"version":1,"op":"put","ite'
    log_path.write_bytes(original)
    again = SemanticMemory.open(mem_dir)
    assert [i.text for i in again.all()] == ["good"]
    [copy] = mem_dir.glob(f"{LOG_NAME}.corrupt-*")
    assert copy.read_bytes() == original
    assert any(copy.name in w for w in again.warnings)


def test_a_log_of_a_newer_version_is_refused_and_left_alone(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    mem.add("old")
    mem.close()
    (mem_dir / CACHE_NAME).unlink()
    log_path = mem_dir / LOG_NAME
    content = log_path.read_bytes() + b'{"version":99,"op":"put","item":{}}\n'
    log_path.write_bytes(content)
    with pytest.raises(StorageError, match="newer version of Assistant"):
        SemanticMemory.open(mem_dir)
    assert log_path.read_bytes() == content
    assert list(mem_dir.glob("*.corrupt-*")) == []


# -- write errors --------------------------------------------------------------------------------


def test_a_failed_append_is_cut_back_and_reported(
    mem_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = SemanticMemory.open(mem_dir)
    kept = mem.add("kept")
    size = (mem_dir / LOG_NAME).stat().st_size
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonl.os, "write", half_then_full)
    with pytest.raises(StorageError, match=rf"{LOG_NAME}: the disk is full"):
        mem.add("lost to a full disk")
    monkeypatch.undo()
    assert (mem_dir / LOG_NAME).stat().st_size == size
    after = mem.add("after the disk was freed")
    mem.close()
    again = SemanticMemory.open(mem_dir)
    assert {i.id for i in again.all()} == {kept.id, after.id}


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_a_read_only_dir_gives_a_storage_error(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    mem.close()
    (mem_dir / LOG_NAME).chmod(0o400)
    with pytest.raises(StorageError, match="permission denied"):
        SemanticMemory.open(mem_dir).add("x")


# -- files ---------------------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="symbolic links need privileges on Windows")
def test_data_files_are_never_written_through_a_link(mem_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b'{"version":1,"op":"put","item":{"id":"x","te')  # a torn line
    mem_dir.mkdir(parents=True)
    (mem_dir / LOG_NAME).symlink_to(outside)
    with pytest.raises(StorageError, match="symbolic link"):
        SemanticMemory.open(mem_dir)
    assert outside.read_bytes().endswith(b'"te')  # not repaired through the link
    settings = tmp_path / "settings.json"
    settings.symlink_to(outside)
    with pytest.raises(StorageError, match="symbolic link"):
        atomic_write_json(settings, {})
    assert settings.is_symlink()


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_new_folders_and_files_are_private(data_dir: Path) -> None:
    mem = SemanticMemory.open(memory_dir(data_dir))
    mem.add("private")
    mem.close()
    for path in [memory_dir(data_dir), *memory_dir(data_dir).iterdir()]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path.name} is {mode:o}"


def test_stale_temp_files_are_removed(data_dir: Path) -> None:
    (data_dir / "memory").mkdir(parents=True)
    stale = data_dir / "memory" / ".semantic.jsonl.abc123.tmp"
    stale.write_bytes(b"x" * 100)
    other = data_dir / "memory" / "notes.tmp"  # not one of ours
    other.write_bytes(b"y")
    assert remove_stale_temp_files(data_dir) == 1
    assert not stale.exists() and other.exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("settings.json", {"version": 99, "chat_model": "future"}),
        ("memory/working.json", {"version": 99, "conversations": {}}),
        ("memory/topics.json", {"version": 99, "topics": {}}),
    ],
)
def test_files_of_a_newer_version_are_refused_and_left_alone(
    data_dir: Path, name: str, content: dict[str, object]
) -> None:
    from assistant.workspace import Workspace

    path = data_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    with pytest.raises(StorageError, match="made by a newer version of Assistant"):
        Workspace.open(data_dir)
    assert json.loads(path.read_text()) == content
    assert list(path.parent.glob("*.corrupt-*")) == []


@pytest.mark.parametrize("name", ["settings.json", "memory/working.json", "memory/topics.json"])
def test_a_corrupt_file_is_moved_aside_with_a_warning(data_dir: Path, name: str) -> None:
    from assistant.workspace import Workspace

    path = data_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"version": 1, "cut sh')
    workspace = Workspace.open(data_dir)
    workspace.close()
    (moved,) = path.parent.glob(f"{path.name}.corrupt-*")
    assert moved.read_bytes() == b'{"version": 1, "cut sh'
    assert any(f"moved it to {moved.name}" in w for w in workspace.warnings)


def test_an_unreadable_settings_file_is_reported_not_replaced(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assistant.settings import Settings

    path = data_dir / "settings.json"
    Settings(chat_model="mine").save(path)
    real = Path.read_bytes

    def denied(self: Path) -> bytes:
        if self == path:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(StorageError, match=r"settings\.json: permission denied"):
        Settings.load(path)
    monkeypatch.undo()
    assert Settings.load(path)[0].chat_model == "mine"


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_a_killed_writer_loses_no_acknowledged_write(kind: str, tmp_path: Path) -> None:
    """One kill per writer here; `make test-reliability` does 200."""
    root = tmp_path / "killed"
    root.mkdir()
    acked = Acked()
    outcome = run_and_kill(kind, root, acked, random.Random(kind), tmp_path / "acks.txt")
    assert (outcome.lost, outcome.warnings) == ([], [])


def test_a_conversation_of_a_newer_version_is_reported_and_left_alone(data_dir: Path) -> None:
    from assistant.workspace import Workspace

    folder = data_dir / "conversations"
    folder.mkdir(parents=True)
    future = folder / "future.jsonl"
    content = b'{"version":7,"type":"meta","title":"t","created_at":"2024-01-01T00:00:00Z"}\n'
    future.write_bytes(content)
    workspace = Workspace.open(data_dir)
    assert any("newer version of Assistant" in w for w in workspace.warnings)
    assert [c.id for c in workspace.conversations.all()] == []
    assert future.read_bytes() == content


def test_cli_write_errors_are_one_line(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["export", str(blocker / "out.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a file of that name is in the way" in err
    source = tmp_path / "in.json"
    source.write_text(
        '{"format": "assistant.export", "version": 1, "exported_at": "2024-01-01T00:00:00Z",'
        ' "app": {"name": "Assistant", "version": "0"}, "conversations": [{"id": "c1",'
        ' "title": "t", "created_at": "2024-01-01T00:00:00Z", "updated_at":'
        ' "2024-01-01T00:00:00Z", "summary": "", "messages": []}]}'
    )

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert main(["import", str(source)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the disk is full" in err
    monkeypatch.undo()
    assert not (data_dir / "conversations" / "c1.jsonl").exists()


def test_a_log_replaced_under_the_store_is_never_cached_over(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    mem.add("first version")
    log_path = mem_dir / LOG_NAME
    replacement = log_path.read_bytes().replace(b"first version", b"other version")
    staged = mem_dir / "staged"
    staged.write_bytes(replacement)  # same size, another file: a compaction by someone else
    os.replace(staged, log_path)
    mem.close()
    assert [i.text for i in SemanticMemory.open(mem_dir).all()] == ["other version"]
