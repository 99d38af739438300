"""OpenAIProvider against servers that behave like llama.cpp, Ollama, LM Studio and vLLM."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.capabilities import CapabilityMemory
from assistant.agent.events import AgentEvent, Failed, Notice
from assistant.agent.loop import NO_TOOLS_NOTICE
from assistant.agent.provider import STREAM_TOOLS_NOTICE, OpenAIProvider
from assistant.agent.summary import SUMMARY_PROMPT
from assistant.errors import ContextOverflowError, ProviderError
from assistant.workspace import Workspace
from tests.fake_openai import ContextInfo, FakeOpenAI, Reply, ToolCall, prompt_tokens
from tests.test_provider import TOOLS

MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]
WEATHER = ToolCall("get_weather", json.dumps({"city": "Paris"}), id="call_1")


def provider_on(
    fake: FakeOpenAI, memory: CapabilityMemory | None = None, **kwargs: Any
) -> OpenAIProvider:
    timeout = kwargs.pop("timeout", 5.0)
    return OpenAIProvider(
        fake.client(timeout=timeout),
        "fake-chat",
        capabilities=memory,
        sleep=lambda _: None,
        **kwargs,
    )


def bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests_to("/chat/completions")]


def test_streamed_tool_choice_falls_back_to_whole_answers_and_remembers() -> None:
    notices: list[str] = []
    memory = CapabilityMemory(notices.append)
    with FakeOpenAI(stream_tool_choice=False) as fake:
        fake.enqueue(Reply.tool_calls(WEATHER), Reply.tool_calls(WEATHER), "It is sunny.")
        first = provider_on(fake, memory).chat(MESSAGES, tools=TOOLS)
        assert first.tool_calls[0].name == "get_weather"
        # A new provider (the next turn) goes straight to a whole answer, and still streams
        # requests without tools.
        again = provider_on(fake, memory)
        assert again.chat(MESSAGES, tools=TOOLS).tool_calls == first.tool_calls
        assert again.chat(MESSAGES).content == "It is sunny."
        assert [b["stream"] for b in bodies(fake)] == [True, False, False, True]
    assert notices == [STREAM_TOOLS_NOTICE]
    assert memory.get((fake.base_url, "fake-chat")).stream_tools is False


def test_an_empty_streamed_answer_to_tools_is_asked_whole() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.text(""), Reply.tool_calls(WEATHER))
        provider = provider_on(fake)
        assert provider.chat(MESSAGES, tools=TOOLS).tool_calls[0].id == "call_1"
        assert provider.capabilities.stream_tools is False


def test_an_answer_empty_both_ways_is_returned_and_nothing_is_learned() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.text(""), Reply.text(""))
        provider = provider_on(fake)
        assert provider.chat(MESSAGES, tools=TOOLS).is_empty
        assert provider.capabilities.stream_tools is True


@pytest.mark.parametrize(
    ("message", "dropped"),
    [
        ("tool_choice: auto is not supported for this model", "tool_choice"),
        ("registry.ollama.ai/library/gemma:2b does not support tools", "tools"),
    ],
)
def test_rejected_tool_fields_are_dropped_and_remembered(message: str, dropped: str) -> None:
    notices: list[str] = []
    memory = CapabilityMemory(notices.append)
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.error(400, message), "Sunny.", "Still sunny.")
        assert provider_on(fake, memory).chat(MESSAGES, tools=TOOLS).content == "Sunny."
        provider_on(fake, memory).chat(MESSAGES, tools=TOOLS)
        sent = bodies(fake)
    assert dropped in sent[0]
    assert all(dropped not in body for body in sent[1:])
    assert len(notices) == 1


def test_a_500_naming_a_parameter_drops_it_without_retrying() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.error(500, "response_format is not supported"), '{"memories": []}')
        response = provider_on(fake).chat(MESSAGES, json_mode=True)
        assert response.content == '{"memories": []}'
        assert "response_format" not in bodies(fake)[1]


def test_a_500_naming_a_missing_feature_shows_the_server_text_and_is_not_retried() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.error(500, "Llama model must be created with embedding=True"))
        with pytest.raises(ProviderError) as caught:
            provider_on(fake).chat(MESSAGES)
        assert len(bodies(fake)) == 1
    assert str(caught.value) == (
        f"The server at {fake.base_url} had an error (HTTP 500): "
        "Llama model must be created with embedding=True"
    )


def test_long_server_texts_are_shortened_and_the_key_scrubbed() -> None:
    key = "sk-secret-key-123456"
    with FakeOpenAI(required_api_key=key) as fake:
        fake.enqueue(Reply.error(400, f"bad key {key} " + "word " * 200))
        client = fake.client()
        with pytest.raises(ProviderError) as caught:
            OpenAIProvider(client, "fake-chat").chat(MESSAGES)
    text = str(caught.value)
    assert key not in text
    assert "***" in text
    assert len(text) < 400
    assert text.endswith("…")


def test_max_tokens_becomes_max_completion_tokens_when_the_server_asks() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(
            Reply.error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
            ),
            "Fine.",
        )
        memory = CapabilityMemory()
        assert provider_on(fake, memory).chat(MESSAGES, max_tokens=50).content == "Fine."
        provider_on(fake, memory).chat(MESSAGES, max_tokens=60)
        sent = bodies(fake)
    assert sent[0]["max_tokens"] == 50
    assert sent[1]["max_completion_tokens"] == 50
    assert "max_tokens" not in sent[1]
    assert sent[2]["max_completion_tokens"] == 60


def test_max_tokens_cuts_the_answer_with_length() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue("one two three four five six")
        response = provider_on(fake).chat(MESSAGES, max_tokens=3)
    assert response.content == "one two three"
    assert response.cut_off


@pytest.mark.parametrize("stream", [True, False])
def test_llama_cpp_overflow_is_a_context_overflow_error(stream: bool) -> None:
    words = " ".join(["word"] * 80)
    with FakeOpenAI(context_window=50) as fake:
        provider = provider_on(fake, stream=stream)
        with pytest.raises(ContextOverflowError) as caught:
            provider.chat([{"role": "user", "content": words}])
        assert [b["stream"] for b in bodies(fake)] == [True, False][not stream :]
    assert caught.value.context_tokens == 50
    assert caught.value.prompt_tokens == 83
    assert "exceed context window of 50" in str(caught.value)
    # The stream was not to blame: it is still used.
    assert provider.capabilities.stream and provider.capabilities.stream_tools
    # The window is now known, in our estimate's tokens: 83 server tokens for an estimate of
    # about 100 make the 50 about 60.
    window = provider.context_window()
    assert window is not None
    assert 50 < window < 75


def test_openai_overflow_wording() -> None:
    with FakeOpenAI(context_window=20, overflow_style="openai") as fake:
        with pytest.raises(ContextOverflowError) as caught:
            provider_on(fake).chat([{"role": "user", "content": "word " * 40}])
        assert len(bodies(fake)) == 1
    assert (caught.value.context_tokens, caught.value.prompt_tokens) == (20, 43)
    assert "maximum context length is 20 tokens" in str(caught.value)


@pytest.mark.parametrize("info", ["props", "lmstudio", "ollama", "vllm"])
def test_the_context_window_is_asked_of_the_server(info: ContextInfo) -> None:
    with FakeOpenAI(context_window=2048, context_info=info) as fake:
        memory = CapabilityMemory()
        assert provider_on(fake, memory).context_window() == 2048
        asked = len(fake.requests)
        assert provider_on(fake, memory).context_window() == 2048
        assert len(fake.requests) == asked  # asked once per server and model


def test_an_unknown_context_window_is_none_and_asked_once() -> None:
    with FakeOpenAI() as fake:
        memory = CapabilityMemory()
        assert provider_on(fake, memory).context_window() is None
        asked = len(fake.requests)
        assert provider_on(fake, memory).context_window() is None
        assert len(fake.requests) == asked


def test_a_slow_first_byte_is_reported_while_waiting() -> None:
    waited: list[float] = []
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.text("Late but here.", delay=2.0))  # long past the notice's 0.05 s
        provider = provider_on(fake, wait_notice_after=0.05)
        response = provider.chat(MESSAGES, cancel=CancelToken(), on_wait=waited.append)
    assert response.content == "Late but here."
    assert waited
    assert all(seconds >= 0.05 for seconds in waited)


def test_a_stall_mid_stream_is_reported_as_a_stall() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.stalled("The capital of France is Paris.", after=3))
        provider = provider_on(fake, timeout=0.3)
        with pytest.raises(ProviderError) as caught:
            provider.chat(MESSAGES, on_text=lambda _: None)
    assert str(caught.value) == (
        f"The server at {fake.base_url} stopped sending in the middle of the answer "
        "(nothing for 0.3 s)."
    )


def test_a_silent_server_is_retried_once_and_reported_as_a_timeout() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(*[Reply.text("late", delay=2.0)] * 4)
        provider = provider_on(fake, timeout=0.2, max_retries=3)
        with pytest.raises(ProviderError) as caught:
            provider.chat(MESSAGES)
        assert len(bodies(fake)) == 2
    assert str(caught.value) == (
        f"The server at {fake.base_url} did not answer in time (waited 0.2 s). Tried 2 times."
    )


# --- the whole app core on a server like llama-cpp-python with a 2,048-token model ---------------


def llama_cpp_workspace(data_dir: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    workspace = Workspace.open(data_dir)
    workspace.settings.chat_model = "fake-chat"
    workspace.settings.embedding_model = ""
    workspace.settings.auto_memories = False
    return workspace


def small_model_reply(request: dict[str, Any]) -> Reply:
    """Long answers to the user; a short summary when asked for one."""
    if request["messages"][0]["content"] == SUMMARY_PROMPT:
        return Reply.text("The user asked many questions and got long answers.")
    return Reply.text("Here is more: " + "and so on " * 60)


def test_a_growing_conversation_keeps_working_on_a_small_model(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(
        context_window=2048, stream_tool_choice=False, default_reply=small_model_reply
    ) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        workspace = Workspace.open(data_dir)
        workspace.settings = replace(
            workspace.settings, chat_model="fake-chat", embedding_model="", auto_memories=False
        )
        notices: list[str] = []
        workspace.notices.subscribe(notices.append)
        cid = workspace.conversations.create().id
        turn_notices: list[str] = []
        for turn in range(8):
            events: list[AgentEvent] = []
            question = f"Question {turn}: " + "tell me more " * 60
            workspace.agent().run(cid, question, events.append, CancelToken())
            assert not [e for e in events if isinstance(e, Failed)]
            turn_notices += [e.text for e in events if isinstance(e, Notice)]
        conversation = workspace.conversations.load(cid)
        sizes = [prompt_tokens(r.body) for r in fake.requests_to("/chat/completions")]
    assert conversation.summary == "The user asked many questions and got long answers."
    assert len(conversation.messages) == 16
    # One overflow taught the window; the tools no longer fit it, and every later prompt did.
    assert notices == [STREAM_TOOLS_NOTICE, NO_TOOLS_NOTICE]
    assert turn_notices == ["The prompt was too long for the model; shortened."]
    assert sum(size > 2048 for size in sizes) == 1


def test_an_error_about_one_tool_schema_keeps_the_tools() -> None:
    with FakeOpenAI() as fake:
        fake.enqueue(Reply.error(400, "Invalid schema for function 'get_weather' in tools[0]."))
        provider = provider_on(fake)
        with pytest.raises(ProviderError, match=r"HTTP 400.*Invalid schema"):
            provider.chat(MESSAGES, tools=TOOLS)
        assert len(bodies(fake)) == 1
        assert provider.capabilities.dropped == frozenset()
