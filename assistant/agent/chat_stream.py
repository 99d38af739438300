"""Reading what the chat server sends: stream chunks assembled into a reply (text and tool
calls, which arrive in pieces), a whole completion, and the pump that reads either on a thread.

Anything malformed raises `TransportError`, as the client's own failures do: the provider
decides whether to retry, ask again whole, or give up (`provider.py`). openai-agents keeps its
`chatcmpl_stream_handler` apart from its model in the same way.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, TypeVar

from openai.types.chat import ChatCompletion, ChatCompletionChunk

from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.chat import ChatResponse, TokenUsage, ToolCallRequest

_WAIT_TICK = 1.0
_T = TypeVar("_T")


@dataclass
class Waiter:
    """Calls `on_wait(elapsed)` about once a second after `after` seconds without data."""

    on_wait: Callable[[float], None]
    after: float


class TransportError(Exception):
    """The client or the server failed while fetching; `error` is mapped, maybe retried."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def malformed(reason: str) -> TransportError:
    """A failure for a body that is not what the API promises."""
    return TransportError(ValueError(reason))


def read_stream(chunks: Iterable[object], on_text: Callable[[str], None]) -> ChatResponse:
    """The reply in a stream of chunks; its text goes to `on_text` as it arrives."""
    text: list[str] = []
    calls = _ToolCallAssembler()
    finish_reason: str | None = None
    usage: TokenUsage | None = None
    answered = received = False
    for chunk in chunks:
        delta = _read_chunk(chunk)
        usage = _usage(chunk) or usage
        received = True
        answered = answered or delta.answered
        finish_reason = delta.finish_reason or finish_reason
        for index, call_id, name, arguments in delta.tool_calls:
            calls.add(index, call_id, name, arguments)
        if delta.text:
            text.append(delta.text)
            on_text(delta.text)
    if not received:  # not an event stream at all, e.g. an empty body or an error page
        raise malformed("no events")
    if not answered:
        raise malformed("an answer without choices")
    return ChatResponse("".join(text), calls.result(), finish_reason, usage)


