"""Short notices from the core for the status bar, each said once per run of the app."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from assistant.memory.subscribers import Subscribers

log = logging.getLogger(__name__)


class Notices:
    """Thread-safe: `say()` from any thread; subscribers get each distinct text once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._said: list[str] = []
        self._subscribers: Subscribers[str] = Subscribers("notice")

    def say(self, text: str) -> None:
        """Tell the user `text`, unless it was said before."""
        with self._lock:
            if text in self._said:
                return
            self._said.append(text)
        log.info("Notice: %s", text)
        self._subscribers.notify(text)

    @property
    def said(self) -> list[str]:
        """Every notice so far, oldest first."""
        with self._lock:
            return list(self._said)

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(text)` for each new notice; returns an unsubscribe."""
        return self._subscribers.add(callback)
