"""The tool-dispatch loop on a scripted provider: events, persistence, tools, memory, cancel."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.chat import ChatResponse
from assistant.agent.curator import EXTRACT_MAX_TOKENS, TOPIC_MAX_TOKENS, Curator
from assistant.agent.events import (
    AgentEvent,
    Cancelled,
    Failed,
    Finished,
    Notice,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from assistant.agent.loop import (
    EMPTY_REPLY,
    EXTRA_TOOLS_LEFT_OUT_NOTICE,
    NO_TOOLS_NOTICE,
    Agent,
    AgentConfig,
    Upkeep,
)
from assistant.agent.summary import SUMMARY_MAX_TOKENS, SUMMARY_PROMPT
from assistant.agent.tool_step import CANCELLED_TOOL_RESULT, REPEATED_RESULT
from assistant.agent.tools import Tool
from assistant.agent.turn import LOOPING_NOTICE
from assistant.errors import ContextOverflowError, ProviderError
from assistant.memory import ConversationStore, Message, Source, estimate_tokens
from assistant.memory.semantic import SemanticMemory
from assistant.memory.topics import TopicStore
from assistant.memory.working import WorkingMemoryStore
from tests.scripted import ScriptedProvider, calls


class Harness:
    """An agent on real stores in the test's data dir, driven by a scripted provider."""

    def __init__(self, root: Path, provider: ScriptedProvider, **config: object) -> None:
        self.provider = provider
        self.memory = SemanticMemory.open(root / "memory")
        self.conversations = ConversationStore(root)
        self.working = WorkingMemoryStore(root / "memory")
        self.topics = TopicStore(root / "memory")
        self.curator = Curator(provider, self.memory, self.topics)
        self.agent = Agent(
            provider,
            self.memory,
            self.conversations,
            self.working,
            config=AgentConfig(**config),  # type: ignore[arg-type]
            curator=self.curator,
        )
        self.events: list[AgentEvent] = []

    def turn(self, cid: str, user_text: str, cancel: CancelToken | None = None) -> list[AgentEvent]:
        self.events = []
        self.agent.run(cid, user_text, self.events.append, cancel or CancelToken())
        return self.events

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
def provider() -> Iterator[ScriptedProvider]:
    scripted = ScriptedProvider()
    yield scripted
    scripted.assert_all_used()


@pytest.fixture
def h(data_dir: Path, provider: ScriptedProvider) -> Harness:
    return Harness(data_dir, provider, auto_memories=False)


def test_text_reply_streams_and_is_saved(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue("Hello there, how can I help?")
    events = h.turn(cid, "Hi!")
    assert isinstance(events[0], TextDelta)
    assert "".join(e.text for e in h.of(TextDelta)) == "Hello there, how can I help?"
    assert len(h.of(TextDelta)) > 1
    (finished,) = h.of(Finished)
    messages = h.conversations.load(cid).messages
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Hi!"),
        ("assistant", "Hello there, how can I help?"),
    ]
    assert finished.message_id == messages[-1].id
    request = h.provider.requests[0]
    assert request["messages"][0]["role"] == "system"
    assert request["messages"][-1] == {"role": "user", "content": "Hi!"}
    assert [t["function"]["name"] for t in request["tools"]][:2] == ["remember", "recall"]


