"""Closing the window at any moment: no running thread is destroyed, no store closes under work.

Each test closes (and deletes) the window while something runs on another thread: the loader
right after it reported, a reply stuck in work that cannot be cancelled, a background job, the
start-up upkeep. Qt aborts the whole process if a running QThread is destroyed, so a failure
here can also show as a crashed test run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot
from shiboken6 import Shiboken

from assistant.memory.embedding_upkeep import EmbeddingUpkeep
from assistant.memory.semantic import SemanticMemory
from assistant.ui import shutdown
from assistant.ui.memory.dialogs import MemoryValues
from assistant.ui.window.loader import WorkspaceLoader
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.desktop import configure
from tests.embedders import GatedEmbedder
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_main_window import send

pytestmark = pytest.mark.gui


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """What a blocked thread waits for; always set at the end so no thread is left hanging."""
    event = threading.Event()
    yield event
    event.set()
    shutdown.join_all()


@pytest.fixture
def loaders(monkeypatch: pytest.MonkeyPatch, release: threading.Event) -> list[WorkspaceLoader]:
    """Every loader from now on; each stays running after it reported, until `release`."""
    started: list[WorkspaceLoader] = []
    run = WorkspaceLoader.run

    def lingering(self: WorkspaceLoader) -> None:
        started.append(self)
        run(self)
        release.wait(10)

    monkeypatch.setattr(WorkspaceLoader, "run", lingering)
    return started


@pytest.fixture
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing waits 50 ms for background work instead of 3 s."""
    monkeypatch.setattr(shutdown, "QUIT_WAIT_MS", 50)


def blocking(
    monkeypatch: pytest.MonkeyPatch,
    cls: type,
    name: str,
    release: threading.Event,
    when: Callable[..., bool],
) -> threading.Event:
    """Make `cls.name` wait for `release` when `when(*args)`; returns an event set on entry."""
    entered = threading.Event()
    original = getattr(cls, name)

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if when(*args, **kwargs):
            entered.set()
            release.wait(10)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, wrapper)
    return entered


@pytest.fixture
def windows() -> Iterator[Callable[[Workspace | None], MainWindow]]:
    """Make windows that the test deletes itself (deleted at the end if it did not)."""
    made: list[MainWindow] = []

    def make(workspace: Workspace | None = None) -> MainWindow:
        made.append(MainWindow(workspace))
        return made[-1]

    yield make
    for win in made:
        if Shiboken.isValid(win):
            delete(win)


def open_window(qtbot: QtBot, make: Callable[[Workspace], MainWindow], root: Path) -> MainWindow:
    win = make(Workspace.open(root))
    win.show()
    qtbot.waitExposed(win)
    return win


def delete(win: MainWindow) -> None:
    """Destroy the window now, with its children, as Qt does when its owner goes."""
    win.close()
    Shiboken.delete(win)


def test_closing_right_after_the_loader_failed_destroys_no_running_thread(
    qtbot: QtBot,
    windows: Callable[[Workspace | None], MainWindow],
    tmp_path: Path,
    loaders: list[WorkspaceLoader],
    release: threading.Event,
) -> None:
    (tmp_path / "memory").write_text("a file where the memory folder should be")
    win = windows(None)
    with qtbot.waitSignal(win.open_failed, timeout=10000):
        win.open_workspace(tmp_path)
        win.show()
    assert loaders[0].isRunning()
    delete(win)
    release.set()
    qtbot.waitUntil(loaders[0].isFinished, timeout=10000)


def test_closing_right_after_the_loader_opened_closes_the_workspace_once(
    qtbot: QtBot,
    windows: Callable[[Workspace | None], MainWindow],
    data_dir: Path,
    loaders: list[WorkspaceLoader],
    release: threading.Event,
    closed_workspaces: list[Workspace],
) -> None:
    win = windows(None)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.open_workspace(data_dir)
        win.show()
    assert loaders[0].isRunning()
    delete(win)
    assert len(closed_workspaces) == 1
    release.set()
    qtbot.waitUntil(loaders[0].isFinished, timeout=10000)
    qtbot.wait(2 * shutdown.POLL_MS)
    assert len(closed_workspaces) == 1


def test_closing_while_the_loader_runs_closes_what_it_opens_later(
    qtbot: QtBot,
    windows: Callable[[Workspace | None], MainWindow],
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    release: threading.Event,
    closed_workspaces: list[Workspace],
) -> None:
    entered = blocking(monkeypatch, Workspace, "open", release, lambda *a, **k: True)
    win = windows(None)
    reported: list[object] = []
    win.ready.connect(lambda: reported.append("ready"))
    win.open_workspace(data_dir)
    win.show()
    qtbot.waitUntil(entered.is_set, timeout=10000)
    delete(win)
    release.set()
    qtbot.waitUntil(lambda: len(closed_workspaces) == 1, timeout=10000)
    assert reported == []


