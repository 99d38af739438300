"""Background jobs for the GUI: run a function on the thread pool, get its result as a signal;
`LatestJob` for work of which only the latest call counts (search as you type)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from assistant.errors import AssistantError

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
T = TypeVar("T")


class Job(QObject):
    """One background call; its signals arrive on the GUI thread."""

    finished = Signal(object)  # the function's result
    failed = Signal(str)  # a message for the user
    progress = Signal(int, int)  # done, total

    def __init__(self, fn: Callable[[Progress], Any]) -> None:
        super().__init__()
        self._fn = fn

    def _run(self) -> None:
        try:
            result = self._fn(self.progress.emit)
        except AssistantError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:
            log.exception("A background job failed")
            self.failed.emit(f"Something went wrong: {exc}")
        else:
            self.finished.emit(result)


_running: set[Job] = set()  # keeps jobs alive until they are done


def run_job(
    fn: Callable[[Progress], T],
    *,
    on_done: Callable[[T], None] | None = None,
    on_error: Callable[[str], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Job:
    """Run `fn(progress)` on the global thread pool; callbacks run on the GUI thread."""
    job = Job(fn)
    if on_done is not None:
        job.finished.connect(on_done)
    if on_error is not None:
        job.failed.connect(on_error)
    if on_progress is not None:
        job.progress.connect(on_progress)
    _start(job)
    return job


def _start(job: Job) -> None:
    """Start a job whose callbacks are connected (it may finish at once)."""
    job.finished.connect(lambda _: _running.discard(job))
    job.failed.connect(lambda _: _running.discard(job))
    _running.add(job)
    QThreadPool.globalInstance().start(QRunnable.create(job._run))


class LatestJob(QObject, Generic[T]):
    """Runs background calls of which only the latest counts: `run` again or `cancel`, and the
    earlier calls' results and errors are dropped when they arrive.

    The callbacks run on the GUI thread, and never after this object (a child of the widget
    they belong to) is deleted: the jobs outlive their widget, their results do not reach it.
    """

    def __init__(
        self, on_done: Callable[[T], None], on_error: Callable[[str], None], parent: QObject
    ) -> None:
        super().__init__(parent)
        self._on_done = on_done
        self._on_error = on_error
        self._latest: Job | None = None

    @property
    def running(self) -> bool:
        """Whether the latest call has not reported yet."""
        return self._latest is not None

    def run(self, fn: Callable[[Progress], T]) -> None:
        """Run `fn(progress)` in the background; its result (or error) replaces any pending."""
        job = Job(fn)
        # Slots of this QObject: Qt drops the connections when it is deleted.
        job.finished.connect(self._finished)
        job.failed.connect(self._failed)
        self._latest = job
        _start(job)

    def cancel(self) -> None:
        """Drop the result of the call under way, if any."""
        self._latest = None

    @Slot(object)
    def _finished(self, result: T) -> None:
        if self.sender() is self._latest:
            self._latest = None
            self._on_done(result)

    @Slot(str)
    def _failed(self, message: str) -> None:
        if self.sender() is self._latest:
            self._latest = None
            self._on_error(message)
