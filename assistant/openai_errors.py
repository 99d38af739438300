"""Errors of the `openai` client as `ProviderError`s a user can act on; shared by chat and memory.

The messages name the server (never the API key) and say what to check. `is_transient` and
`retry_after` tell a caller which failures are worth another try and how long to wait first.
"""

from __future__ import annotations

import email.utils
import math
import time
from typing import Literal

import openai

from assistant.errors import ProviderError

Purpose = Literal["chat", "embeddings", "models"]

# What the client raises on a body that is not JSON or not shaped like an API response.
MALFORMED_ERRORS: tuple[type[Exception], ...] = (ValueError, TypeError, AttributeError)
# Everything a call of the client may raise: catch these and pass them to `provider_error`.
CLIENT_ERRORS: tuple[type[Exception], ...] = (openai.OpenAIError, *MALFORMED_ERRORS)

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
    """The server's own error message, without the client's "Error code: ..." prefix."""
    body = err.body
    if isinstance(body, dict):
        body = body.get("message") or body.get("error")
    return body if isinstance(body, str) and body else err.message


def is_transient(err: BaseException) -> bool:
    """Whether another try may succeed: connection problems, timeouts, 408, 429 and 5xx."""
    if isinstance(err, openai.APIConnectionError):
        return True
    if isinstance(err, openai.APIStatusError):
        return err.status_code in (408, 429) or err.status_code >= 500
    return False


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
    message = _message(err, client, model=model, purpose=purpose)
    if attempts > 1:
        message += f" Tried {attempts} times."
    key = client.api_key
    if len(key) >= 8:
        message = message.replace(key, "***")
    return ProviderError(message)


def _message(err: BaseException, client: openai.OpenAI, *, model: str, purpose: Purpose) -> str:
    url = server_url(client)
    noun = _MODEL_NOUN[purpose]
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
        return "The server is rate limiting requests; try again later."
    if isinstance(err, openai.InternalServerError):
        return f"The server at {url} had an error (HTTP {err.status_code}); try again later."
    if isinstance(err, openai.APIStatusError):
        return (
            f"The server refused the {_REQUEST_NOUN[purpose]} request "
            f"(HTTP {err.status_code}): {server_message(err)}"
        )
    if isinstance(err, (openai.APIResponseValidationError, *MALFORMED_ERRORS)):
        return f"The server at {url} sent a malformed response that could not be read."
    if isinstance(err, openai.APIError):
        # An error event inside a stream: no status code, only the server's message.
        return f"The server at {url} reported an error: {err.message}"
    return f"The {_REQUEST_NOUN[purpose]} request to {url} failed: {err}"


def _waited(err: openai.APIError) -> str:
    """ " (waited N s)" from the request's read timeout, or "" when unknown."""
    timeout = err.request.extensions.get("timeout")
    read = timeout.get("read") if isinstance(timeout, dict) else None
    return f" (waited {read:g} s)" if isinstance(read, int | float) else ""
