"""Background threads outlive the window that started them: none is destroyed while it runs.

Qt aborts the process when a running `QThread` is destroyed, which is what happens when the
window that owns it is deleted. So a window hands its threads to `release_when_finished`: a
thread is kept (parentless) until it has finished, and what waits for it (closing the stores
it uses) then runs on the GUI thread, after every signal the thread emitted before it ended.
`join_all` waits for whatever is left before the process exits; at quit for a bounded time
only (`QUIT_GRACE_S`): work that does not stop then is left to the end of the process, as a
crash would leave it (every store is consistent at any moment), and resumes at the next start.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, QThreadPool, QTimer, Slot

log = logging.getLogger(__name__)

QUIT_WAIT_MS = 3000  # how long closing the window waits before letting work finish on its own
QUIT_GRACE_S = 2.0  # after the window closed, how long quitting waits for the rest
POLL_MS = 50  # how often a finished thread's keeper looks whether the jobs are done


class _Keeper(QObject):
    """Holds one thread (and what lives on it) until it, and maybe the jobs, have finished."""

    def __init__(
        self, thread: QThread, then: Callable[[], None] | None, jobs: bool, keep: object
    ) -> None:
        super().__init__()  # on the GUI thread: `finished` arrives queued, after earlier signals
        self._thread = thread
        self._then = then
        self._jobs = jobs
        self._keep = keep
        thread.finished.connect(self.on_finished)

    @Slot()
    def on_finished(self) -> None:
        """Finish now, or once the background jobs are done too."""
        if self._jobs and QThreadPool.globalInstance().activeThreadCount():
            QTimer.singleShot(POLL_MS, self.on_finished)
            return
        self.finish()

    def finish(self, wait_ms: int | None = None) -> bool:
        """Wait for the thread and the jobs (at most `wait_ms` each, if given), run what
        waited for them, let go of the thread; False if they did not finish in time."""
        if self not in _kept:
            return True
        if wait_ms is None:
            self._thread.wait()
            if self._jobs:
                QThreadPool.globalInstance().waitForDone()
        elif not self._thread.wait(wait_ms) or (
            self._jobs and not QThreadPool.globalInstance().waitForDone(wait_ms)
        ):
            return False
        then, self._then, self._keep = self._then, None, None
        _kept.discard(self)
        # Dropped on the next turn of the event loop, not inside this object's own slot.
        _releasing.add(self)
        QTimer.singleShot(0, lambda: _releasing.discard(self))
        if then is not None:
            then()
        return True


_kept: set[_Keeper] = set()  # still waiting
_releasing: set[_Keeper] = set()  # done; dropped on the next turn of the event loop


def release_when_finished(
    thread: QThread,
    then: Callable[[], None] | None = None,
    *,
    jobs: bool = False,
    keep: object = None,
) -> None:
    """Keep a started `thread` alive until it has finished, then call `then` (GUI thread).

    With `jobs`, also wait for the background jobs of the thread pool (they may use the
    same stores). `keep` is held as long as the thread: the objects living on it.
    """
    thread.setParent(None)
    keeper = _Keeper(thread, then, jobs, keep)
    _kept.add(keeper)
    if thread.isFinished():
        keeper.on_finished()


def stop_thread(thread: QThread, *, jobs: bool = True) -> bool:
    """Quit `thread`'s event loop and wait a bounded time for it (and the jobs) to stop."""
    thread.quit()
    stopped = thread.wait(QUIT_WAIT_MS)
    if jobs:
        stopped = QThreadPool.globalInstance().waitForDone(QUIT_WAIT_MS) and stopped
    return stopped


def join_all(timeout_s: float | None = None) -> bool:
    """Wait for every kept thread and run what waited for it; before the process exits.

    With `timeout_s`, wait no longer than that in all, for them and for the other threads of
    Python that would keep the process alive; False if some are still running then.
    """
    if _kept:
        log.info("Waiting for %d background task(s) to finish", len(_kept))
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    for keeper in list(_kept):
        if not keeper.finish(None if deadline is None else _ms_left(deadline)):
            return False
    if deadline is None:
        return True
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(_ms_left(deadline) / 1000)
            if thread.is_alive():
                log.warning("Background thread %r is still running", thread.name)
                return False
    return True


def _ms_left(deadline: float) -> int:
    return max(0, round((deadline - time.monotonic()) * 1000))
