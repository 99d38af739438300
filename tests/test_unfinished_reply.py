"""A streamed reply that ends without a finish reason (the server died) or with an error after some
text is saved as unfinished, with Retry, and stays marked after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, Failed, Finished
from assistant.memory import ConversationStore
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_agent_e2e import make_agent


def sse(*events: object, done: bool) -> str:
    lines = [f"data: {json.dumps(e)}\n\n" for e in events]
    return "".join(lines) + ("data: [DONE]\n\n" if done else "")


def chunk(content: str | None = None, finish: str | None = None) -> dict[str, object]:
    delta = {} if content is None else {"content": content}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "chat-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


CUT = [chunk("The first half of "), chunk("an answer")]
ERROR = {"error": {"message": "The model crashed.", "type": "server_error"}}


@pytest.mark.parametrize(
    "body",
    [sse(*CUT, done=True), sse(*CUT, done=False), sse(*CUT, ERROR, done=False)],
    ids=["no finish reason", "no end at all", "an error after text"],
)
def test_a_reply_cut_short_is_saved_unfinished(
    data_dir: Path, fake_openai: FakeOpenAI, body: str
) -> None:
    agent, memory, conversations = make_agent(data_dir, fake_openai)
    cid = conversations.create().id
    fake_openai.enqueue(Reply.raw(body, content_type="text/event-stream"))
    events: list[AgentEvent] = []
    agent.run(cid, "Tell me something", events.append, CancelToken())
    assert not any(isinstance(e, Finished) for e in events)
    (failed,) = [e for e in events if isinstance(e, Failed)]
    assert failed.error
    memory.close()
    reply = ConversationStore(data_dir).load(cid).branch()[-1]  # as a restart reads it
    assert reply.role == "assistant" and reply.content == "The first half of an answer"
    assert reply.stop_reason == "failed"


def test_a_whole_reply_with_its_finish_reason_is_complete(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    agent, memory, conversations = make_agent(data_dir, fake_openai)
    cid = conversations.create().id
    fake_openai.enqueue(
        Reply.raw(sse(*CUT, chunk(finish="stop"), done=True), content_type="text/event-stream")
    )
    events: list[AgentEvent] = []
    agent.run(cid, "Tell me something", events.append, CancelToken())
    assert any(isinstance(e, Finished) for e in events)
    assert ConversationStore(data_dir).load(cid).branch()[-1].stop_reason is None
    memory.close()
