"""End to end through the real `openai` client and a local server speaking the OpenAI API."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, Cancelled, Finished, TextDelta, ToolCallFinished
from assistant.agent.loop import Agent, AgentConfig
from assistant.agent.provider import OpenAIProvider
from assistant.memory import ConversationStore
from assistant.memory.openai_embedder import OpenAIEmbedder
from assistant.memory.semantic import SemanticMemory
from assistant.memory.working import WorkingMemoryStore
from tests.fake_openai import FakeOpenAI, Reply, ToolCall


def make_agent(root: Path, server: FakeOpenAI) -> tuple[Agent, SemanticMemory, ConversationStore]:
    client = server.client(max_retries=0, timeout=5.0)
    memory = SemanticMemory.open(root / "memory", OpenAIEmbedder(client, "embed-model"))
    conversations = ConversationStore(root)
    agent = Agent(
        OpenAIProvider(client, "chat-model", max_retries=0),
        memory,
        conversations,
        WorkingMemoryStore(root / "memory"),
        config=AgentConfig(auto_memories=False),
    )
    return agent, memory, conversations


def run(agent: Agent, cid: str, text: str, cancel: CancelToken | None = None) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    agent.run(cid, text, events.append, cancel or CancelToken())
    return events


def test_a_memory_from_one_conversation_informs_the_next(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    agent, memory, conversations = make_agent(data_dir, fake_openai)
    first = conversations.create().id
    remember = {"text": "The user is allergic to peanuts", "kind": "fact", "importance": 0.9}
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("remember", json.dumps(remember))),
        Reply.text("Got it, I will remember your peanut allergy."),
    )
    events = run(agent, first, "Please remember that I am allergic to peanuts.")
    (tool,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert tool.ok, tool.result
    (item,) = memory.all()
    assert memory.embedding_status().embedded == 1

    second = conversations.create().id
    fake_openai.clear_requests()
    fake_openai.enqueue(Reply.text("Avoid the satay: it contains peanuts."))
    events = run(agent, second, "I am allergic to peanuts: is the satay safe?")
    (finished,) = [e for e in events if isinstance(e, Finished)]
    (chat,) = fake_openai.requests_to("/chat/completions")
    system = chat.body["messages"][0]["content"]
    assert f"[{item.id}]" in system
    assert "allergic to peanuts" in system
    assert item.id in finished.memory_ids
    saved = conversations.load(second).messages[-1]
    assert saved.content == "Avoid the satay: it contains peanuts."
    assert item.id in saved.memory_ids
    assert memory.get(item.id).access_count == 1  # type: ignore[union-attr]


def test_cancel_mid_stream_keeps_the_partial_text(data_dir: Path, fake_openai: FakeOpenAI) -> None:
    agent, _, conversations = make_agent(data_dir, fake_openai)
    cid = conversations.create().id
    words = " ".join(f"word{i}" for i in range(40))
    fake_openai.enqueue(Reply.text(words, chunk_delay=0.05))
    cancel = CancelToken()
    events: list[AgentEvent] = []

    def on_event(event: AgentEvent) -> None:
        events.append(event)
        if sum(isinstance(e, TextDelta) for e in events) == 3:
            cancel.cancel()

    thread = threading.Thread(target=agent.run, args=(cid, "Count for me", on_event, cancel))
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert any(isinstance(e, Cancelled) for e in events)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    saved = conversations.load(cid).messages
    assert [m.role for m in saved] == ["user", "assistant"]
    assert saved[-1].content == shown
    assert 0 < len(shown) < len(words)