def test_remember_tool_stores_memory_with_source(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue(
        calls(("remember", {"text": "The user's cat is called Miso.", "importance": 0.8})),
        "Noted: your cat is Miso.",
    )
    h.turn(cid, "My cat is called Miso")
    (started,) = h.of(ToolCallStarted)
    (finished,) = h.of(ToolCallFinished)
    assert started.name == "remember" and finished.ok
    (item,) = h.memory.all()
    assert item.text == "The user's cat is called Miso."
    assert item.importance == 0.8
    messages = h.conversations.load(cid).messages
    assert item.source is not None
    assert (item.source.conversation_id, item.source.message_id) == (cid, messages[0].id)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_calls[0]["function"]["name"] == "remember"
    assert messages[2].tool_call_id == messages[1].tool_calls[0]["id"]
    # The second request carried the tool exchange back to the model.
    second = h.provider.requests[1]["messages"]
    assert second[-1]["role"] == "tool"
    assert second[-1]["content"].startswith("Remembered as ")


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("launch_rocket", "{}", "Unknown tool 'launch_rocket'"),
        ("calculator", '{"expression": "1 +', "not valid JSON"),
        ("calculator", '{"expr": "1"}', "expr"),
        ("calculator", '{"expression": "1/0"}', "zero"),
        ("forget", '{"memory_id": "nope"}', "no memory with id"),
    ],
)
def test_tool_errors_go_back_to_the_model(
    h: Harness, name: str, arguments: str, expected: str
) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue(calls((name, arguments)), "Sorry about that.")
    h.turn(cid, "do it")
    (finished,) = h.of(ToolCallFinished)
    assert not finished.ok
    assert expected in finished.result
    assert h.of(Finished)
    tool_message = h.provider.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and expected in tool_message["content"]
    (saved,) = [m for m in h.conversations.load(cid).messages if m.role == "tool"]
    assert not saved.ok  # kept as a flag, so the chat shows the failure again after a restart


