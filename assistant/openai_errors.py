"""Errors of the `openai` client as `ProviderError`s a user can act on; shared by chat and memory.

The messages name the server (never the API key) and say what to check. `RetryPolicy` (on
`is_transient` and `retry_after`) tells a caller which failures are worth another try and how
long to wait first.
"""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import openai

from assistant.errors import ContextOverflowError, ProviderError
from assistant.redaction import add_secret, redact

Purpose = Literal["chat", "embeddings", "models"]

# What the client raises on a body that is not JSON or not shaped like an API response.
MALFORMED_ERRORS: tuple[type[Exception], ...] = (ValueError, TypeError, AttributeError)
# Everything a call of the client may raise: catch these and pass them to `provider_error`.
CLIENT_ERRORS: tuple[type[Exception], ...] = (openai.OpenAIError, *MALFORMED_ERRORS)

# Server texts are cut to this many characters in messages.
MESSAGE_CHARS = 300
# Words of an error that no retry can fix: the request or the server's set-up is wrong.
_CAUSE = re.compile(
    r"not supported|unsupported|not implemented|not enabled|does not support|"
    r"must be|is required|invalid|unknown (?:parameter|field|argument)|"
    r"embedding=true|pooling|no such|not allowed|not permitted"
)
_OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
# llama.cpp (Python and C++), OpenAI and vLLM, LM Studio.
_OVERFLOW_SIGNS = (
    re.compile(r"exceeds? (?:the )?(?:available )?context"),
    re.compile(r"maximum context length"),
    re.compile(r"context (?:window|length|size) of (?:only )?\d+"),
    re.compile(r"context_length_exceeded"),
)
_CONTEXT_NUMBER = (
    re.compile(r"context (?:window|length|size) of (?:only )?(\d+)", re.I),
    re.compile(r"maximum context length is (\d+)", re.I),
)
_PROMPT_NUMBER = (
    re.compile(r"requested tokens \((\d+)\)", re.I),
    re.compile(r"resulted in (\d+) tokens", re.I),
    re.compile(r"\((\d+) in the messages", re.I),
    re.compile(r"request has (\d+) input tokens", re.I),
    re.compile(r"keep the first (\d+) tokens", re.I),
)

_MODEL_NOUN: dict[Purpose, str] = {
    "chat": "model",
    "embeddings": "embedding model",
    "models": "model",
}
_REQUEST_NOUN: dict[Purpose, str] = {
    "chat": "chat",
    "embeddings": "embedding",
    "models": "model list",
}
_ENDPOINT: dict[Purpose, str] = {
    "chat": "chat completions",
    "embeddings": "embeddings",
    "models": "models",
}


def server_url(client: openai.OpenAI) -> str:
    """The base URL `client` talks to, for messages."""
    return str(client.base_url).rstrip("/")


def server_message(err: openai.APIStatusError) -> str:
    """The server's own error text, redacted and shortened, without the client's "Error code:
    ..." prefix."""
    return shorten(_body_text(err.body) or err.message)


