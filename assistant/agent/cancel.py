"""Cancelling a turn from another thread: a flag, plus callbacks that abort blocking I/O."""

from __future__ import annotations

import threading
from collections.abc import Callable


class OperationCancelledError(Exception):
    """The user cancelled the turn; raised out of the provider and the loop."""


class CancelToken:
    """Set once by the GUI thread; read by the agent between chunks and tools."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def cancel(self) -> None:
        """Cancel, and run the registered callbacks (e.g. closing an HTTP stream)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to `timeout` seconds, waking at once on cancel; returns `cancelled`."""
        return self._event.wait(timeout)

    def raise_if_cancelled(self) -> None:
        """Raise OperationCancelledError if cancelled."""
        if self._event.is_set():
            raise OperationCancelledError

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` on cancel (at once if already cancelled); returns an unregister."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def unregister() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return unregister
        callback()
        return lambda: None
