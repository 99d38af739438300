"""Asking the user whether a tool may run: the agent waits, the GUI thread answers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

from assistant.agent.cancel import CancelToken, OperationCancelledError

Choice = Literal["once", "always", "deny"]
CHOICES: tuple[Choice, ...] = ("once", "always", "deny")


class Confirmations:
    """Thread-safe answers by tool call id: `wait` blocks the turn until `answer` or cancel."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._answers: dict[str, Choice] = {}
        self._waiting: set[str] = set()

    def answer(self, call_id: str, choice: Choice) -> None:
        """The user's answer for a call being asked about (ignored if none is)."""
        with self._changed:
            if call_id in self._waiting:
                self._answers[call_id] = choice
                self._changed.notify_all()

    def is_waiting(self, call_id: str) -> bool:
        """Whether the turn waits for an answer about `call_id`."""
        with self._changed:
            return call_id in self._waiting

    def ask(self, call_id: str, announce: Callable[[], None], cancel: CancelToken) -> Choice:
        """Ask about `call_id` (`announce` tells the user, once an answer can be taken) and
        block until the user answers; OperationCancelledError on cancel."""

        def wake() -> None:
            with self._changed:
                self._changed.notify_all()

        with self._changed:
            self._waiting.add(call_id)
            self._answers.pop(call_id, None)
        unregister = cancel.on_cancel(wake)
        try:
            announce()
            with self._changed:
                while call_id not in self._answers:
                    if cancel.cancelled:
                        raise OperationCancelledError
                    self._changed.wait()
                return self._answers.pop(call_id)
        finally:
            unregister()
            with self._changed:
                self._waiting.discard(call_id)
