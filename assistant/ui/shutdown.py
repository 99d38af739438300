"""Background threads outlive the window that started them: none is destroyed while it runs.

Qt aborts the process when a running `QThread` is destroyed, which is what happens when the
window that owns it is deleted. So a window hands its threads to `release_when_finished`: a
thread is kept (parentless) until it has finished, and what waits for it (closing the stores
it uses) then runs on the GUI thread, after every signal the thread emitted before it ended.
`join_all` waits for whatever is left before the process exits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, QThreadPool, QTimer, Slot

log = logging.getLogger(__name__)

QUIT_WAIT_MS = 3000  # how long closing the window waits before letting work finish on its own
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

    def finish(self) -> None:
        """Wait for the thread and the jobs, run what waited for them, let go of the thread."""
        if self not in _kept:
            return
        self._thread.wait()
        if self._jobs:
            QThreadPool.globalInstance().waitForDone()
        then, self._then, self._keep = self._then, None, None
        _kept.discard(self)
        # Dropped on the next turn of the event loop, not inside this object's own slot.
        _releasing.add(self)
        QTimer.singleShot(0, lambda: _releasing.discard(self))
        if then is not None:
            then()


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


def join_all() -> None:
    """Wait for every kept thread and run what waited for it; before the process exits."""
    if _kept:
        log.info("Waiting for %d background task(s) to finish", len(_kept))
    for keeper in list(_kept):
        keeper.finish()