def _usage(body: object) -> TokenUsage | None:
    """The token counts a chunk or a completion carries, if any (servers may leave them out,
    or send them malformed: they are only shown)."""
    usage = getattr(body, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if isinstance(prompt, int) and isinstance(completion, int) and min(prompt, completion) >= 0:
        return TokenUsage(prompt, completion)
    return None


_ITEM, _END, _ERROR, _CANCEL = range(4)


def pump(
    produce: Callable[[], Generator[_T, None, None]],
    cancel: CancelToken | None,
    waiter: Waiter | None = None,
) -> Generator[_T, None, None]:
    """The items of `produce()`; its exceptions are raised wrapped in `TransportError`.

    `waiter` hears how long the first item is taking (with a cancel token only).

    With a cancel token the blocking reads run in a daemon thread, so a cancel returns at once
    even while the server is silent: closing an httpx stream from another thread does not wake
    a blocked read. The abandoned thread closes the stream when its read returns or times out.
    """
    if cancel is None:
        with closing(produce()) as items:
            while True:
                try:
                    item = next(items)
                except StopIteration:
                    return
                except Exception as exc:
                    raise TransportError(exc) from exc
                yield item

    cancel.raise_if_cancelled()
    inbox: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
    abandoned = threading.Event()

    def work() -> None:
        try:
            with closing(produce()) as items:
                for item in items:
                    if abandoned.is_set():
                        return
                    inbox.put((_ITEM, item))
        except Exception as exc:
            inbox.put((_ERROR, exc))
        else:
            inbox.put((_END, None))

    unregister = cancel.on_cancel(lambda: inbox.put((_CANCEL, None)))
    started = time.monotonic()
    notice_at = started + (waiter.after if waiter is not None else 0.0)
    try:
        threading.Thread(target=work, name="chat-request", daemon=True).start()
        while True:
            if waiter is None:
                kind, value = inbox.get()
            else:
                # A late first look (a busy machine) reports at once, not a tick later.
                try:
                    kind, value = inbox.get(timeout=max(0.0, notice_at - time.monotonic()))
                except queue.Empty:
                    now = time.monotonic()
                    waiter.on_wait(now - started)
                    notice_at = now + _WAIT_TICK
                    continue
                waiter = None  # data: the wait is over
            if kind == _CANCEL or cancel.cancelled:
                raise OperationCancelledError
            if kind == _END:
                return
            if kind == _ERROR:
                raise TransportError(value) from value
            yield value
    finally:
        abandoned.set()
        unregister()


@dataclass(frozen=True)
class _Delta:
    """What one stream chunk adds; tool calls are (index, id, name, arguments) pieces."""

    answered: bool = False
    text: str = ""
    tool_calls: list[tuple[int | None, str, str, str]] = field(default_factory=list)
    finish_reason: str | None = None


def _read_chunk(chunk: object) -> _Delta:
    """The choice-0 parts of a stream chunk; anything malformed raises `TransportError`."""
    try:
        if not isinstance(chunk, ChatCompletionChunk):
            raise TypeError("a stream event is not a chat completion chunk")
        choices = _list(chunk.choices)
        choice = next((c for c in choices if c.index in (0, None)), None)
        if choice is None:  # e.g. the usage chunk at the end
            return _Delta()
        delta = choice.delta
        pieces: list[tuple[int | None, str, str, str]] = [
            (
                call.index,
                _str(call.id),
                _str(call.function and call.function.name),
                _str(call.function and call.function.arguments),
            )
            for call in _list(delta.tool_calls)
        ]
        return _Delta(True, _str(delta.content), pieces, _str(choice.finish_reason) or None)
    except (AttributeError, TypeError) as exc:
        raise malformed(f"malformed stream chunk: {exc}") from exc


def read_completion(completion: object) -> ChatResponse | None:
    """The answer in a whole completion, None without choices; malformed raises."""
    try:
        if not isinstance(completion, ChatCompletion):
            raise TypeError("the body is not a chat completion")
        choices = _list(completion.choices)
        if not choices:
            return None
        choice = choices[0]
        message = choice.message
        calls = _ToolCallAssembler()
        for index, call in enumerate(_list(message.tool_calls)):
            function = getattr(call, "function", None)  # custom tool calls have none
            if function is not None:
                calls.add(index, _str(call.id), _str(function.name), _str(function.arguments))
        return ChatResponse(
            _str(message.content),
            calls.result(),
            _str(choice.finish_reason) or None,
            _usage(completion),
        )
    except (AttributeError, TypeError) as exc:
        raise malformed(f"malformed completion: {exc}") from exc


def _list(value: Sequence[_T] | None) -> Sequence[_T]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _str(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ToolCallAssembler:
    """Joins streamed tool-call pieces by `index`; the result is in index order.

    Only the first piece of a call carries its id and name. A piece with a new id at an index
    already in use starts another call (some servers number every call 0).
    """

    def __init__(self) -> None:
        self._calls: list[tuple[int, int, _PartialCall]] = []
        self._current: dict[int, _PartialCall] = {}
        self._last = 0

    def add(self, index: int | None, call_id: str, name: str, arguments: str) -> None:
        """Add one piece of a tool call."""
        if index is None:
            index = max(self._current, default=-1) + 1 if call_id else self._last
        call = self._current.get(index)
        if call is None or (call_id and call.id and call_id != call.id):
            call = _PartialCall()
            self._current[index] = call
            self._calls.append((index, len(self._calls), call))
        self._last = index
        call.id = call.id or call_id
        call.name = call.name or name
        call.arguments.append(arguments)

    def result(self) -> tuple[ToolCallRequest, ...]:
        """The assembled calls; a missing id becomes `call_<n>`."""
        ordered = sorted(self._calls, key=lambda item: item[:2])
        return tuple(
            ToolCallRequest(call.id or f"call_{n}", call.name, "".join(call.arguments))
            for n, (_, _, call) in enumerate(ordered)
        )
