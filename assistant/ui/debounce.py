"""One helper for calls that wait for a burst of events to settle (typing, a turn's saves)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class Debounced(QObject):
    """Calls `fn` once, `delay_ms` after the last `trigger()`; `throttled` after the first.

    Debounced (the default), a burst of triggers delays the call until the burst is over
    (search as you type). Throttled, the first trigger of a burst schedules the call and the
    rest join it, so that a steady stream is handled every `delay_ms` (streamed text).
    """

    def __init__(
        self,
        delay_ms: int,
        fn: Callable[[], object],
        parent: QObject | None = None,
        *,
        throttled: bool = False,
    ) -> None:
        super().__init__(parent)
        self._fn = fn
        self._throttled = throttled
        self._timer = QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(fn)

    def trigger(self, *_args: object) -> None:
        """Note an event (any signal's arguments are ignored)."""
        if not (self._throttled and self._timer.isActive()):
            self._timer.start()

    @property
    def pending(self) -> bool:
        """Whether a call is scheduled."""
        return self._timer.isActive()

    def cancel(self) -> None:
        """Drop the scheduled call."""
        self._timer.stop()

    def flush(self) -> None:
        """Make the scheduled call now, if there is one."""
        if self._timer.isActive():
            self._timer.stop()
            self._fn()
