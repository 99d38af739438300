"""The fake OpenAI server, driven by the real `openai` client."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import openai
import pytest

from tests.fake_openai import FakeOpenAI, Reply, ToolCall, demo_reply

MESSAGES: list[Any] = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture
def client(fake_openai: FakeOpenAI) -> openai.OpenAI:
    return fake_openai.client(max_retries=0, timeout=2.0)


def stream_text(client: openai.OpenAI, **kwargs: Any) -> str:
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True, **kwargs)
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_non_streaming_text(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.enqueue(Reply.text("Paris."))
    response = client.chat.completions.create(model="gpt-test", messages=MESSAGES)
    choice = response.choices[0]
    assert choice.message.content == "Paris."
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert response.model == "gpt-test"
    assert response.usage is not None
    assert response.usage.total_tokens > 0


def test_default_reply_echoes_the_last_user_message(client: openai.OpenAI) -> None:
    response = client.chat.completions.create(model="m", messages=MESSAGES)
    assert response.choices[0].message.content == "Echo: What is the capital of France?"


def test_streamed_text_is_split_and_reassembled(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake_openai.enqueue(Reply.text("The capital of France is Paris."))
    stream = client.chat.completions.create(
        model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert len(pieces) > 3
    assert "".join(pieces) == "The capital of France is Paris."
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop"
    assert chunks[-1].usage is not None  # the usage chunk comes last, without choices


def test_streamed_tool_calls_are_reassembled(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    weather = json.dumps({"city": "Paris", "unit": "celsius", "days": [1, 2, 3]})
    fake_openai.enqueue(
        Reply.tool_calls(
            ToolCall("get_weather", weather, id="call_a"),
            ToolCall("remember", '{"text": "likes Paris"}'),
            content="Checking.",
        )
    )
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    calls: dict[int, dict[str, str]] = {}
    text = ""
    finish_reason = None
    for chunk in stream:
        delta = chunk.choices[0].delta
        text += delta.content or ""
        finish_reason = chunk.choices[0].finish_reason or finish_reason
        for tool_delta in delta.tool_calls or []:
            call = calls.setdefault(tool_delta.index, {"id": "", "name": "", "arguments": ""})
            if tool_delta.id:
                assert not call["id"], "only the first delta of a call carries its id"
                assert tool_delta.type == "function"
                assert tool_delta.function is not None
                assert tool_delta.function.arguments == ""
                call["id"] = tool_delta.id
                call["name"] = tool_delta.function.name or ""
            else:
                assert tool_delta.function is not None
                assert tool_delta.function.name is None
                call["arguments"] += tool_delta.function.arguments or ""
    assert text == "Checking."
    assert finish_reason == "tool_calls"
    assert calls[0] == {"id": "call_a", "name": "get_weather", "arguments": weather}
    assert calls[1]["name"] == "remember"
    assert calls[1]["id"].startswith("call_")
    assert json.loads(calls[1]["arguments"]) == {"text": "likes Paris"}


def test_non_streamed_tool_calls(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.enqueue(Reply.tool_calls(ToolCall("calculator", '{"expression": "2+2"}', id="c1")))
    message = client.chat.completions.create(model="m", messages=MESSAGES).choices[0].message
    assert message.content is None
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    assert call.type == "function"
    assert (call.id, call.function.name) == ("c1", "calculator")
    assert call.function.arguments == '{"expression": "2+2"}'


def test_invalid_tool_arguments_are_passed_through(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake_openai.enqueue(Reply.tool_calls(ToolCall("remember", '{"text": "unterminated')))
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    arguments = "".join(
        tool.function.arguments or ""
        for chunk in stream
        for tool in chunk.choices[0].delta.tool_calls or []
        if tool.function is not None
    )
    assert arguments == '{"text": "unterminated'
    with pytest.raises(json.JSONDecodeError):
        json.loads(arguments)


def test_embeddings_shape_determinism_and_similarity(client: openai.OpenAI) -> None:
    texts = ["my cat is called Tom", "Tom the cat sleeps", "quarterly tax return deadline"]
    first = client.embeddings.create(model="embed", input=texts)
    again = client.embeddings.create(model="embed", input=texts)
    assert first.model == "embed"
    vectors = np.array([item.embedding for item in first.data])
    assert vectors.shape == (3, 64)
    assert np.allclose(vectors, [item.embedding for item in again.data])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.3
    assert similar > unrelated + 0.2


def test_embeddings_float_base64_and_single_string(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    as_base64 = client.embeddings.create(model="e", input="hello world")  # client asks base64
    assert fake_openai.requests[-1].body["encoding_format"] == "base64"
    as_float = client.embeddings.create(model="e", input="hello world", encoding_format="float")
    assert fake_openai.requests[-1].body["encoding_format"] == "float"
    assert isinstance(as_float.data[0].embedding[0], float)
    assert np.allclose(as_base64.data[0].embedding, as_float.data[0].embedding, atol=1e-6)
    sized = client.embeddings.create(model="e", input=["a", "b"], dimensions=16)
    assert [len(item.embedding) for item in sized.data] == [16, 16]


def test_embeddings_reject_empty_strings(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="e", input=["fine", ""])


def test_models_list(client: openai.OpenAI) -> None:
    assert [model.id for model in client.models.list()] == ["fake-chat", "fake-embed"]


def test_unknown_model_is_404_when_models_are_given() -> None:
    with FakeOpenAI(models=["known"]) as server:
        client = server.client()
        client.embeddings.create(model="known", input="x")
        with pytest.raises(openai.NotFoundError) as caught:
            client.embeddings.create(model="other", input="x")
    assert caught.value.code == "model_not_found"
    assert "`other`" in caught.value.message


def test_rate_limit_with_retry_after(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.enqueue(Reply.error(429, retry_after=7))
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="m", messages=MESSAGES)
    error = caught.value
    assert error.status_code == 429
    assert error.response.headers["retry-after"] == "7"
    assert error.code == "rate_limit_exceeded"
    assert isinstance(error.body, dict)
    assert set(error.body) >= {"message", "type", "code"}


def test_first_call_fails_and_the_retry_succeeds(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(
        Reply.error(429, retry_after=0.01),
        Reply.error(503, retry_after=0.01),
        Reply.text("finally"),
    )
    client = fake_openai.client(max_retries=2)
    response = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    assert response.parse().choices[0].message.content == "finally"
    assert len(fake_openai.requests) == 3
    assert fake_openai.pending == 0


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors(fake_openai: FakeOpenAI, client: openai.OpenAI, status: int) -> None:
    fake_openai.enqueue(Reply.error(status))
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.status_code == status
    assert caught.value.type == "server_error"


def test_dropped_connection_mid_stream(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.enqueue(Reply.text("one two three four five", drop_after=3))
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    received = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in stream:
            received.append(chunk.choices[0].delta.content)
    assert received == ["", "one", " two"]


def test_dropped_connection_before_the_response(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake_openai.enqueue(Reply.dropped())
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=MESSAGES)


def test_malformed_sse_line(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.enqueue(Reply.text("one two three", malformed_after=2))
    stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    received = []
    # The client does not wrap this one: a JSONDecodeError (a ValueError) escapes the iteration.
    with pytest.raises(json.JSONDecodeError):
        for chunk in stream:
            received.append(chunk.choices[0].delta.content)
    assert received == ["", "one"]


def test_wrong_api_key_is_401() -> None:
    with FakeOpenAI(required_api_key="sk-right") as server:
        assert server.client().models.list().data
        with pytest.raises(openai.AuthenticationError) as caught:
            server.client(api_key="sk-wrong").chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.code == "invalid_api_key"
    assert server.requests[-1].headers["authorization"] == "Bearer sk-wrong"


def test_delay_causes_a_client_timeout(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(Reply.text("late", delay=30.0))  # the server stops waiting at teardown
    client = fake_openai.client(timeout=0.2)
    with pytest.raises(openai.APITimeoutError):  # rather than the reply, 30 s later
        client.chat.completions.create(model="m", messages=MESSAGES)


def test_chunk_delay_spaces_the_stream(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    fake_openai.enqueue(Reply.text("a b c", chunk_delay=0.05))
    started = time.monotonic()
    assert stream_text(client) == "a b c"
    assert time.monotonic() - started >= 0.15  # 4 gaps between 5 chunks


def test_requests_record_path_headers_and_body(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    tools = [{"type": "function", "function": {"name": "recall", "parameters": {}}}]
    client.chat.completions.create(model="m", messages=MESSAGES, tools=tools, temperature=0.2)
    client.embeddings.create(model="e", input=["x"])
    chat, embeddings = fake_openai.requests
    assert (chat.method, chat.path) == ("POST", "/v1/chat/completions")
    assert chat.body["messages"] == MESSAGES
    assert chat.body["tools"] == tools
    assert chat.body["temperature"] == 0.2
    assert chat.headers["authorization"] == "Bearer sk-fake"
    assert embeddings.path == "/v1/embeddings"
    assert fake_openai.requests_to("/embeddings") == [embeddings]


def test_callable_reply_sees_the_request(fake_openai: FakeOpenAI, client: openai.OpenAI) -> None:
    seen: list[dict[str, Any]] = []

    def reply(request: dict[str, Any]) -> Reply:
        seen.append(request)
        return Reply.text(f"{len(request['messages'])} messages")

    fake_openai.enqueue(reply, "plain string")
    assert stream_text(client) == "1 messages"
    assert seen[0]["messages"] == MESSAGES
    assert seen[0]["stream"] is True
    response = client.chat.completions.create(model="m", messages=MESSAGES)
    assert response.choices[0].message.content == "plain string"


def test_embedding_faults_are_scripted_separately(
    fake_openai: FakeOpenAI, client: openai.OpenAI
) -> None:
    fake_openai.enqueue_embeddings(Reply.error(500))
    with pytest.raises(openai.InternalServerError):
        client.embeddings.create(model="e", input="x")
    assert len(client.embeddings.create(model="e", input="x").data) == 1


def test_concurrent_requests(fake_openai: FakeOpenAI) -> None:
    from concurrent.futures import ThreadPoolExecutor

    client = fake_openai.client()

    def ask(i: int) -> str:
        messages: Any = [{"role": "user", "content": f"question {i}"}]
        reply = client.chat.completions.create(model="m", messages=messages)
        return reply.choices[0].message.content or ""

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(ask, range(16)))
    assert answers == [f"Echo: question {i}" for i in range(16)]
    assert len(fake_openai.requests) == 16


def test_demo_reply_remembers_then_answers() -> None:
    with FakeOpenAI(default_reply=demo_reply) as server:
        client = server.client()
        messages: list[Any] = [{"role": "user", "content": "Please remember that I like tea"}]
        first = client.chat.completions.create(model="m", messages=messages).choices[0].message
        assert first.tool_calls is not None
        call = first.tool_calls[0]
        assert call.function.name == "remember"
        arguments = json.loads(call.function.arguments)
        assert arguments == {"text": "I like tea", "kind": "fact", "importance": 0.6}
        messages += [
            first.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "saved"},
        ]
        final = client.chat.completions.create(model="m", messages=messages).choices[0].message
        assert final.content
        assert not final.tool_calls
