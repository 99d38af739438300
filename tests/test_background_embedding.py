"""Embedding in the background: off the worker's thread (a turn never waits for it), at a low
priority, paused while a reply is written, and stopped when the app closes."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from PySide6.QtCore import QThreadPool
from pytestqt.qtbot import QtBot

from assistant.priority import BACKGROUND_NICE
from assistant.ui.worker import AgentWorker
from assistant.workspace import Workspace
from tests.embedders import HashEmbedder

pytestmark = pytest.mark.gui


class NotingEmbedder(HashEmbedder):
    """Notes the nice value of the threads that embed."""

    def __init__(self) -> None:
        super().__init__()
        self.nice: list[int] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.nice.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return super().embed(texts)


@pytest.fixture
def worker(data_dir: Path) -> Iterator[tuple[AgentWorker, Workspace, NotingEmbedder]]:
    workspace = Workspace.open(data_dir)
    embedder = NotingEmbedder()
    workspace.conversations.set_embedder(embedder)
    workspace.memory.set_embedder(None)
    cid = workspace.conversations.create("Old").id
    for text in ("We went to Porto", "The trams were yellow", "Then we ate tarts"):
        workspace.conversations.append(cid, "user", text)
    worker = AgentWorker(workspace)
    yield worker, workspace, embedder
    worker.stop()
    QThreadPool.globalInstance().waitForDone()
    workspace.close()


def test_embedding_waits_while_a_reply_is_written(
    qtbot: QtBot, worker: tuple[AgentWorker, Workspace, NotingEmbedder]
) -> None:
    agent, workspace, embedder = worker
    waiting = threading.Event()
    between = agent._between_batches

    def noting() -> bool:
        waiting.set()
        return between()

    agent._between_batches = noting  # type: ignore[method-assign]
    agent._idle.clear()  # a turn runs
    agent.embed_missing()
    qtbot.waitUntil(waiting.is_set, timeout=10_000)
    assert embedder.calls == 0  # it waits for the reply before its first batch
    assert workspace.conversations.pending_embeddings() == 3
    agent._idle.set()  # the reply is done
    qtbot.waitUntil(lambda: workspace.conversations.pending_embeddings() == 0, timeout=10_000)
    if sys.platform.startswith("linux"):
        base = os.getpriority(os.PRIO_PROCESS, 0)
        assert set(embedder.nice) == {min(19, base + BACKGROUND_NICE)}


def test_closing_stops_a_waiting_embedding(
    qtbot: QtBot, worker: tuple[AgentWorker, Workspace, NotingEmbedder]
) -> None:
    agent, workspace, embedder = worker
    agent._idle.clear()
    agent.embed_missing()
    agent.embed_missing()  # asked again while it runs: one job, once more at most
    agent.stop()
    assert QThreadPool.globalInstance().waitForDone(10_000)
    assert embedder.calls == 0
    assert workspace.conversations.pending_embeddings() == 3
