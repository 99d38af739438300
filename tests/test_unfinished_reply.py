"""A streamed reply that ends without a finish reason (the server died) or with an error after some
text is saved as unfinished, with Retry, and stays marked after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, Failed, Finished
from assistant.memory import ConversationStore
from tests.desktop import configure, shown_window
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


@pytest.mark.gui
def test_the_mark_and_retry_survive_switching_and_a_restart(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    window = shown_window(qtbot, data_dir)
    fake_openai.enqueue(Reply.raw(sse(*CUT, done=True), content_type="text/event-stream"))
    window.input.setPlainText("Tell me something")
    window.send_button.click()
    live = "an answer\n⚠ The server at"
    qtbot.waitUntil(lambda: live in window.chat.toPlainText(), timeout=10000)
    assert "without a finish reason).  Retry" in window.chat.toPlainText()
    marked = "an answer\n⚠ The reply broke off.  Retry"
    cid = window.conversations.current_id()
    assert cid is not None
    other = window.workspace.conversations.create().id
    qtbot.waitUntil(lambda: window.conversations.model.row_of(other) >= 0, timeout=5000)
    window.conversations.select(other)
    qtbot.waitUntil(lambda: marked not in window.chat.toPlainText(), timeout=5000)
    window.conversations.select(cid)
    qtbot.waitUntil(lambda: marked in window.chat.toPlainText(), timeout=5000)
    window.close()
    again = shown_window(qtbot, data_dir)  # a restart reads it from the file
    qtbot.waitUntil(again.is_ready, timeout=10000)
    again.conversations.select(cid)
    qtbot.waitUntil(lambda: marked in again.chat.toPlainText(), timeout=10000)
    again.close()
