"""The chat model: a `ChatProvider` protocol and its implementation on the `openai` client.

`OpenAIProvider` works with OpenAI and with compatible local servers (Ollama, LM Studio, vLLM):
it sends only the parameters they all understand, streams text and tool calls, retries transient
failures with backoff, and raises every failure as a `ProviderError` a user can act on.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, TypeVar

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from assistant.agent.cancel import CancelledError, CancelToken
from assistant.agent.chat import ChatResponse, ToolCallRequest
from assistant.credentials import Credentials
from assistant.errors import ProviderError
from assistant.openai_errors import (
    CLIENT_ERRORS,
    is_transient,
    provider_error,
    retry_after,
    server_url,
)
from assistant.settings import Settings

log = logging.getLogger(__name__)

# Local servers ignore the key, but the client insists on one.
NO_API_KEY = "not-needed"
# Retry waits are slept in steps this long, so a cancel cuts them short.
_SLEEP_STEP = 0.05
# Parameters the caller may not override through `extra_params`.
_RESERVED = frozenset({"model", "messages", "stream"})

_T = TypeVar("_T")


def openai_client(settings: Settings, credentials: Credentials) -> openai.OpenAI:
    """An `openai` client for the configured server, key and timeout (we retry ourselves)."""
    base_url = settings.effective_base_url()
    if not base_url:
        raise ProviderError("No server URL is set. Enter the server's URL in the settings.")
    return openai.OpenAI(
        api_key=credentials.api_key() or NO_API_KEY,
        base_url=base_url,
        timeout=settings.request_timeout,
        max_retries=0,
    )


class OpenAIProvider:
    """A `ChatProvider` on an injected `openai.OpenAI` client (built with `max_retries=0`).

    `extra_params` go into every request body as they are (e.g. `{"temperature": 0.2}` or
    Ollama's `{"num_ctx": 8192}`), except `model`, `messages` and `stream`; `sleep` waits between
    retries and is replaced in tests.
    """

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        *,
        stream: bool = True,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        extra_params: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self.model = model
        self._stream = stream
        self._max_retries = max(0, max_retries)
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._extra_params = dict(extra_params or {})
        self._sleep = sleep

    @classmethod
    def from_settings(cls, settings: Settings, credentials: Credentials) -> OpenAIProvider:
        """A provider for the configured server, chat model, timeout and API key."""
        return cls(openai_client(settings, credentials), settings.chat_model)

    @property
    def server_url(self) -> str:
        """The base URL of the server, for messages."""
        return server_url(self._client)

    def close(self) -> None:
        """Close the client's connections."""
        self._client.close()

    def list_models(self) -> list[str]:
        """The names of the models the server offers, sorted; checks URL and key."""
        try:
            page = self._client.models.list()
            names = [getattr(model, "id", None) for model in page.data]
        except CLIENT_ERRORS as err:
            raise provider_error(err, self._client, model=self.model, purpose="models") from err
        return sorted(name for name in names if isinstance(name, str))

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
        json_mode: bool = False,
    ) -> ChatResponse:
        """Answer `messages`, streaming text to `on_text`; see the module docstring.

        Raises `CancelledError` when `cancel` is set, else `ProviderError` on any failure.
        """
        options: dict[str, Any] = {}
        if tools:
            options["tools"] = [dict(tool) for tool in tools]
            options["tool_choice"] = "auto"
        if json_mode:
            options["response_format"] = {"type": "json_object"}
        options.update((k, v) for k, v in self._extra_params.items() if k not in _RESERVED)
        request = _Request(self.model, [dict(message) for message in messages], options)
        attempt = 0
        while True:
            shown = _Shown(on_text)
            try:
                return self._attempt(request, shown, cancel)
            except _TransportError as failure:
                err = failure.error
            if cancel is not None and cancel.cancelled:
                raise CancelledError from err
            if _rejects_response_format(err, request):
                log.info("The server rejected response_format; asking again without it.")
                del request.options["response_format"]
                continue
            if shown.any and isinstance(err, openai.APIConnectionError):
                raise ProviderError(
                    f"The connection to {self.server_url} dropped in the middle of the answer."
                ) from err
            if shown.any or attempt >= self._max_retries or not is_transient(err):
                raise provider_error(
                    err, self._client, model=self.model, purpose="chat", attempts=attempt + 1
                ) from err
            delay = self._delay(attempt, err)
            log.warning(
                "Chat request to %s failed (%s); retrying in %.2f s.",
                self.server_url,
                type(err).__name__,
                delay,
            )
            self._wait(delay, cancel)
            attempt += 1

    def _attempt(
        self, request: _Request, shown: _Shown, cancel: CancelToken | None
    ) -> ChatResponse:
        if self._stream:
            return self._streamed(request, shown, cancel)
        return self._whole(request, shown, cancel)

    def _streamed(
        self, request: _Request, shown: _Shown, cancel: CancelToken | None
    ) -> ChatResponse:
        def produce() -> Generator[ChatCompletionChunk, None, None]:
            with self._client.chat.completions.create(
                model=request.model,
                messages=request.messages,
                stream=True,
                extra_body=request.options,
            ) as stream:
                yield from stream

        text: list[str] = []
        calls = _ToolCallAssembler()
        finish_reason: str | None = None
        answered = received = False
        with closing(_pump(produce, cancel)) as chunks:
            for chunk in chunks:
                delta = _read_chunk(chunk)
                received = True
                answered = answered or delta.answered
                finish_reason = delta.finish_reason or finish_reason
                for index, call_id, name, arguments in delta.tool_calls:
                    calls.add(index, call_id, name, arguments)
                if delta.text:
                    text.append(delta.text)
                    shown(delta.text)
        if not received:  # not an event stream at all, e.g. an error page
            raise provider_error(
                ValueError("no events"), self._client, model=self.model, purpose="chat"
            )
        if not answered:
            raise ProviderError(f"The server at {self.server_url} sent an answer without choices.")
        return ChatResponse("".join(text), calls.result(), finish_reason)

    def _whole(self, request: _Request, shown: _Shown, cancel: CancelToken | None) -> ChatResponse:
        def produce() -> Generator[ChatCompletion, None, None]:
            yield self._client.chat.completions.create(
                model=request.model,
                messages=request.messages,
                stream=False,
                extra_body=request.options,
            )

        with closing(_pump(produce, cancel)) as completions:
            (completion,) = completions
        response = _read_completion(completion)
        if response is None:
            raise ProviderError(f"The server at {self.server_url} sent an answer without choices.")
        if response.content:
            shown(response.content)
        return response

    def _delay(self, attempt: int, err: BaseException) -> float:
        """Seconds to wait before retry number `attempt + 1`: Retry-After, else backoff."""
        asked = retry_after(err)
        if asked is not None:
            return min(asked, self._max_backoff)
        delay = self._backoff * 2.0**attempt * random.uniform(1.0, 1.25)
        return min(delay, self._max_backoff)

    def _wait(self, seconds: float, cancel: CancelToken | None) -> None:
        """Sleep `seconds` in short steps, raising `CancelledError` as soon as `cancel` is set."""
        if cancel is None:
            if seconds > 0:
                self._sleep(seconds)
            return
        remaining = seconds
        while remaining > 0:
            cancel.raise_if_cancelled()
            step = min(_SLEEP_STEP, remaining)
            self._sleep(step)
            remaining -= step
        cancel.raise_if_cancelled()


