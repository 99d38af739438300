"""OpenAIProvider against the fake OpenAI server, through the real `openai` client."""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import openai
import pytest

from assistant import openai_errors
from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.chat import ChatProvider, ChatResponse, ToolCallRequest
from assistant.agent.provider import OpenAIProvider
from assistant.credentials import Credentials
from assistant.errors import ContextOverflowError, ProviderError
from assistant.openai_client import NO_API_KEY
from assistant.openai_errors import retry_after
from assistant.settings import Settings
from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI, Reply, ToolCall

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]

MakeProvider = Callable[..., OpenAIProvider]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_provider(fake_openai: FakeOpenAI, sleeps: list[float]) -> MakeProvider:
    """A provider on the fake server whose retry waits are recorded, not slept."""

    def make(*, timeout: float = 5.0, model: str = "fake-chat", **kwargs: Any) -> OpenAIProvider:
        client = fake_openai.client(max_retries=0, timeout=timeout)
        return OpenAIProvider(client, model, sleep=sleeps.append, **kwargs)

    return make


@pytest.fixture
def provider(make_provider: MakeProvider) -> OpenAIProvider:
    return make_provider()


def chat_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests_to("/chat/completions")]


def sse(*events: object) -> str:
    """A raw event stream ending in [DONE]."""
    lines = [f"data: {json.dumps(event)}\n\n" for event in events]
    return "".join(lines) + "data: [DONE]\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def test_is_a_chat_provider(provider: OpenAIProvider) -> None:
    typed: ChatProvider = provider  # mypy checks the protocol
    assert typed.model == "fake-chat"


# --- answers -------------------------------------------------------------------------------------


def test_streamed_text_arrives_in_pieces(fake_openai: FakeOpenAI, provider: OpenAIProvider) -> None:
    fake_openai.enqueue(Reply.text("The capital of France is Paris."))
    pieces: list[str] = []
    response = provider.chat(MESSAGES, on_text=pieces.append)
    assert response == ChatResponse("The capital of France is Paris.", (), "stop")
    assert len(pieces) > 3
    assert "".join(pieces) == response.content
    assert chat_bodies(fake_openai)[0]["stream"] is True