def shorten(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` on one line, redacted, then cut to about `limit` characters."""
    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _body_text(body: object) -> str:
    """The message in an error body: OpenAI's, FastAPI's `detail`, or a plain string."""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        for name in ("message", "error", "detail", "msg"):
            text = _body_text(body.get(name))
            if text:
                return text
    if isinstance(body, list) and body:
        return "; ".join(filter(None, (_body_text(entry) for entry in body[:3])))
    return ""


def error_text(err: BaseException) -> str:
    """Everything the server said about `err` (message and body), for matching words."""
    if isinstance(err, openai.APIError):
        return f"{err.message} {_body_text(err.body)}"
    return str(err)


def names_a_cause(text: str, parameters: Iterable[str] = ()) -> bool:
    """Whether an error text blames something a retry cannot change (a parameter, a feature)."""
    lowered = text.lower()
    return _CAUSE.search(lowered) is not None or any(p.lower() in lowered for p in parameters)


def is_transient(err: BaseException, parameters: Iterable[str] = ()) -> bool:
    """Whether another try may succeed: connection problems, timeouts, 408, 429, 502-504, and a
    500 whose text names no parameter (of `parameters`, the ones sent) or missing feature."""
    if isinstance(err, openai.APIConnectionError):
        return True
    if isinstance(err, openai.APIStatusError):
        if err.status_code in (408, 429, 502, 503, 504):
            return True
        if err.status_code == 500:
            return not names_a_cause(error_text(err), parameters) and not is_overflow(err)
    return False


def is_overflow(err: BaseException) -> bool:
    """Whether `err` says the prompt does not fit the model's context window."""
    if not isinstance(err, openai.APIError):
        return False
    text = error_text(err).lower()
    return err.code in _OVERFLOW_CODES or any(p.search(text) for p in _OVERFLOW_SIGNS)


def overflow_numbers(err: openai.APIError) -> tuple[int | None, int | None]:
    """(context window, prompt tokens) as the server's overflow error states them, if it does."""
    body = err.body if isinstance(err.body, dict) else {}
    context = _number(body.get("n_ctx"))
    prompt = _number(body.get("n_prompt_tokens"))
    text = error_text(err)
    for pattern in _CONTEXT_NUMBER:
        found = pattern.search(text)
        if context is None and found:
            context = int(found.group(1))
    for pattern in _PROMPT_NUMBER:
        found = pattern.search(text)
        if prompt is None and found:
            prompt = int(found.group(1))
    return context, prompt


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def retry_after(err: BaseException) -> float | None:
    """The wait in seconds the server asked for (`retry-after-ms`, `Retry-After`), if any."""
    if not isinstance(err, openai.APIStatusError):
        return None
    headers = err.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            if name == "retry-after-ms":
                continue
            try:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError, IndexError):
                continue
        if math.isfinite(seconds):
            return max(0.0, float(seconds))
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """When a failed request is tried again, and after how long: the same for chat and
    embeddings.

    Only what may pass (`is_transient`) is retried, at most `max_retries` times (a timeout
    once: a silent server rarely answers the next time), after the server's Retry-After or an
    exponential backoff with jitter, and never after more than `max_backoff` seconds.
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 20.0

    def allows(self, err: BaseException, attempt: int, parameters: Iterable[str] = ()) -> bool:
        """Whether the request may be sent again after try number `attempt + 1` failed."""
        retries = self.max_retries
        if isinstance(err, openai.APITimeoutError):
            retries = min(retries, 1)
        return attempt < retries and is_transient(err, parameters)

    def delay(self, attempt: int, err: BaseException) -> float:
        """Seconds to wait before retry number `attempt + 1`: Retry-After, else backoff."""
        asked = retry_after(err)
        if asked is not None:
            return min(asked, self.max_backoff)
        delay = self.backoff * 2.0**attempt * random.uniform(1.0, 1.25)
        return min(delay, self.max_backoff)


def provider_error(
    err: BaseException,
    client: openai.OpenAI,
    *,
    model: str,
    purpose: Purpose,
    attempts: int = 1,
) -> ProviderError:
    """A `ProviderError` for `err`, raised by `client` while using `model` for `purpose`.

    `attempts` is how often the request was tried; more than one is mentioned in the message.
    """
    add_secret(client.api_key)  # before any text of the error is shortened
    message = _message(err, client, model=model, purpose=purpose)
    if attempts > 1:
        message += f" Tried {attempts} times."
    message = redact(message)
    if isinstance(err, openai.APIError) and is_overflow(err):
        context, prompt = overflow_numbers(err)
        return ContextOverflowError(message, context_tokens=context, prompt_tokens=prompt)
    return ProviderError(message, status=_status(err))


def _status(err: BaseException) -> str:
    """What went wrong in a few words: the connection, or what the server answered."""
    if isinstance(err, openai.APIConnectionError):
        return "Connection problem"
    if isinstance(err, openai.AuthenticationError):
        return "API key rejected"
    if isinstance(err, openai.RateLimitError):
        return "Rate limited"
    if isinstance(err, openai.APIStatusError):
        what = "Server error" if err.status_code >= 500 else "Request refused"
        return f"{what} (HTTP {err.status_code})"
    if isinstance(err, (openai.APIError, *MALFORMED_ERRORS)):
        return "Server error"
    return "Connection problem"


def _message(err: BaseException, client: openai.OpenAI, *, model: str, purpose: Purpose) -> str:
    url = server_url(client)
    noun = _MODEL_NOUN[purpose]
    if isinstance(err, openai.APIError) and is_overflow(err):
        return f"The request is too long for the {noun}'s context window: {_said(err)}"
    if isinstance(err, openai.APITimeoutError):
        return f"The server at {url} did not answer in time{_waited(err)}."
    if isinstance(err, openai.APIConnectionError):
        return f"Could not reach {url}. Is the server running?"
    if isinstance(err, openai.AuthenticationError):
        return f"The server at {url} rejected the API key."
    if isinstance(err, openai.PermissionDeniedError):
        return f"The API key may not use the {noun} '{model}'."
    if isinstance(err, openai.NotFoundError):
        detail = server_message(err)
        if purpose != "models" and (err.code == "model_not_found" or "model" in detail.lower()):
            return f"The {noun} '{model}' was not found on the server."
        return f"{url} has no {_ENDPOINT[purpose]} endpoint (HTTP 404). Check the URL."
    if isinstance(err, openai.RateLimitError):
        return f"The server is rate limiting requests; try again later. ({server_message(err)})"
    if isinstance(err, openai.InternalServerError):
        advice = "" if names_a_cause(error_text(err)) else "; try again later"
        return (
            f"The server at {url} had an error (HTTP {err.status_code}){advice}: "
            f"{server_message(err)}"
        )
    if isinstance(err, openai.APIStatusError):
        return (
            f"The server refused the {_REQUEST_NOUN[purpose]} request "
            f"(HTTP {err.status_code}): {server_message(err)}"
        )
    if isinstance(err, (openai.APIResponseValidationError, *MALFORMED_ERRORS)):
        return f"The server at {url} sent a malformed response that could not be read."
    if isinstance(err, openai.APIError):
        # An error event inside a stream: no status code, only the server's message.
        return f"The server at {url} reported an error: {shorten(err.message)}"
    return f"The {_REQUEST_NOUN[purpose]} request to {url} failed: {err}"


def _said(err: openai.APIError) -> str:
    """The server's text of `err`, shortened."""
    if isinstance(err, openai.APIStatusError):
        return server_message(err)
    return shorten(err.message)


def _waited(err: openai.APIError) -> str:
    """ " (waited N s)" from the request's read timeout, or "" when unknown."""
    timeout = err.request.extensions.get("timeout")
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return f" (waited {read:g} s)" if isinstance(read, int | float) else ""