def test_closing_during_a_reply_that_cannot_be_cancelled_waits_for_it_off_the_window(
    qtbot: QtBot,
    windows: Callable[[Workspace | None], MainWindow],
    data_dir: Path,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    release: threading.Event,
    closed_workspaces: list[Workspace],
    short_wait: None,
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    win = open_window(qtbot, windows, data_dir)
    entered = blocking(
        monkeypatch, SemanticMemory, "search", release, lambda query, *a, **k: "stuck" in query
    )
    fake_openai.enqueue(Reply.text("An answer that comes after all."))
    send(qtbot, win, "stuck in retrieval")
    qtbot.waitUntil(entered.is_set, timeout=10000)
    delete(win)  # the worker is still inside the memory search: the stores stay open
    assert closed_workspaces == []
    release.set()
    qtbot.waitUntil(lambda: len(closed_workspaces) == 1, timeout=10000)
    workspace = Workspace.open(data_dir)
    (listing,) = workspace.conversations.all()
    roles = [m.role for m in workspace.conversations.load(listing.id).messages]
    workspace.close()
    assert roles[0] == "user"


def test_a_memory_added_while_quitting_is_saved(
    qtbot: QtBot,
    windows: Callable[[Workspace | None], MainWindow],
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    release: threading.Event,
    closed_workspaces: list[Workspace],
    short_wait: None,
) -> None:
    win = open_window(qtbot, windows, data_dir)
    entered = blocking(
        monkeypatch, SemanticMemory, "add", release, lambda text, *a, **k: "slow" in text
    )
    win.sidebar.memories.controller.add_memory(MemoryValues("A slow memory to save", "fact", 0.5))
    qtbot.waitUntil(entered.is_set, timeout=10000)
    delete(win)
    assert closed_workspaces == []  # the job still writes to them
    release.set()
    qtbot.waitUntil(lambda: len(closed_workspaces) == 1, timeout=10000)
    workspace = Workspace.open(data_dir)
    texts = [item.text for item in workspace.memory.all()]
    workspace.close()
    assert texts == ["A slow memory to save"]


def test_closing_during_the_start_up_embedding_stops_it_between_batches(
    qtbot: QtBot,
    windows: Callable[[Workspace | None], MainWindow],
    data_dir: Path,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    closed_workspaces: list[Workspace],
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    workspace = Workspace.open(data_dir)
    for i in range(600):  # three batches to embed
        workspace.memory.add(f"Memory number {i}")
    workspace.close()
    closed_workspaces.clear()
    configure(data_dir, fake_openai)
    batches: list[int] = []
    embed = EmbeddingUpkeep.embed

    def counting(self: EmbeddingUpkeep, texts: list[str], **kwargs: Any) -> Any:
        batches.append(len(texts))
        return embed(self, texts, **kwargs)

    monkeypatch.setattr(EmbeddingUpkeep, "embed", counting)
    for _ in range(3):
        fake_openai.enqueue_embeddings(Reply.text("", delay=0.3))
    win = open_window(qtbot, windows, data_dir)
    qtbot.waitUntil(lambda: len(batches) >= 1, timeout=10000)
    delete(win)
    assert len(closed_workspaces) == 1  # stopped within the bounded wait
    assert len(batches) < 3


def test_closing_while_the_list_filter_waits_for_the_embedder(
    qtbot: QtBot,
    windows: Callable[[Workspace | None], MainWindow],
    data_dir: Path,
    closed_workspaces: list[Workspace],
    short_wait: None,
) -> None:
    workspace = Workspace.open(data_dir)
    embedder = GatedEmbedder()
    workspace.conversations.set_embedder(embedder)
    chat = workspace.conversations.create("Weekend").id
    workspace.conversations.append(chat, "user", "We could take the train to Lisbon")
    workspace.conversations.embed_pending()
    win = windows(workspace)
    win.show()
    qtbot.waitExposed(win)
    embedder.hold("lisbon")
    try:
        win.conversations.filter.setText("lisbon")
        win.conversations.apply_filter()
        qtbot.waitUntil(lambda: embedder.waiting("lisbon"))
        delete(win)  # the search still uses the conversations: they stay open
        assert closed_workspaces == []
    finally:
        embedder.release()
    qtbot.waitUntil(lambda: len(closed_workspaces) == 1, timeout=10000)
