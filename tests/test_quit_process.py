"""Quitting ends the process within a few seconds whatever runs in the background, and the work
resumes at the next start: the app runs in a child process, as a user runs it, on a data dir
whose start-up embedding (after an import) never returns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assistant.datalock import DataDirLock
from assistant.memory import ConversationStore
from assistant.memory.semantic import SemanticMemory
from assistant.paths import conversations_dir, memory_dir
from tests.child import REPO, TIMEOUT_S, environment

pytestmark = pytest.mark.gui


def seed(root: Path) -> None:
    """Memories and messages without vectors, as an import leaves them."""
    memory = SemanticMemory.open(memory_dir(root))
    try:
        for n in range(20):
            memory.add(f"Imported fact number {n} about the garden")
    finally:
        memory.close()
    conversations = ConversationStore(conversations_dir(root))
    try:
        cid = conversations.create("Imported").id
        for n in range(10):
            conversations.append(cid, "user", f"Question {n} about roses")
            conversations.append(cid, "assistant", f"Answer {n} about roses")
    finally:
        conversations.close()


def run(root: Path, mode: str) -> subprocess.CompletedProcess[str]:
    """The app in a child process, closed by its window (see `tests.quit_driver`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.quit_driver", str(root), mode],
        cwd=REPO,
        env=environment(root, QT_QPA_PLATFORM="offscreen"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the app did not end after its window closed:\n{out}\n{err}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.timeout(4 * TIMEOUT_S)  # two starts of the app, each guarded by TIMEOUT_S
def test_quitting_ends_the_process_while_the_start_up_embedding_is_stuck(data_dir: Path) -> None:
    seed(data_dir)
    stuck = run(data_dir, "stuck")
    assert "EMBEDDING STARTED" in stuck.stdout and "CLOSING" in stuck.stdout
    assert stuck.returncode == 0, stuck.stderr
    assert "Traceback" not in stuck.stderr
    lock = DataDirLock(data_dir)
    lock.acquire()  # not held by anyone: the next start can open the data
    lock.release()
    resumed = run(data_dir, "finish")  # the next start embeds what was left
    assert resumed.returncode == 0, resumed.stderr
    assert "LEFT 0 0" in resumed.stdout
    assert "did not stop" not in resumed.stderr  # nothing runs on: an orderly quit
