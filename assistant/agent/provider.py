"""The chat model: a `ChatProvider` protocol and its implementation on the `openai` client.

`OpenAIProvider` works with OpenAI and with compatible local servers (llama.cpp, Ollama, LM
Studio, vLLM): it streams text and tool calls; when a stream breaks or comes back empty before any
text it asks again without streaming (which also brings out the server's real error), and drops
an optional field the server names in its refusal (`tool_choice`, `response_format`, ...), and it
remembers both per server and model. It retries transient failures with backoff, and raises every
failure as a `ProviderError` a user can act on (`ContextOverflowError` for a prompt too long).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.capabilities import Capabilities, CapabilityMemory
from assistant.agent.chat import ChatResponse
from assistant.agent.chat_stream import TransportError, Waiter, pump, read_completion, read_stream
from assistant.agent.context_window import probe_context_window
from assistant.agent.tool_images import has_attached_images, has_images, without_images
from assistant.credentials import Credentials
from assistant.errors import ContextOverflowError, ImagesRefusedError, ProviderError
from assistant.memory import estimate_tokens
from assistant.openai_client import list_models, openai_client
from assistant.openai_errors import (
    MALFORMED_ERRORS,
    RetryPolicy,
    error_text,
    is_overflow,
    provider_error,
    server_url,
)
from assistant.redaction import add_secret
from assistant.settings import Settings

log = logging.getLogger(__name__)

# Retry waits are slept in steps this long, so a cancel cuts them short.
_SLEEP_STEP = 0.05
# Parameters the caller may not override through `extra_params`.
_RESERVED = frozenset({"model", "messages", "stream"})
# Optional request fields that are dropped when the server names them in an error, in order.
_OPTIONAL = (
    "tool_choice",
    "response_format",
    "stream_options",
    "parallel_tool_calls",
    "temperature",  # reasoning models refuse sampling values (o1: "not supported with this model")
    "top_p",
    "max_completion_tokens",
    "max_tokens",
    "tools",
)
# A refusal of tools as such (Ollama: "... does not support tools"), not of one tool's schema.
_NO_TOOLS = re.compile(
    r"(?:does not|doesn't|do not) support tools|tools? (?:are|is) not supported", re.I
)
# The statuses with which servers reject a field they do not know or support.
_REJECTING = frozenset({400, 415, 422, 500, 501})
# A refusal of image parts as such: OpenAI ("image_url is only supported by certain models"),
# llama.cpp ("image input is not supported - hint: ... provide the mmproj"), vLLM ("is not a
# multimodal model", "At most 0 image(s)"), Ollama ("does not support images"), LM Studio ("Model
# does not support images"), TGI ("unknown variant `image_url`"). Not one image's size or type.
_NO_IMAGES = re.compile(
    r"image_url is only supported|not a multimodal model|mmproj|at most 0 image"
    r"|(?:does not|doesn't|do not) support (?:image|vision)"
    r"|(?:image|vision)s?(?: input)? (?:is|are) not supported"
    r"|unknown variant `?image_url|unsupported content type '?image",
    re.I,
)
IMAGES_NOTICE = "This model does not accept images: images from tools are described to it."
STREAM_TOOLS_NOTICE = "This server cannot stream tool calls; replies arrive whole."
STREAM_NOTICE = "This server cannot stream replies; they arrive whole."
_OPTION_NOTICES = {
    "tools": "This model cannot use tools on this server; it answers without them.",
    "tool_choice": "This server does not take tool_choice; the model decides on tools itself.",
    "temperature": "This model does not take a temperature; it is asked without one.",
    "top_p": "This model does not take top-p; it is asked without it.",
}
# After this many seconds without a first byte, `on_wait` starts telling the elapsed time.
WAIT_NOTICE_AFTER = 3.0


class OpenAIProvider:
    """A `ChatProvider` on an injected `openai.OpenAI` client (built with `max_retries=0`).

    `extra_params` go into every request body as they are (e.g. `{"temperature": 0.2}` or
    Ollama's `{"num_ctx": 8192}`), except `model`, `messages` and `stream`; `sleep` waits between
    retries and is replaced in tests. `capabilities` remembers, per server and model, what the
    server turned out not to support (streamed tool calls, optional fields, the context window);
    share one between providers so that later requests go straight to what works.
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
        capabilities: CapabilityMemory | None = None,
        wait_notice_after: float = WAIT_NOTICE_AFTER,
    ) -> None:
        add_secret(client.api_key)
        self._client = client
        self.model = model
        self._stream = stream
        self._retry = RetryPolicy(max(0, max_retries), backoff, max_backoff)
        self._extra_params = dict(extra_params or {})
        self._sleep = sleep
        self._memory = capabilities or CapabilityMemory()
        self._key = (self.server_url, model)
        self._wait_notice_after = wait_notice_after

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        credentials: Credentials,
        capabilities: CapabilityMemory | None = None,
    ) -> OpenAIProvider:
        """A provider for the configured server, chat model, timeout and API key."""
        return cls(
            openai_client(settings, credentials), settings.chat_model, capabilities=capabilities
        )

    @property
    def server_url(self) -> str:
        """The base URL of the server, for messages."""
        return server_url(self._client)

    @property
    def capabilities(self) -> Capabilities:
        """What is known of this server and model so far."""
        return self._memory.get(self._key)

    def close(self) -> None:
        """Close the client's connections (of a provider that owns its client: `from_settings`)."""
        self._client.close()

    def list_models(self) -> list[str]:
        """The names of the models the server offers, sorted; checks URL and key."""
        return list_models(self._client, self.model)

    def context_window(self) -> int | None:
        """The model's context window in estimated tokens (see `estimate_tokens`), if known.

        Asked of the server's info endpoints once; an overflow error corrects it later.
        """
        caps = self.capabilities
        if caps.context_tokens is None and not caps.context_probed:
            found = probe_context_window(self._client, self.model)
            caps = self._memory.learn(self._key, context_tokens=found, context_probed=True)
            if found is not None:
                log.info("%s has a context window of %d tokens.", self.model, found)
        if caps.context_tokens is None:
            return None
        return int(caps.context_tokens / caps.token_ratio)

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
        """Answer `messages`, streaming text to `on_text`; see the module docstring.

        `on_wait(seconds)` is called about once a second while the server has sent nothing
        for longer than a few seconds. Raises `OperationCancelledError` when `cancel` is set, else
        `ProviderError` on any failure (`ContextOverflowError` when the prompt is too long).
        """
        caps = self.capabilities
        options: dict[str, Any] = {}
        if tools:
            options["tools"] = [dict(tool) for tool in tools]
            options["tool_choice"] = "auto"
        if json_mode:
            options["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            name = "max_completion_tokens" if caps.max_completion_tokens else "max_tokens"
            options[name] = max_tokens
        options.update((k, v) for k, v in self._extra_params.items() if k not in _RESERVED)
        for name in caps.dropped:
            options.pop(name, None)
        stream = self._stream and (caps.stream_tools if "tools" in options else caps.stream)
        if stream and "stream_options" not in caps.dropped:
            # The token counts come in a last chunk (a server that refuses it: dropped).
            options["stream_options"] = {"include_usage": True}
        sent = [dict(message) for message in messages]
        if not caps.images:
            if has_attached_images(sent):
                raise ImagesRefusedError(self.model)
            sent = without_images(sent)
        request = _Request(self.model, sent, options, stream, on_wait)
        try:
            response = self._ask(request, on_text, cancel)
        except ContextOverflowError as err:
            self._learn_overflow(err, request)
            raise
        if request.fell_back:
            self._learn_whole(request, response)
        return response

    def _ask(
        self, request: _Request, on_text: Callable[[str], None] | None, cancel: CancelToken | None
    ) -> ChatResponse:
        """Try `request`, falling back and retrying as the failures suggest."""
        attempt = 0
        while True:
            shown = _Shown(on_text)
            try:
                response = self._attempt(request, shown, cancel)
            except TransportError as failure:
                err = failure.error
            else:
                if request.stream and "tools" in request.options and response.is_empty:
                    log.info("An empty streamed answer to a request with tools; asking whole.")
                    request.stream, request.fell_back = False, True
                    continue
                return response
            if cancel is not None and cancel.cancelled:
                raise OperationCancelledError from err
            if not shown.any and self._drop_images(err, request):
                continue
            if not shown.any and self._drop_rejected_option(err, request):
                continue
            if request.stream and not shown.any and (shown.opened or _broken_stream(err)):
                # The stream hid what went wrong; a whole answer has the server's error, or works.
                # (A connection cut mid-stream, as llama-cpp-python does on errors, teaches
                # nothing about streaming: it may have been anything.)
                log.info("The stream failed (%s); asking again without streaming.", err)
                request.stream = False
                request.fell_back = _broken_stream(err)
                continue
            if request.stream and not shown.any and _cut(err):
                # Asked whole on the next try: llama-cpp-python cuts the connection when a
                # streamed request fails, and a whole answer brings out its error.
                request.stream = False
            if shown.any and isinstance(err, openai.APITimeoutError):
                raise ProviderError(
                    f"The server at {self.server_url} stopped sending in the middle of the "
                    f"answer{_waited_for(err)}."
                ) from err
            if shown.any and isinstance(err, openai.APIConnectionError):
                raise ProviderError(
                    f"The connection to {self.server_url} dropped in the middle of the answer."
                ) from err
            if shown.any or not self._retry.allows(err, attempt, request.options):
                raise provider_error(
                    err, self._client, model=self.model, purpose="chat", attempts=attempt + 1
                ) from err
            delay = self._retry.delay(attempt, err)
            log.warning(
                "Chat request to %s failed (%s); retrying in %.2f s.",
                self.server_url,
                type(err).__name__,
                delay,
            )
            self._wait(delay, cancel)
            attempt += 1

    def _drop_rejected_option(self, err: Exception, request: _Request) -> bool:
        """If `err` rejects an optional field of `request`, change the request and remember."""
        if not isinstance(err, openai.APIStatusError) or err.status_code not in _REJECTING:
            return False
        if is_overflow(err):
            return False
        text = error_text(err)
        options = request.options
        if "max_tokens" in options and "max_completion_tokens" in text:
            options["max_completion_tokens"] = options.pop("max_tokens")
            self._memory.learn(self._key, max_completion_tokens=True)
            return True
        for name in _OPTIONAL:
            named = _NO_TOOLS.search(text) if name == "tools" else name in text
            if name in options and named:
                del options[name]
                if name == "tools":
                    options.pop("tool_choice", None)
                log.info("The server rejected %s; asking again without it.", name)
                self._memory.learn(
                    self._key,
                    _OPTION_NOTICES.get(name),
                    dropped=self.capabilities.dropped | {name},
                )
                return True
        return False

    def _drop_images(self, err: Exception, request: _Request) -> bool:
        """If `err` refuses the images `request` holds, describe them instead and remember;
        ImagesRefusedError (remembered too) if some are the user's attached images."""
        if not isinstance(err, openai.APIStatusError) or err.status_code not in _REJECTING:
            return False
        if is_overflow(err) or not has_images(request.messages):
            return False
        if not _NO_IMAGES.search(error_text(err)):
            return False
        if has_attached_images(request.messages):  # the user's: refused, never described
            log.info("The server refused the attached images: %s", error_text(err))
            self._memory.learn(self._key, images=False)
            raise ImagesRefusedError(self.model) from err
        log.info("The server refused images; asking again with them described.")
        request.messages = without_images(request.messages)
        self._memory.learn(self._key, IMAGES_NOTICE, images=False)
        return True

    def _learn_whole(self, request: _Request, response: ChatResponse) -> None:
        """A whole answer worked where the stream failed: stream no more (for such requests)."""
        if response.is_empty:
            return
        if "tools" in request.options:
            self._memory.learn(self._key, STREAM_TOOLS_NOTICE, stream_tools=False)
        else:
            self._memory.learn(self._key, STREAM_NOTICE, stream=False, stream_tools=False)

    def _learn_overflow(self, err: ContextOverflowError, request: _Request) -> None:
        """Remember the context window and how our token estimate compares to the server's."""
        changes: dict[str, Any] = {}
        if err.context_tokens is not None:
            changes["context_tokens"] = err.context_tokens
        if err.prompt_tokens is not None:
            estimate = estimate_tokens(json.dumps([request.messages, request.options.get("tools")]))
            changes["token_ratio"] = min(4.0, max(0.5, err.prompt_tokens / max(1, estimate)))
        if changes:
            log.info("Learned from an overflow: %s", changes)
            self._memory.learn(self._key, **changes)

    def _attempt(
        self, request: _Request, shown: _Shown, cancel: CancelToken | None
    ) -> ChatResponse:
        if request.stream:
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
                shown.opened = True  # the server answered 200: a failure now is in the stream
                yield from stream

        with closing(pump(produce, cancel, self._waiter(request))) as chunks:
            response = read_stream(chunks, shown)
        if response.finish_reason is None and not response.is_empty:
            # The stream ended without saying why: the server died or was cut off mid-reply.
            # Not retried (text was shown): the loop keeps what came, marked unfinished.
            raise ProviderError(
                f"The server at {self.server_url} stopped sending before the answer was "
                "finished (the stream ended without a finish reason)."
            )
        return response

    def _whole(self, request: _Request, shown: _Shown, cancel: CancelToken | None) -> ChatResponse:
        # Only a streamed request may ask for the usage chunk (OpenAI refuses it otherwise).
        options = {k: v for k, v in request.options.items() if k != "stream_options"}

        def produce() -> Generator[ChatCompletion, None, None]:
            yield self._client.chat.completions.create(
                model=request.model,
                messages=request.messages,
                stream=False,
                extra_body=options,
            )

        with closing(pump(produce, cancel, self._waiter(request))) as completions:
            (completion,) = completions
        response = read_completion(completion)
        if response is None:
            raise ProviderError(f"The server at {self.server_url} sent an answer without choices.")
        if response.content:
            shown(response.content)
        return response

    def _wait(self, seconds: float, cancel: CancelToken | None) -> None:
        """Sleep `seconds` in short steps; OperationCancelledError as soon as `cancel` is set."""
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

    def _waiter(self, request: _Request) -> Waiter | None:
        if request.on_wait is None:
            return None
        return Waiter(request.on_wait, self._wait_notice_after)


@dataclass
class _Request:
    """One chat request; `options` go into the JSON body as they are."""

    model: str
    messages: Any  # a list of message dicts; the client's TypedDicts are too narrow for Mapping
    options: dict[str, Any]
    stream: bool
    on_wait: Callable[[float], None] | None = None
    fell_back: bool = False  # asked whole after the stream failed


class _Shown:
    """Passes text to `on_text` and remembers whether any was shown (and the stream opened)."""

    def __init__(self, on_text: Callable[[str], None] | None) -> None:
        self._on_text = on_text
        self.any = False
        self.opened = False

    def __call__(self, text: str) -> None:
        self.any = True
        if self._on_text is not None:
            self._on_text(text)


def _broken_stream(err: Exception) -> bool:
    """Whether a stream failed in a way that hides the server's reason (or cannot stream)."""
    if isinstance(err, openai.APIStatusError):
        return "stream" in error_text(err).lower()
    if isinstance(err, openai.APIConnectionError):
        return False
    # A malformed or empty body, or an error event inside the stream.
    return isinstance(err, (openai.APIError, *MALFORMED_ERRORS))


def _cut(err: Exception) -> bool:
    """Whether the connection was lost (not refused, not timed out) before any answer."""
    return (
        isinstance(err, openai.APIConnectionError)
        and not isinstance(err, openai.APITimeoutError)
        and "refused" not in str(err.__cause__ or err).lower()
    )


def _waited_for(err: openai.APITimeoutError) -> str:
    """ " (nothing for N s)" from the request's read timeout, or ""."""
    timeout = err.request.extensions.get("timeout")
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return f" (nothing for {read:g} s)" if isinstance(read, int | float) else ""