def test_streamed_tool_calls_are_assembled(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    weather = json.dumps({"city": "Paris", "unit": "celsius", "days": [1, 2, 3]})
    fake_openai.enqueue(
        Reply.tool_calls(
            ToolCall("get_weather", weather, id="call_a"),
            ToolCall("remember", '{"text": "likes Paris"}', id="call_b"),
            content="Checking.",
        )
    )
    pieces: list[str] = []
    response = provider.chat(MESSAGES, tools=TOOLS, on_text=pieces.append)
    assert response.content == "Checking."
    assert "".join(pieces) == "Checking."
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == (
        ToolCallRequest("call_a", "get_weather", weather),
        ToolCallRequest("call_b", "remember", '{"text": "likes Paris"}'),
    )


def test_tool_calls_are_in_index_order(fake_openai: FakeOpenAI, provider: OpenAIProvider) -> None:
    def call(index: int, **fields: Any) -> dict[str, Any]:
        return chunk({"tool_calls": [{"index": index, **fields}]})

    body = sse(
        chunk({"role": "assistant"}),
        call(1, id="second", type="function", function={"name": "b", "arguments": ""}),
        call(0, id="first", type="function", function={"name": "a", "arguments": '{"x"'}),
        call(1, function={"arguments": "{}"}),
        call(0, function={"arguments": ": 1}"}),
        chunk({}, "tool_calls"),
    )
    fake_openai.enqueue(Reply.raw(body, content_type="text/event-stream"))
    response = provider.chat(MESSAGES, tools=TOOLS)
    assert response.content == ""
    assert response.tool_calls == (
        ToolCallRequest("first", "a", '{"x": 1}'),
        ToolCallRequest("second", "b", "{}"),
    )


def test_calls_that_share_an_index_stay_apart(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    first = {"index": 0, "id": "one", "function": {"name": "a", "arguments": "{}"}}
    second = {"index": 0, "id": "two", "function": {"name": "b", "arguments": "[]"}}
    body = sse(chunk({"tool_calls": [first]}), chunk({"tool_calls": [second]}, "tool_calls"))
    fake_openai.enqueue(Reply.raw(body, content_type="text/event-stream"))
    calls = provider.chat(MESSAGES, tools=TOOLS).tool_calls
    assert calls == (ToolCallRequest("one", "a", "{}"), ToolCallRequest("two", "b", "[]"))


def test_invalid_tool_arguments_pass_through(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake_openai.enqueue(Reply.tool_calls(ToolCall("remember", '{"text": "unterminated')))
    (call,) = provider.chat(MESSAGES, tools=TOOLS).tool_calls
    assert call.name == "remember"
    assert call.arguments == '{"text": "unterminated'
    assert call.id.startswith("call_")


def test_non_streaming(fake_openai: FakeOpenAI, make_provider: MakeProvider) -> None:
    provider = make_provider(stream=False)
    fake_openai.enqueue(
        Reply.text("Paris."),
        Reply.tool_calls(ToolCall("get_weather", '{"city": "Paris"}', id="c1")),
    )
    pieces: list[str] = []
    assert provider.chat(MESSAGES, on_text=pieces.append) == ChatResponse("Paris.", (), "stop")
    assert pieces == ["Paris."]
    response = provider.chat(MESSAGES, tools=TOOLS, on_text=pieces.append)
    assert response == ChatResponse(
        "", (ToolCallRequest("c1", "get_weather", '{"city": "Paris"}'),), "tool_calls"
    )
    assert pieces == ["Paris."]
    assert [body["stream"] for body in chat_bodies(fake_openai)] == [False, False]


@pytest.mark.parametrize("stream", [True, False])
def test_no_choices_is_an_error(
    fake_openai: FakeOpenAI, make_provider: MakeProvider, stream: bool
) -> None:
    if stream:  # the stream is re-asked whole, to get the server's reason
        fake_openai.enqueue(
            Reply.raw(sse({**chunk({}), "choices": []}), content_type="text/event-stream")
        )
    fake_openai.enqueue(Reply.raw('{"id": "x", "object": "chat.completion", "choices": []}'))
    with pytest.raises(ProviderError, match="without choices"):
        make_provider(stream=stream).chat(MESSAGES)
    assert [body["stream"] for body in chat_bodies(fake_openai)] == [True, False][not stream :]


# --- the request ---------------------------------------------------------------------------------


def test_only_portable_parameters_are_sent(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    provider.chat(MESSAGES)
    provider.chat(MESSAGES, tools=TOOLS)
    provider.chat(MESSAGES, tools=[])
    plain, with_tools, empty_tools = chat_bodies(fake_openai)
    streamed = {"model", "messages", "stream", "stream_options"}  # the usage chunk
    assert set(plain) == streamed
    assert plain["stream_options"] == {"include_usage": True}
    assert plain["messages"] == MESSAGES
    assert plain["model"] == "fake-chat"
    assert set(with_tools) == {*streamed, "tools", "tool_choice"}
    assert with_tools["tools"] == TOOLS
    assert with_tools["tool_choice"] == "auto"
    assert set(empty_tools) == streamed


def test_extra_params_are_sent(fake_openai: FakeOpenAI, make_provider: MakeProvider) -> None:
    extra = {"temperature": 0.2, "num_ctx": 8192, "model": "ignored", "stream": False}
    make_provider(extra_params=extra).chat(MESSAGES)
    (body,) = chat_bodies(fake_openai)
    assert body["temperature"] == 0.2
    assert body["num_ctx"] == 8192
    assert body["model"] == "fake-chat"
    assert body["stream"] is True


def test_json_mode_asks_for_a_json_object(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake_openai.enqueue(Reply.text('{"a": 1}'))
    assert provider.chat(MESSAGES, json_mode=True).content == '{"a": 1}'
    assert chat_bodies(fake_openai)[0]["response_format"] == {"type": "json_object"}


def test_json_mode_falls_back_when_the_server_rejects_it(
    fake_openai: FakeOpenAI, provider: OpenAIProvider, sleeps: list[float]
) -> None:
    fake_openai.enqueue(
        Reply.error(400, "Invalid parameter: 'response_format' is not supported."),
        Reply.text('{"a": 1}'),
    )
    assert provider.chat(MESSAGES, json_mode=True).content == '{"a": 1}'
    first, second = chat_bodies(fake_openai)
    assert "response_format" in first
    assert "response_format" not in second
    assert sleeps == []


def test_other_400s_are_not_retried(fake_openai: FakeOpenAI, provider: OpenAIProvider) -> None:
    fake_openai.enqueue(Reply.error(400, "messages must not be empty"))
    with pytest.raises(ProviderError) as caught:
        provider.chat(MESSAGES, json_mode=True)
    assert str(caught.value) == (
        "The server refused the chat request (HTTP 400): messages must not be empty"
    )
    assert len(fake_openai.requests) == 1


# --- retries -------------------------------------------------------------------------------------


def test_429_honours_retry_after(
    fake_openai: FakeOpenAI, provider: OpenAIProvider, sleeps: list[float]
) -> None:
    fake_openai.enqueue(Reply.error(429, retry_after=2), Reply.text("Paris."))
    assert provider.chat(MESSAGES).content == "Paris."
    assert sleeps == [2.0]
    assert len(fake_openai.requests) == 2


def test_retry_after_is_capped(
    fake_openai: FakeOpenAI, make_provider: MakeProvider, sleeps: list[float]
) -> None:
    fake_openai.enqueue(Reply.error(429, retry_after=3600), Reply.text("Paris."))
    assert make_provider(max_backoff=7.0).chat(MESSAGES).content == "Paris."
    assert sleeps == [7.0]


def test_retry_after_as_an_http_date(monkeypatch: pytest.MonkeyPatch) -> None:
    now = 1_800_000_000.0  # the server's date is read against this clock, not the machine's
    monkeypatch.setattr(openai_errors, "time", SimpleNamespace(time=lambda: now))
    when = email.utils.formatdate(now + 30, usegmt=True)
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(429, headers={"Retry-After": when}, request=request)
    err = openai.RateLimitError("slow down", response=response, body=None)
    seconds = retry_after(err)
    assert seconds == 30


def test_500_then_success(
    fake_openai: FakeOpenAI, provider: OpenAIProvider, sleeps: list[float]
) -> None:
    fake_openai.enqueue(Reply.error(500), Reply.text("Paris."))
    assert provider.chat(MESSAGES).content == "Paris."
    assert len(sleeps) == 1
    assert 0.5 <= sleeps[0] <= 0.625  # backoff 0.5 s plus up to 25 % jitter


def test_retries_give_up(
    fake_openai: FakeOpenAI, provider: OpenAIProvider, sleeps: list[float]
) -> None:
    fake_openai.enqueue(*[Reply.error(503)] * 4)
    with pytest.raises(ProviderError) as caught:
        provider.chat(MESSAGES)
    assert str(caught.value) == (
        f"The server at {fake_openai.base_url} had an error (HTTP 503); try again later: "
        "The engine is currently overloaded. Tried 4 times."
    )
    assert len(fake_openai.requests) == 4
    assert len(sleeps) == 3
    assert sleeps[0] < sleeps[1] < sleeps[2]


def test_rate_limit_gives_up(fake_openai: FakeOpenAI, make_provider: MakeProvider) -> None:
    fake_openai.enqueue(*[Reply.error(429)] * 2)
    with pytest.raises(ProviderError, match=r"rate limiting.*Tried 2 times"):
        make_provider(max_retries=1).chat(MESSAGES)


def test_a_drop_before_any_text_is_retried(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake_openai.enqueue(Reply.text("never shown", drop_after=1), Reply.text("Paris."))
    pieces: list[str] = []
    assert provider.chat(MESSAGES, on_text=pieces.append).content == "Paris."
    assert "".join(pieces) == "Paris."
    # Asked whole, as a stream cut before any text may hide the server's error; a cut teaches
    # nothing about streaming, though.
    assert [body["stream"] for body in chat_bodies(fake_openai)] == [True, False]
    assert provider.capabilities.stream


def test_a_drop_after_text_is_not_retried(
    fake_openai: FakeOpenAI, provider: OpenAIProvider, sleeps: list[float]
) -> None:
    fake_openai.enqueue(Reply.text("The capital of France is Paris.", drop_after=3))
    pieces: list[str] = []
    with pytest.raises(ProviderError, match="dropped in the middle of the answer"):
        provider.chat(MESSAGES, on_text=pieces.append)
    assert pieces == ["The", " capital"]
    assert len(fake_openai.requests) == 1
    assert sleeps == []


# --- errors --------------------------------------------------------------------------------------


def test_wrong_key_is_not_retried() -> None:
    with FakeOpenAI(required_api_key="sk-right") as server:
        client = server.client(api_key="sk-wrong-but-secret")
        provider = OpenAIProvider(client, "m", sleep=lambda _: None)
        with pytest.raises(ProviderError) as caught:
            provider.chat(MESSAGES)
        assert len(server.requests) == 1
    assert str(caught.value) == f"The server at {server.base_url} rejected the API key."


def test_unknown_model() -> None:
    with FakeOpenAI(models=["llama3"]) as server:
        provider = OpenAIProvider(server.client(), "gpt-9")
        with pytest.raises(ProviderError) as caught:
            provider.chat(MESSAGES)
        assert len(server.requests) == 1
    assert str(caught.value) == "The model 'gpt-9' was not found on the server."


def test_server_down(sleeps: list[float]) -> None:
    with FakeOpenAI() as server:
        pass
    provider = OpenAIProvider(server.client(), "m", max_retries=2, sleep=sleeps.append)
    with pytest.raises(ProviderError) as caught:
        provider.chat(MESSAGES)
    assert str(caught.value) == (
        f"Could not reach {server.base_url}. Is the server running? Tried 3 times."
    )
    assert len(sleeps) == 2


def test_timeout(fake_openai: FakeOpenAI, make_provider: MakeProvider) -> None:
    fake_openai.enqueue(Reply.text("late", delay=2.0))
    with pytest.raises(ProviderError) as caught:
        make_provider(timeout=0.2, max_retries=0).chat(MESSAGES)
    assert str(caught.value) == (
        f"The server at {fake_openai.base_url} did not answer in time (waited 0.2 s)."
    )


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    "reply",
    [
        Reply.raw("this is not json"),
        Reply.raw("<html>gateway</html>", content_type="text/html"),
        Reply.raw('{"choices": "nope"}'),
        Reply.raw('{"choices": [{"index": 0, "delta": "x", "message": "x"}]}'),
    ],
)
def test_unreadable_bodies(
    fake_openai: FakeOpenAI, make_provider: MakeProvider, reply: Reply, stream: bool
) -> None:
    fake_openai.enqueue(reply, reply)  # a broken stream is re-asked whole
    with pytest.raises(ProviderError, match="malformed response that could not be read"):
        make_provider(stream=stream).chat(MESSAGES)
    assert [body["stream"] for body in chat_bodies(fake_openai)] == [True, False][not stream :]


def test_malformed_stream_line(
    fake_openai: FakeOpenAI, provider: OpenAIProvider, sleeps: list[float]
) -> None:
    fake_openai.enqueue(Reply.text("The capital of France is Paris.", malformed_after=2))
    with pytest.raises(ProviderError, match="malformed response that could not be read"):
        provider.chat(MESSAGES)
    assert len(fake_openai.requests) == 1
    assert sleeps == []


def test_error_event_in_a_stream_is_asked_again_whole(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    body = sse(chunk({"role": "assistant"}), {"error": {"message": "model crashed"}})
    fake_openai.enqueue(
        Reply.raw(body, content_type="text/event-stream"),
        Reply.error(400, "Requested tokens (9196) exceed context window of 2048"),
    )
    with pytest.raises(ContextOverflowError) as caught:
        provider.chat(MESSAGES)
    assert str(caught.value) == (
        "The request is too long for the model's context window: "
        "Requested tokens (9196) exceed context window of 2048"
    )
    assert (caught.value.context_tokens, caught.value.prompt_tokens) == (2048, 9196)
    assert [body["stream"] for body in chat_bodies(fake_openai)] == [True, False]


def test_an_error_event_after_text_is_reported(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    body = sse(chunk({"content": "Par"}), {"error": {"message": "model crashed"}})
    fake_openai.enqueue(Reply.raw(body, content_type="text/event-stream"))
    with pytest.raises(ProviderError, match="reported an error: model crashed"):
        provider.chat(MESSAGES)


# --- cancelling ----------------------------------------------------------------------------------


# A server that stalls for longer than any test may run (the fake server lets go at teardown): a
# call that ends in a cancel was interrupted (one that waited would end in the client timeout).
STALL_S = 3600.0


def cancel_after(seconds: float) -> CancelToken:
    """A token cancelled by a timer thread after `seconds`."""
    token = CancelToken()
    timer = threading.Timer(seconds, token.cancel)
    timer.daemon = True
    timer.start()
    return token


@pytest.mark.parametrize(
    ("reply", "stream"),
    [
        (Reply.text("one two three four", chunk_delay=STALL_S), True),
        (Reply.text("late", delay=STALL_S), True),
        (Reply.text("late", delay=STALL_S), False),
    ],
    ids=["stalled stream", "no headers", "no response"],
)
def test_cancel_stops_promptly(
    fake_openai: FakeOpenAI, make_provider: MakeProvider, reply: Reply, stream: bool
) -> None:
    fake_openai.enqueue(reply)
    token = cancel_after(0.1)
    with pytest.raises(OperationCancelledError):  # interrupted: the stall outlasts the test
        make_provider(stream=stream).chat(MESSAGES, cancel=token)
    time.sleep(0.3)  # a retry would have arrived by now
    assert len(fake_openai.requests) <= 1  # not retried (the first may not be logged yet)


def test_cancelled_before_the_call(fake_openai: FakeOpenAI, provider: OpenAIProvider) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(OperationCancelledError):
        provider.chat(MESSAGES, cancel=token)
    assert fake_openai.requests == []


def test_cancel_during_a_retry_wait(fake_openai: FakeOpenAI) -> None:
    token = CancelToken()
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(seconds)
        token.cancel()

    provider = OpenAIProvider(fake_openai.client(), "m", sleep=sleep)
    fake_openai.enqueue(Reply.error(429, retry_after=10), Reply.text("never"))
    with pytest.raises(OperationCancelledError):
        provider.chat(MESSAGES, cancel=token)
    assert len(fake_openai.requests) == 1
    assert waited == [0.05]  # the wait is slept in short steps


def test_a_stream_with_a_token_still_works(
    fake_openai: FakeOpenAI, provider: OpenAIProvider
) -> None:
    fake_openai.enqueue(Reply.error(500), Reply.text("The capital is Paris."))
    pieces: list[str] = []
    token = CancelToken()
    response = provider.chat(MESSAGES, on_text=pieces.append, cancel=token)
    assert response.content == "The capital is Paris."
    assert "".join(pieces) == response.content
    token.cancel()  # after the call: nothing is registered any more


def test_errors_of_on_text_propagate(fake_openai: FakeOpenAI, provider: OpenAIProvider) -> None:
    def on_text(text: str) -> None:
        raise RuntimeError("the UI is gone")

    with pytest.raises(RuntimeError, match="the UI is gone"):
        provider.chat(MESSAGES, on_text=on_text, cancel=CancelToken())
    assert len(fake_openai.requests) == 1


# --- settings and models -------------------------------------------------------------------------


def test_from_settings_uses_the_environment_url_and_the_keyring_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    credentials = Credentials()
    credentials.set_api_key("sk-from-the-keyring")
    with FakeOpenAI(required_api_key="sk-from-the-keyring") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        settings = Settings(provider="ollama", chat_model="llama3", request_timeout=7.0)
        provider = OpenAIProvider.from_settings(settings, credentials)
        try:
            server.enqueue(Reply.text("Paris."))
            assert provider.chat(MESSAGES).content == "Paris."
            assert provider.model == "llama3"
            assert provider.server_url == server.base_url
        finally:
            provider.close()
        (request,) = server.requests
    assert request.headers["authorization"] == "Bearer sk-from-the-keyring"
    assert request.body["model"] == "llama3"


def test_from_settings_without_a_key(fake_openai: FakeOpenAI) -> None:
    settings = Settings(provider="custom", base_url=fake_openai.base_url)
    provider = OpenAIProvider.from_settings(settings, Credentials())
    try:
        provider.chat(MESSAGES)
    finally:
        provider.close()
    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {NO_API_KEY}"


def test_from_settings_without_a_url() -> None:
    with pytest.raises(ProviderError, match="No server URL"):
        OpenAIProvider.from_settings(Settings(provider="custom"), Credentials())


def test_the_workspace_keeps_one_client_per_settings_and_closes_them(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    workspace = Workspace.open(data_dir)
    settings, credentials = workspace.settings, workspace.credentials
    settings.provider, settings.base_url = "custom", fake_openai.base_url
    first = workspace.clients.get(settings, credentials)
    assert workspace.clients.get(settings, credentials) is first  # every turn: the same one
    fake_openai.enqueue(Reply.text("Paris."))
    assert workspace.provider().chat(MESSAGES).content == "Paris."
    settings.request_timeout += 1
    second = workspace.clients.get(settings, credentials)
    assert second is not first and not first.is_closed()  # a running turn may still use it
    workspace.close()
    assert first.is_closed() and second.is_closed()
    with pytest.raises(ProviderError, match="closed"):
        workspace.provider()


def test_list_models() -> None:
    with FakeOpenAI(models=["qwen3", "llama3"]) as server:
        assert OpenAIProvider(server.client(), "m").list_models() == ["llama3", "qwen3"]


def test_list_models_maps_errors() -> None:
    with FakeOpenAI(required_api_key="sk-right") as server:
        provider = OpenAIProvider(server.client(api_key="sk-wrong"), "m")
        with pytest.raises(ProviderError, match="rejected the API key"):
            provider.list_models()
    provider = OpenAIProvider(server.client(), "m")
    with pytest.raises(ProviderError, match=f"Could not reach {server.base_url}"):
        provider.list_models()


def test_list_models_without_a_models_endpoint(fake_openai: FakeOpenAI) -> None:
    client = openai.OpenAI(
        base_url=fake_openai.base_url.removesuffix("/v1"),
        api_key="k",
        max_retries=0,
        http_client=openai.DefaultHttpxClient(verify=False),
    )
    with pytest.raises(ProviderError, match="has no models endpoint"):
        OpenAIProvider(client, "m").list_models()
    client.close()
