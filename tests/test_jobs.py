"""Background jobs: only the latest of a `LatestJob`'s calls reports, never to a deleted owner."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QObject, QThreadPool
from pytestqt.qtbot import QtBot
from shiboken6 import Shiboken

from assistant.ui.jobs import LatestJob, Progress

pytestmark = pytest.mark.gui


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """What a held job waits for; opened at the end so that no job is left waiting."""
    event = threading.Event()
    yield event
    event.set()
    QThreadPool.globalInstance().waitForDone()


def held(gate: threading.Event, result: str) -> Callable[[Progress], str]:
    def work(_progress: Progress) -> str:
        gate.wait(30)
        return result

    return work


def failing(message: str) -> Callable[[Progress], str]:
    def work(_progress: Progress) -> str:
        raise RuntimeError(message)

    return work


def settle() -> None:
    """Let every job finish and every result it sent arrive."""
    QThreadPool.globalInstance().waitForDone()
    QCoreApplication.sendPostedEvents()


class Owner(QObject):
    """What a widget using a `LatestJob` records."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[str] = []
        self.errors: list[str] = []
        self.job: LatestJob[str] = LatestJob(self.results.append, self.errors.append, self)


def test_a_newer_call_that_finishes_first_wins_and_the_older_result_is_dropped(
    qtbot: QtBot, gate: threading.Event
) -> None:
    owner = Owner()
    owner.job.run(held(gate, "old"))
    owner.job.run(lambda _progress: "new")
    qtbot.waitUntil(lambda: owner.results == ["new"])
    assert not owner.job.running
    gate.set()
    settle()
    assert owner.results == ["new"]


def test_only_the_latest_error_is_reported_and_cancel_drops_a_result(
    qtbot: QtBot, gate: threading.Event
) -> None:
    owner = Owner()
    owner.job.run(failing("stale failure"))
    owner.job.run(failing("the server is down"))
    qtbot.waitUntil(lambda: owner.errors != [])
    settle()
    assert owner.errors == ["Something went wrong: the server is down"]
    owner.job.run(held(gate, "cancelled"))
    assert owner.job.running
    owner.job.cancel()
    assert not owner.job.running
    gate.set()
    settle()
    assert owner.results == []


def test_a_result_arriving_after_its_owner_was_deleted_goes_nowhere(
    qtbot: QtBot, gate: threading.Event
) -> None:
    owner = Owner()
    results = owner.results
    owner.job.run(held(gate, "late"))
    Shiboken.delete(owner)
    gate.set()
    settle()
    assert results == []
