"""The API key never shows: not in an error the window shows (whatever the server echoes, wherever
in its text), not in any log record of any logger at any level, tracebacks included."""

from __future__ import annotations

import json
import logging
import random
import string

import httpx2
import openai
import pytest

from assistant.agent.provider import OpenAIProvider
from assistant.errors import ProviderError
from assistant.openai_errors import MESSAGE_CHARS, Purpose, provider_error
from assistant.redaction import redact
from tests.fake_openai import FakeOpenAI, Reply

KEY = "sk-" + "".join(random.Random(23).choices(string.ascii_letters + string.digits, k=40))
# Any run of this many characters of the key counts as showing it.
PIECE = 6


def shows_key(text: str) -> bool:
    """Whether any `PIECE` consecutive characters of the key are in `text`."""
    return any(KEY[i : i + PIECE] in text for i in range(len(KEY) - PIECE + 1))


def with_key_at(offset: int, length: int = MESSAGE_CHARS + 60) -> str:
    """A server's error text of about `length` characters with the key at `offset`."""
    filler = "".join(random.Random(offset).choices("abcdefgh ", k=length))
    return filler[:offset] + KEY + filler[offset:]


def offsets() -> range:
    """Every offset, from the start to past the window's cut."""
    return range(MESSAGE_CHARS + 40)


def status_error(client: openai.OpenAI, status: int, text: str) -> openai.APIStatusError:
    """The error the client makes of a server's answer with `status` and `text` (no network)."""
    body = {"error": {"message": text, "type": "invalid_request_error", "code": None}}
    request = httpx2.Request("POST", f"{client.base_url}chat/completions")
    response = httpx2.Response(status, json=body, request=request)
    return client._make_status_error_from_response(response)


@pytest.fixture
def fake() -> FakeOpenAI:
    with FakeOpenAI(required_api_key=KEY) as server:
        yield server


def ask(provider: OpenAIProvider) -> str:
    with pytest.raises(ProviderError) as caught:
        provider.chat([{"role": "user", "content": "hi"}])
    return str(caught.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 429, 500, 503])
@pytest.mark.parametrize("purpose", ["chat", "embeddings", "models"])
def test_an_error_message_never_shows_the_key_at_any_offset(
    fake: FakeOpenAI, status: int, purpose: Purpose
) -> None:
    client = fake.client()
    for offset in offsets():
        err = status_error(client, status, with_key_at(offset))
        message = str(provider_error(err, client, model="m", purpose=purpose, attempts=2))
        assert not shows_key(message), (offset, message)


@pytest.mark.parametrize("status", [400, 429, 500])
def test_a_server_error_never_shows_the_key(fake: FakeOpenAI, status: int) -> None:
    provider = OpenAIProvider(fake.client(), "fake-chat", max_retries=0, stream=False)
    cut = MESSAGE_CHARS - len("The server refused the chat request (HTTP 400): ")
    for offset in (0, cut - len(KEY) // 2, cut - 3, cut, MESSAGE_CHARS - len(KEY) // 2):
        fake.enqueue(Reply.error(status, with_key_at(offset)))
        message = ask(provider)
        assert not shows_key(message), (offset, message)


def test_an_error_inside_a_stream_never_shows_the_key(fake: FakeOpenAI) -> None:
    provider = OpenAIProvider(fake.client(), "fake-chat", max_retries=0)
    for offset in range(0, MESSAGE_CHARS + 40, 29):
        event = {"error": {"message": with_key_at(offset), "type": "server_error"}}
        body = f"data: {json.dumps(event)}\n\n"
        fake.enqueue(
            Reply.raw(body, content_type="text/event-stream"),
            Reply.raw(body, content_type="text/event-stream"),
        )
        assert not shows_key(ask(provider)), offset


def test_no_log_record_of_a_failing_request_holds_the_key(
    fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    provider = OpenAIProvider(fake.client(), "fake-chat", max_retries=1, sleep=lambda _: None)
    event = {"error": {"message": with_key_at(30), "type": "server_error"}}
    stream_error = Reply.raw(f"data: {json.dumps(event)}\n\n", content_type="text/event-stream")
    with caplog.at_level(logging.DEBUG):
        for reply in (stream_error, Reply.error(500, with_key_at(10)), Reply.error(400, KEY)):
            fake.enqueue(reply, Reply.error(503, with_key_at(5)), Reply.error(400, KEY))
            ask(provider)
    assert caplog.records  # the client and the provider did log at these levels
    assert not shows_key(caplog.text)
    assert not any(shows_key(record.getMessage()) for record in caplog.records)


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR])
@pytest.mark.parametrize("name", ["openai._base_client", "httpx2", "httpcore2", "assistant.x"])
def test_every_log_call_is_redacted_at_every_offset(
    fake: FakeOpenAI, caplog: pytest.LogCaptureFixture, level: int, name: str
) -> None:
    OpenAIProvider(fake.client(), "fake-chat")  # a client with the key exists
    logger = logging.getLogger(name)
    with caplog.at_level(logging.DEBUG):
        for offset in range(0, 80, 3):
            text = with_key_at(offset, 80)
            logger.log(level, text)
            logger.log(level, "said: %s", text)
            logger.log(level, "said: %r and %d", text, offset)
            logger.log(level, "%(said)s", {"said": text})
            try:
                raise RuntimeError(text)
            except RuntimeError:
                logger.log(level, "failed", exc_info=True)
            logger.log(level, "here", stack_info=True, extra={"x": 1})
    assert len(caplog.records) == 6 * len(range(0, 80, 3))
    assert not shows_key(caplog.text)
    assert not any(shows_key(record.getMessage()) for record in caplog.records)


def test_the_key_read_from_the_environment_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from assistant.credentials import Credentials

    other = "sk-from-the-environment-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", other)
    assert Credentials().api_key() == other
    assert redact(f"a{other}b") == "a***b"
    assert redact("none of it") == "none of it"


def test_short_placeholder_keys_are_not_redacted(fake: FakeOpenAI) -> None:
    OpenAIProvider(fake.client(api_key="none"), "m")
    assert redact("none of it") == "none of it"
