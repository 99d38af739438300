"""Background jobs for the GUI: run a function on the thread pool, get its result as a signal."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

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
    job.finished.connect(lambda _: _running.discard(job))
    job.failed.connect(lambda _: _running.discard(job))
    _running.add(job)
    QThreadPool.globalInstance().start(QRunnable.create(job._run))
    return job
