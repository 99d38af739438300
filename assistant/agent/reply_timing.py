"""Timing a model call: when its first token came and how long it wrote, for the reply's stats."""

from __future__ import annotations

import time
from collections.abc import Callable

from assistant.agent.chat import ChatResponse
from assistant.memory import ReplyStats, estimate_tokens


class Stopwatch:
    """Started when a request goes out; `text()` is told each piece of the answer as it comes."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started = clock()
        self._first: float | None = None

    def text(self) -> None:
        """A piece of the answer arrived."""
        if self._first is None:
            self._first = self._clock()

    def stats(self, model: str, response: ChatResponse, prompt_estimate: int) -> ReplyStats:
        """The answer's stats: the server's token counts, else estimated (and marked so)."""
        ended = self._clock()
        first = self._first if self._first is not None else ended  # a whole, unstreamed answer
        usage = response.usage
        if usage is not None:
            prompt, written, estimated = usage.prompt_tokens, usage.completion_tokens, False
        else:
            arguments = "".join(call.name + call.arguments for call in response.tool_calls)
            written = estimate_tokens(response.content + arguments)
            prompt, estimated = prompt_estimate, True
        return ReplyStats(
            model=model,
            prompt_tokens=prompt,
            reply_tokens=written,
            first_token_seconds=first - self._started,
            writing_seconds=ended - first,
            estimated=estimated,
        )
