"""The user's turns go first: memory upkeep gives way to them at the model server.

A local server often answers one request at a time (llama.cpp with one slot): upkeep that asks
the model while the user sends a message would make the reply wait for it. So upkeep asks only
between turns, and a request it has under way when a turn starts is cancelled (closing the
connection frees the server's slot) and asked again once the turn is over.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.chat import ChatProvider, ChatResponse

# How often a waiting request checks whether its own work was cancelled meanwhile.
_POLL = 0.1


class TurnGate:
    """Tells background model requests when a turn runs; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._turns = 0
        self._requests: set[CancelToken] = set()
        self.yielded = 0  # background requests cancelled for a turn (for tests and logs)

    def turn_started(self) -> None:
        """A turn begins: background requests under way give way to it."""
        with self._lock:
            self._turns += 1
            requests, self._requests = self._requests, set()
            self.yielded += len(requests)
        for request in requests:
            request.cancel()

    def turn_ended(self) -> None:
        """A turn is over: background requests may go on."""
        with self._lock:
            self._turns = max(0, self._turns - 1)
            self._idle.notify_all()

    def enter(self, request: CancelToken, cancel: CancelToken | None) -> None:
        """Wait until no turn runs, then note `request` as under way (a turn cancels it);
        OperationCancelledError if `cancel` is set meanwhile."""
        with self._lock:
            while self._turns:
                if cancel is not None and cancel.cancelled:
                    raise OperationCancelledError
                self._idle.wait(_POLL)
            self._requests.add(request)

    def leave(self, request: CancelToken) -> None:
        """`request` is over."""
        with self._lock:
            self._requests.discard(request)


class GivingWayProvider:
    """A `ChatProvider` for background work that gives way to the user's turns (`TurnGate`)."""

    def __init__(self, provider: ChatProvider, gate: TurnGate) -> None:
        self._provider = provider
        self._gate = gate
        self.model = provider.model

    def context_window(self) -> int | None:
        """The context window of the provider it wraps."""
        return self._provider.context_window()

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
        json_mode: bool = False,
        max_tokens: int | None = None,
        on_wait: Callable[[float], None] | None = None,
    ) -> ChatResponse:
        """Ask between turns; a request a turn cut short is asked again after it (its text
        is passed on only from the try that finished, so nothing is said twice)."""
        while True:
            request = CancelToken()
            unlink = cancel.on_cancel(request.cancel) if cancel is not None else None
            try:
                self._gate.enter(request, cancel)
                heard: list[str] = []
                response = self._provider.chat(
                    messages,
                    tools=tools,
                    on_text=heard.append,
                    cancel=request,
                    json_mode=json_mode,
                    max_tokens=max_tokens,
                    on_wait=on_wait,
                )
            except OperationCancelledError:
                if cancel is not None and cancel.cancelled:
                    raise
                continue  # a turn began: ask again once it is over
            finally:
                self._gate.leave(request)
                if unlink is not None:
                    unlink()
            if on_text is not None and heard:
                on_text("".join(heard))
            return response