@dataclass
class _Request:
    """One chat request; `options` go into the JSON body as they are."""

    model: str
    messages: Any  # a list of message dicts; the client's TypedDicts are too narrow for Mapping
    options: dict[str, Any]


class _Shown:
    """Passes text to `on_text` and remembers whether any was shown."""

    def __init__(self, on_text: Callable[[str], None] | None) -> None:
        self._on_text = on_text
        self.any = False

    def __call__(self, text: str) -> None:
        self.any = True
        if self._on_text is not None:
            self._on_text(text)


class _TransportError(Exception):
    """The client or the server failed while fetching; `error` is mapped, maybe retried."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _malformed(reason: str) -> _TransportError:
    return _TransportError(ValueError(reason))


def _rejects_response_format(err: Exception, request: _Request) -> bool:
    """Whether `err` is a 400 that blames the `response_format` we sent (json_mode)."""
    return (
        "response_format" in request.options
        and isinstance(err, openai.BadRequestError)
        and "response_format" in f"{err.message} {err.body}"
    )


_ITEM, _END, _ERROR, _CANCEL = range(4)


def _pump(
    produce: Callable[[], Generator[_T, None, None]], cancel: CancelToken | None
) -> Generator[_T, None, None]:
    """The items of `produce()`; its exceptions are raised wrapped in `_TransportError`.

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
                    raise _TransportError(exc) from exc
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
    try:
        threading.Thread(target=work, name="chat-request", daemon=True).start()
        while True:
            kind, value = inbox.get()
            if kind == _CANCEL or cancel.cancelled:
                raise CancelledError
            if kind == _END:
                return
            if kind == _ERROR:
                raise _TransportError(value) from value
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
    """The choice-0 parts of a stream chunk; anything malformed raises `_TransportError`."""
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
        raise _malformed(f"malformed stream chunk: {exc}") from exc


def _read_completion(completion: object) -> ChatResponse | None:
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
            _str(message.content), calls.result(), _str(choice.finish_reason) or None
        )
    except (AttributeError, TypeError) as exc:
        raise _malformed(f"malformed completion: {exc}") from exc


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