def test_several_tool_calls_in_one_response(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue(
        calls(("calculator", {"expression": "6*7"}), ("current_datetime", {})), "42, and now."
    )
    h.turn(cid, "compute")
    results = [e.result for e in h.of(ToolCallFinished)]
    assert results[0] == "42"
    assert len(results) == 2
    assert [m.role for m in h.conversations.load(cid).messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


def test_step_limit_then_answer_without_tools(data_dir: Path, provider: ScriptedProvider) -> None:
    h = Harness(data_dir, provider, max_steps=3, auto_memories=False)
    cid = h.conversations.create().id
    steps = [calls(("calculator", {"expression": f"{n}+{n}"})) for n in range(3)]
    h.provider.enqueue(*steps, "Here is what I have.")
    h.turn(cid, "loop forever")
    assert len(h.of(ToolCallFinished)) == 3
    (finished,) = h.of(Finished)
    assert finished.text == "Here is what I have."
    last = h.provider.requests[-1]
    assert last["tools"] is None
    assert "used all your tool steps" in last["messages"][-1]["content"]


def test_the_same_tool_call_runs_twice_at_most_then_tools_stop(h: Harness) -> None:
    """A small model that calls the date tool again and again: the third identical call (the
    same arguments in any order) is refused, and the model answers without tools."""
    cid = h.conversations.create().id
    h.provider.enqueue(
        calls(("calculator", {"expression": "1+1"})),
        calls(("calculator", '{"expression":  "1+1"}'), ("current_datetime", {})),
        calls(("calculator", {"expression": "1+1"})),
        "It is 2.",
    )
    h.turn(cid, "what is 1+1?")
    finished = h.of(ToolCallFinished)
    assert [e.ok for e in finished] == [True, True, True, False]
    assert finished[-1].result == REPEATED_RESULT.format(times=2)
    assert [n.text for n in h.of(Notice)].count(LOOPING_NOTICE) == 1
    assert h.provider.requests[-1]["tools"] is None
    assert h.provider.requests[2]["tools"] is not None
    (done,) = h.of(Finished)
    assert done.text == "It is 2."


def test_relevant_and_pinned_memories_are_in_the_prompt(h: Harness) -> None:
    tea = h.memory.add("Alice prefers green tea", kind="preference")
    pinned = h.memory.add("The user's name is Sam", pinned=True)
    h.memory.add("The user owns a bicycle")
    cid = h.conversations.create().id
    h.provider.enqueue("You could offer Alice green tea.")
    h.turn(cid, "What should I serve Alice?")
    system = h.provider.requests[0]["messages"][0]["content"]
    assert f"[{tea.id}]" in system and f"[{pinned.id}]" in system
    assert "bicycle" not in system
    (finished,) = h.of(Finished)
    assert set(finished.memory_ids) == {tea.id, pinned.id}
    assert set(h.conversations.load(cid).messages[-1].memory_ids) == {tea.id, pinned.id}
    assert h.memory.get(tea.id).access_count == 1  # type: ignore[union-attr]
    (used_event,) = [e for e in h.memory.history(tea.id) if e.type == "used"]
    assert used_event.source == Source(cid, finished.message_id)  # the reply it was used in


def test_recalled_memories_are_recorded_on_the_reply(h: Harness) -> None:
    item = h.memory.add("The user's passport expires in March")
    cid = h.conversations.create().id
    h.provider.enqueue(calls(("recall", {"query": "passport expiry"})), "In March.")
    h.turn(cid, "hmm, when?")
    (finished,) = h.of(Finished)
    assert item.id in finished.memory_ids


def test_working_memory_tool_and_prompt(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue(
        calls(("update_working_memory", {"task": "Plan the trip", "push_subgoal": "Book trains"})),
        "Started.",
        "Next step.",
    )
    h.turn(cid, "help me plan a trip")
    assert h.working.get(cid).task == "Plan the trip"
    h.turn(cid, "continue")
    system = h.provider.requests[-1]["messages"][0]["content"]
    assert "Plan the trip" in system and "Book trains" in system


def test_temporary_chat_neither_reads_nor_writes_memory(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=True)
    h.memory.add("Alice prefers green tea", pinned=True)
    cid = h.conversations.create(temporary=True).id
    h.provider.enqueue(calls(("remember", {"text": "secret"})), "I can't remember here.")
    h.turn(cid, "Alice tea remember this")
    request = h.provider.requests[0]
    assert "Alice prefers" not in request["messages"][0]["content"]
    assert "temporary chat" in request["messages"][0]["content"]
    assert "remember" not in [t["function"]["name"] for t in request["tools"]]
    assert "Unknown tool 'remember'" in h.of(ToolCallFinished)[0].result
    assert len(h.memory) == 1
    assert len(h.provider.requests) == 2  # no curator call


def test_provider_failure_keeps_user_text_and_retry_answers(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue(ProviderError("Could not reach http://127.0.0.1:11434/v1"))
    h.turn(cid, "Are you there?")
    (failed,) = h.of(Failed)
    assert "Could not reach" in failed.error
    assert [m.content for m in h.conversations.load(cid).messages] == ["Are you there?"]
    h.provider.enqueue("Yes!")
    h.events = []
    h.agent.retry(cid, h.events.append, CancelToken())
    assert h.of(Finished)
    assert [m.content for m in h.conversations.load(cid).messages] == ["Are you there?", "Yes!"]


def test_a_failure_is_noted_under_its_message_and_only_a_new_message_is_unsaved(
    h: Harness,
) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue(ProviderError("Could not reach http://127.0.0.1:11434/v1"))
    h.turn(cid, "Are you there?")
    (failed,) = h.of(Failed)
    saved = h.conversations.load(cid)
    assert saved.failures == {saved.messages[0].id: failed.error} and not failed.unsaved
    h.events = []
    h.agent.retry(cid, h.events.append, CancelToken(), "no-such-message")
    (failed,) = h.of(Failed)
    assert "no longer in the conversation" in failed.error and not failed.unsaved


def test_cancel_mid_stream_keeps_partial_text(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.chunk_pause = 0.05
    h.provider.enqueue("one two three four five six seven eight nine ten")
    cancel = CancelToken()
    threading.Thread(target=lambda: (h.provider.streaming.wait(5), cancel.cancel())).start()
    h.turn(cid, "count", cancel)
    assert h.of(Cancelled) and not h.of(Finished)
    shown = "".join(e.text for e in h.of(TextDelta))
    saved = h.conversations.load(cid).messages
    assert saved[-1].role == "assistant"
    assert saved[-1].content == shown
    assert 0 < len(shown) < len("one two three four five six seven eight nine ten")


def test_cancel_between_tools_closes_every_call(h: Harness) -> None:
    cid = h.conversations.create().id
    cancel = CancelToken()

    def cancel_then_calls(messages: list[dict[str, object]]) -> object:
        cancel.cancel()
        return calls(("calculator", {"expression": "1+1"}), ("current_datetime", {}))

    h.provider.enqueue(cancel_then_calls)  # type: ignore[arg-type]
    h.turn(cid, "go", cancel)
    assert h.of(Cancelled)
    messages = h.conversations.load(cid).messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool"]
    assert all(m.content == CANCELLED_TOOL_RESULT for m in messages[2:])
    assert all(m.stop_reason == "stopped" for m in messages[2:])  # the chat shows "Stopped."


def test_stopped_before_the_first_word_after_tools_is_kept_as_stopped(h: Harness) -> None:
    """Stop while the model thinks about a tool's result (a local server's only slot): the chat
    says Stopped, not that the reply did not finish; the mark is not sent to the model."""
    cid = h.conversations.create().id
    cancel = CancelToken()

    def stopped_while_waiting(messages: list[dict[str, object]]) -> object:
        cancel.cancel()
        raise OperationCancelledError

    h.provider.enqueue(calls(("calculator", {"expression": "1+1"})), stopped_while_waiting)  # type: ignore[arg-type]
    h.turn(cid, "go", cancel)
    assert h.of(Cancelled)
    last = h.conversations.load(cid).messages[-1]
    assert (last.role, last.content, last.stop_reason) == ("assistant", "", "stopped")
    h.provider.enqueue("Hello again.")
    h.turn(cid, "hello")
    sent = h.provider.requests[-1]["messages"]
    assert all(
        m.get("content") != "" or m.get("tool_calls") for m in sent if m["role"] == "assistant"
    )


def test_old_messages_are_summarized_when_over_budget(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, prompt_budget_tokens=600, auto_memories=False)
    h.provider.always(
        lambda messages: "running summary" in messages[0]["content"],
        "The user asked numbered questions and got long answers.",
    )
    cid = h.conversations.create().id
    for i in range(8):
        h.provider.enqueue(f"Answer {i} " + "blah " * 60)
        h.turn(cid, f"Question {i} " + "words " * 60)
    summaries = [r for r in h.provider.requests if "running summary" in r["messages"][0]["content"]]
    assert summaries, "the overflow was never summarized"
    conversation = h.conversations.load(cid)
    assert conversation.summary == "The user asked numbered questions and got long answers."
    assert [m.content for m in conversation.messages[1::2]] == [
        f"Answer {i} " + "blah " * 60 for i in range(8)
    ]
    assert conversation.summary_upto is not None
    assert len(conversation.messages) == 16  # the file keeps everything
    last_prompt = h.provider.requests[-1]["messages"]
    assert "Summary of the earlier conversation" in last_prompt[0]["content"]
    assert len(last_prompt) < 16


def test_curator_adds_merges_and_summarizes_topics(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=True)
    cid = h.conversations.create().id
    extraction = {
        "memories": [
            {
                "kind": "preference",
                "text": "The user likes jazz",
                "importance": 0.6,
                "topic": "Music",
            },
            {"kind": "gossip", "text": "invalid kind is dropped"},
            {"text": 42},
        ]
    }
    h.provider.enqueue("Nice!", json.dumps(extraction), "The user enjoys jazz.")
    h.turn(cid, "I like jazz")
    (item,) = h.memory.all()
    assert item.text == "The user likes jazz"
    assert item.source is not None and item.source.conversation_id == cid
    assert h.provider.requests[1]["json_mode"]
    topic = h.topics.get("music")
    assert topic is not None and topic.summary == "The user enjoys jazz."
    assert topic.memory_ids == (item.id,)

    again = {
        "memories": [{"kind": "preference", "text": "The user likes jazz!", "importance": 0.9}]
    }
    h.provider.enqueue("Cool.", json.dumps(again))  # said word for word: nothing to decide
    h.turn(cid, "Really, jazz")
    assert [i.id for i in h.memory.all()] == [item.id]

    refined = {
        "memories": [{"kind": "preference", "text": "The user loves Coltrane", "importance": 0.9}]
    }
    decision = {
        "decisions": [
            {
                "candidate": 0,
                "action": "UPDATE",
                "target": item.id,
                "text": "The user likes jazz, Coltrane most",
            }
        ]
    }
    h.provider.enqueue("Nice.", json.dumps(refined), json.dumps(decision), "Jazz lover.")
    h.turn(cid, "Coltrane above all")
    (merged,) = h.memory.all()
    assert merged.id == item.id and merged.text == "The user likes jazz, Coltrane most"
    assert merged.importance == 0.9


def test_curator_survives_garbage(data_dir: Path, provider: ScriptedProvider) -> None:
    h = Harness(data_dir, provider, auto_memories=True)
    cid = h.conversations.create().id
    h.provider.enqueue("Sure.", "this is not json", "Fine.", ProviderError("down"))
    h.turn(cid, "hello")
    h.turn(cid, "hello again")
    assert len(h.of(Finished)) == 1
    assert len(h.memory) == 0


def test_curator_is_off_when_settings_say_so(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue("Hi.")
    h.turn(cid, "I like jazz")
    assert len(h.provider.requests) == 1


def test_the_curator_never_learns_from_a_conversation_not_to_be_remembered(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=True)
    message = Message("m1", None, "user", "Earlier", "2026-01-01T00:00:00.000000Z")
    h.conversations.import_conversation(
        "private", "Private", message.created_at, [message], do_not_remember=True
    )
    h.provider.enqueue("Noted for this chat only.")
    h.turn("private", "My PIN hint is the cat's birthday")
    assert len(h.provider.requests) == 1  # no curator call
    assert len(h.memory) == 0


def test_remember_saves_nothing_in_a_conversation_not_to_be_remembered(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=True)
    known = h.memory.add("The user's cat is called Miso.", "fact", 0.8)
    h.conversations.import_conversation(
        "private", "Private", "2026-01-01T00:00:00.000000Z", [], do_not_remember=True
    )
    h.provider.enqueue(
        calls(("remember", {"text": "The user's locker code is 1234."})),
        "This chat is set not to be remembered.",
    )
    h.turn("private", "Remember that my locker code is 1234, and what is my cat called?")
    assert [m.text for m in h.memory.all()] == [known.text]  # nothing saved
    first, second = h.provider.requests[:2]
    system = first["messages"][0]["content"]
    assert "do-not-remember" in system
    assert "Miso" in system  # what it remembers is still used
    answer = second["messages"][-1]["content"]
    assert answer.startswith("Not saved: this conversation is set not to be remembered")
    assert len(h.provider.requests) == 2  # and no curator call


# --- limits: the context window, overflows, summaries, judged replies -----------------------------


def prompt_size(request: dict[str, Any]) -> int:
    return estimate_tokens(json.dumps(request["messages"])) + estimate_tokens(
        json.dumps(request["tools"] or [])
    )


def summary_requests(provider: ScriptedProvider) -> list[dict[str, Any]]:
    return [r for r in provider.requests if is_summary(r["messages"])]


def is_summary(messages: list[dict[str, Any]]) -> bool:
    return bool(messages[0]["content"] == SUMMARY_PROMPT)


def summarizes(provider: ScriptedProvider, summary: str = "The summary so far.") -> None:
    """Answer every summary request with `summary`."""
    provider.always(is_summary, summary)


def test_the_budget_follows_a_small_context_window(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    provider.window = 2500
    summarizes(provider)
    h = Harness(data_dir, provider, auto_memories=False)
    cid = h.conversations.create().id
    for i in range(10):
        h.provider.enqueue(f"Answer {i} " + "blah " * 100)
        h.turn(cid, f"Question {i} " + "words " * 100)
        assert h.of(Finished)
    turns = [r for r in provider.requests if r["tools"]]
    assert all(prompt_size(r) <= 0.6 * 2500 for r in turns)
    assert summary_requests(provider)
    assert all(r["max_tokens"] == SUMMARY_MAX_TOKENS for r in summary_requests(provider))
    # The reply may use what the window leaves after the prompt.
    assert all(r["max_tokens"] <= 2500 - prompt_size(r) + 64 for r in turns)


def test_without_a_window_the_reply_limit_is_the_setting(h: Harness) -> None:
    h.provider.enqueue("Hi.")
    h.turn(h.conversations.create().id, "Hello")
    assert h.provider.requests[0]["max_tokens"] == 4096


def test_a_large_overflow_is_summarized_in_chunks_that_fit(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, prompt_budget_tokens=8000, auto_memories=False)
    cid = h.conversations.create().id
    for i in range(12):  # written while the window was large
        h.conversations.append(cid, "user", f"Question {i} " + "words " * 300)
        h.conversations.append(cid, "assistant", f"Answer {i} " + "blah " * 300)
    provider.window = 2000  # then a small model is chosen
    summarizes(provider)
    provider.enqueue("Now this.")
    h.turn(cid, "And now?")
    summaries = summary_requests(provider)
    assert len(summaries) > 3
    assert all(prompt_size(r) <= 0.6 * 2000 for r in summaries)
    conversation = h.conversations.load(cid)
    assert conversation.summary_upto is not None
    assert h.of(Finished)
    # Each summary folds the previous one in.
    assert all("The summary so far." in r["messages"][1]["content"] for r in summaries[1:])


def test_a_message_longer_than_a_chunk_is_clipped_for_its_summary(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    provider.window = 1000
    h = Harness(data_dir, provider, auto_memories=False)
    cid = h.conversations.create().id
    h.conversations.append(cid, "user", "start " + "huge " * 5000 + " end")
    h.conversations.append(cid, "assistant", "Noted.")
    summarizes(provider)
    provider.enqueue("Next it is.")
    h.turn(cid, "Next")
    (summary,) = summary_requests(provider)
    assert prompt_size(summary) <= 600
    assert "start huge" in summary["messages"][1]["content"]
    assert summary["messages"][1]["content"].endswith("huge  end")


def test_a_failed_summary_is_said_not_silent(data_dir: Path, provider: ScriptedProvider) -> None:
    h = Harness(data_dir, provider, prompt_budget_tokens=300, auto_memories=False)
    cid = h.conversations.create().id
    for i in range(4):
        h.conversations.append(cid, "user", f"Question {i} " + "words " * 100)
        h.conversations.append(cid, "assistant", f"Answer {i} " + "blah " * 100)
    provider.enqueue(ProviderError("The server at x had an error (HTTP 500): boom"), "Fine.")
    h.turn(cid, "Hi")
    (notice,) = [n for n in h.of(Notice) if "Could not summarize" in n.text]
    assert "boom" in notice.text
    assert h.of(Finished)[0].text == "Fine."


def long_conversation(h: Harness) -> str:
    """A conversation of six long exchanges (about 5,000 tokens); returns its id."""
    cid = h.conversations.create().id
    for i in range(6):
        h.conversations.append(cid, "user", f"Question {i} " + "words " * 300)
        h.conversations.append(cid, "assistant", f"Answer {i} " + "blah " * 300)
    return cid


def test_an_overflow_builds_a_smaller_prompt_and_answers(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=False)
    cid = long_conversation(h)

    def overflow(messages: list[dict[str, Any]]) -> ChatResponse:
        provider.window = 1500  # what the provider learns from the error
        raise ContextOverflowError("too long", context_tokens=1500, prompt_tokens=5000)

    provider.enqueue(overflow, "Yes.")
    summarizes(provider)
    h.turn(cid, "Still there?")
    assert h.of(Finished)
    notices = [n.text for n in h.of(Notice)]
    assert notices == [NO_TOOLS_NOTICE, "The prompt was too long for the model; shortened."]
    last = provider.requests[-1]
    assert last["tools"] is None  # the tool schemas do not fit in 1,500
    assert prompt_size(last) <= 0.6 * 1500
    assert last["messages"][-1]["content"] == "Still there?"


def test_an_overflow_without_numbers_halves_the_budget(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=False)
    cid = long_conversation(h)
    too_long = ContextOverflowError("too long", context_tokens=None, prompt_tokens=None)
    provider.enqueue(too_long, "Yes.")
    summarizes(provider)
    h.turn(cid, "Still there?")
    sizes = [prompt_size(r) for r in provider.requests if r["tools"]]
    assert sizes[1] < sizes[0]
    assert h.of(Finished)


def test_an_overflow_that_persists_fails_with_advice(h: Harness) -> None:
    too_long = ContextOverflowError("too long", context_tokens=512, prompt_tokens=900)

    def learn_the_window(messages: list[dict[str, Any]]) -> ChatResponse:
        h.provider.window = 512
        raise too_long

    # The second prompt is smaller (no tools), the third would be the same: it is not sent.
    h.provider.enqueue(learn_the_window, too_long)
    h.turn(h.conversations.create().id, "Hello " * 1000)
    (failed,) = h.of(Failed)
    assert "context window of 512 tokens" in failed.error
    assert "prompt budget in Settings" in failed.error
    assert h.provider.requests[0]["tools"] and not h.provider.requests[1]["tools"]


def test_a_cut_off_reply_is_marked_and_saved_so(h: Harness) -> None:
    h.provider.enqueue(ChatResponse("A long story that stops in the", (), "length"))
    cid = h.conversations.create().id
    h.turn(cid, "Tell me a story")
    (finished,) = h.of(Finished)
    assert finished.cut_off
    reply = h.conversations.load(cid).messages[-1]
    assert reply.cut_off
    assert reply.to_json()["cut_off"] is True


def test_an_empty_reply_fails_and_saves_nothing(h: Harness) -> None:
    h.provider.enqueue(ChatResponse("  ", (), "stop"))
    cid = h.conversations.create().id
    h.turn(cid, "Hello?")
    (failed,) = h.of(Failed)
    assert failed.error == EMPTY_REPLY
    assert [m.role for m in h.conversations.load(cid).messages] == ["user"]


def test_the_curator_asks_for_bounded_answers(data_dir: Path, provider: ScriptedProvider) -> None:
    h = Harness(data_dir, provider)
    provider.enqueue(
        "Nice.",
        '{"memories": [{"kind": "fact", "text": "The user has a cat.", "topic": "pets"}]}',
        "The user has a cat.",
    )
    h.turn(h.conversations.create().id, "I have a cat")
    extract, topic = provider.requests[1:3]
    assert extract["max_tokens"] == EXTRACT_MAX_TOKENS
    assert topic["max_tokens"] == TOPIC_MAX_TOKENS


def test_memory_upkeep_is_handed_to_the_runner_after_the_reply(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=True)
    queued: list[Upkeep] = []
    h.agent.upkeep = queued.append
    cid = h.conversations.create().id
    extraction = {"memories": [{"kind": "fact", "text": "The user has a cat", "topic": "pets"}]}
    h.provider.enqueue("Nice cat!", json.dumps(extraction), "The user has a cat.")
    h.turn(cid, "I have a cat")
    assert len(h.of(Finished)) == 1 and len(h.provider.requests) == 1  # the turn did not wait
    (job,) = queued
    job(CancelToken())
    (item,) = h.memory.all()
    assert item.text == "The user has a cat"


def test_a_stopped_reply_is_marked(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue(ProviderError("the server hung up"))
    h.turn(cid, "first")
    assert h.conversations.load(cid).messages[-1].role == "user"  # nothing shown, nothing saved
    cancel = CancelToken()
    h.provider.enqueue("one two three four")
    h.agent.run(cid, "second", lambda e: isinstance(e, TextDelta) and cancel.cancel(), cancel)
    last = h.conversations.load(cid).messages[-1]
    assert last.role == "assistant" and last.stop_reason == "stopped"


def test_retry_adds_a_sibling_reply_and_keeps_the_first(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue("First answer.", "Second answer.")
    h.turn(cid, "Question?")
    h.agent.retry(cid, h.events.append, CancelToken())
    conversation = h.conversations.load(cid)
    user, first, second = conversation.messages
    assert first.parent_id == second.parent_id == user.id
    assert [m.content for m in conversation.branch()] == ["Question?", "Second answer."]
    assert [m.id for m in conversation.versions()[second.id]] == [first.id, second.id]
    assert h.provider.requests[1]["messages"][-1]["content"] == "Question?"


def test_edit_branches_from_the_parent_and_the_prompt_follows_the_branch(h: Harness) -> None:
    cid = h.conversations.create().id
    h.provider.enqueue("A1.", "A2.", "A2 edited.")
    h.turn(cid, "Q1")
    h.turn(cid, "Q2")
    q2 = h.conversations.load(cid).branch()[2]
    h.agent.edit(cid, q2.id, "Q2 again", h.events.append, CancelToken())
    conversation = h.conversations.load(cid)
    assert [m.content for m in conversation.branch()] == ["Q1", "A1.", "Q2 again", "A2 edited."]
    assert len(conversation.messages) == 6
    sent = [m["content"] for m in h.provider.requests[-1]["messages"][1:]]
    assert sent == ["Q1", "A1.", "Q2 again"]
    old_leaf = conversation.newest_leaf_under(q2.id)
    h.conversations.set_leaf(cid, old_leaf)
    assert [m.content for m in h.conversations.load(cid).branch()] == ["Q1", "A1.", "Q2", "A2."]


def test_an_overflow_after_tool_steps_leaves_older_steps_out(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    h = Harness(data_dir, provider, auto_memories=False)
    summarizes(provider)
    step = calls(("no_such_tool", '{"pad": "' + "words " * 800 + '"}'))

    def overflow(messages: list[dict[str, Any]]) -> ChatResponse:
        provider.window = 3000  # what the provider learns from the error
        raise ContextOverflowError("too long", context_tokens=3000, prompt_tokens=4500)

    provider.enqueue(step, step, step, overflow, "Done.")
    h.turn(h.conversations.create().id, "Go")
    assert h.of(Finished)[0].text == "Done."
    sent = [prompt_size(r) for r in provider.requests if not is_summary(r["messages"])]
    assert sent[-1] < sent[-2]  # the retry left the older steps out
    assert prompt_size(provider.requests[-1]) <= 0.6 * 3000


class BigTools:
    """An MCP server's tools whose schemas alone would fill a small model's prompt."""

    def tools_for(self, query: str) -> tuple[list[Tool], frozenset[str]]:
        def lookup(arguments: dict[str, Any], context: object) -> str:
            return "found"

        big = Tool(
            "shop__lookup",
            "Look up an order. " + "It knows every order ever made. " * 300,
            {"type": "object", "properties": {}},
            lookup,
            frozenset({"context"}),
            check=dict,
        )
        return [big], frozenset()

    def trust(self, tool: Tool) -> None:
        """Nothing asks first here."""


def test_a_small_window_leaves_out_the_servers_tools_before_its_own(
    data_dir: Path, provider: ScriptedProvider
) -> None:
    """With a 4,096-token model and an MCP server, every tool went, even remember and recall:
    now the servers' tools go first, said once, and Assistant's own stay."""
    h = Harness(data_dir, provider, auto_memories=False)
    h.agent.extra_tools = BigTools()
    provider.window = 4096
    provider.enqueue("Hello.")
    cid = h.conversations.create().id
    h.turn(cid, "Hi")
    offered = [t["function"]["name"] for t in provider.requests[-1]["tools"]]
    assert "remember" in offered and "shop__lookup" not in offered
    assert [n.text for n in h.of(Notice)] == [EXTRA_TOOLS_LEFT_OUT_NOTICE]
    provider.window = None  # a large model: the server's tool is offered
    provider.enqueue("Hello again.")
    h.turn(cid, "Hi again")
    offered = [t["function"]["name"] for t in provider.requests[-1]["tools"]]
    assert "shop__lookup" in offered and h.of(Notice) == []
