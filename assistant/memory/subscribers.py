"""Change callbacks of a store: added from any thread, called outside the store's lock."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class Subscribers(Generic[T]):
    """The callbacks to call with each change; a failing callback is logged, not raised."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[T], None]] = []

    def add(self, callback: Callable[[T], None]) -> Callable[[], None]:
        """Start calling `callback`; returns the function that stops it."""
        with self._lock:
            self._callbacks.append(callback)

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    def notify(self, change: T) -> None:
        """Call every callback with `change` (on this thread)."""
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(change)
            except Exception:
                log.exception("A %s subscriber failed", self._what)
