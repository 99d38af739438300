"""Reflection: insights from related memories, after N new ones or on demand, capped per day,
never in a temporary chat, never one the user forgot."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.curator import EXTRACT_PROMPT, TOPIC_PROMPT, Curator
from assistant.agent.decisions import DECIDE_PROMPT
from assistant.agent.events import AgentEvent, MemoryEdited
from assistant.agent.loop import Agent, AgentConfig
from assistant.agent.reflection import (
    MAX_INSIGHTS,
    REFLECT_MAX_TOKENS,
    REFLECT_PROMPT,
    UNREADABLE_NOTE,
    Reflector,
    parse_insights,
)
from assistant.errors import ProviderError
from assistant.memory import ConversationStore, MemoryEdit, MemoryItem, SemanticMemory, TopicStore
from assistant.memory.working import WorkingMemoryStore
from assistant.settings import Settings
from assistant.timestamps import now_utc
from assistant.workspace import Workspace
from tests.desktop import configure
from tests.embedders import HashEmbedder
from tests.fake_openai import FakeOpenAI
from tests.scripted import ScriptedProvider

LISBON = [
    "The user is learning Portuguese",
    "The user looked at flats in Lisbon's Alfama district",
    "The user asked their employer about working remotely from Lisbon",
    "The user plans to sell their car in March",
]
INSIGHT = "The user is preparing to move to Lisbon in spring"


class Clock:
    """The time, moved on by the test."""

    def __init__(self) -> None:
        self.ahead = timedelta()

    def __call__(self) -> datetime:
        return now_utc() + self.ahead


class Rig:
    def __init__(self, root: Path, **limits: int) -> None:
        self.provider = ScriptedProvider()
        self.memory = SemanticMemory.open(root / "memory", HashEmbedder())
        self.topics = TopicStore(root / "memory")
        self.clock = Clock()
        self.reflector = Reflector(
            self.provider, self.memory, self.topics, clock=self.clock, **limits
        )
        self.edits: list[MemoryEdit] = []

    def learn(self, *texts: str, topic: str = "lisbon") -> list[MemoryItem]:
        items = [self.memory.add(t, origin="curator") for t in texts]
        for item in items:
            self.topics.add_memory(topic, item.id)
        return items

    def insights(self, *insights: tuple[str, list[str]]) -> None:
        self.provider.enqueue(
            json.dumps({"insights": [{"text": t, "rests_on": ids} for t, ids in insights]})
        )

    def written(self) -> list[MemoryItem]:
        return [i for i in self.memory.all() if i.kind == "insight"]


@pytest.fixture
def rig(data_dir: Path) -> Iterator[Rig]:
    made = Rig(data_dir, after_memories=4, per_day=3)
    yield made
    made.provider.assert_all_used()
    made.memory.close()


def test_an_insight_rests_on_the_memories_it_names(rig: Rig) -> None:
    facts = rig.learn(*LISBON)
    rig.insights((INSIGHT, [facts[1].id, f"[{facts[2].id}]", "not-shown"]))
    reflection = rig.reflector.reflect("lisbon", on_edit=rig.edits.append)
    (insight,) = reflection.insights
    assert insight.text == INSIGHT and insight.kind == "insight"
    assert insight.origin == "reflection" and insight.rests_on == (facts[1].id, facts[2].id)
    assert rig.memory.get(insight.id) == insight and insight.is_current  # forgettable as any
    assert [e.action for e in rig.edits] == ["remembered"]
    topic = rig.topics.get("lisbon")
    assert topic is not None and insight.id in topic.memory_ids
    (request,) = rig.provider.requests
    assert request["messages"][0]["content"] == REFLECT_PROMPT and request["json_mode"]
    assert request["max_tokens"] == REFLECT_MAX_TOKENS
    shown = request["messages"][1]["content"]
    assert all(f"[{f.id}]" in shown for f in facts) and shown.startswith("<data")


def test_the_busiest_topic_is_read_without_one(rig: Rig) -> None:
    rig.learn(
        "The user plays tennis", "The user bought a racket", "The user has a coach", topic="tennis"
    )
    facts = rig.learn(*LISBON)
    rig.insights((INSIGHT, [facts[0].id, facts[1].id]))
    rig.reflector.reflect()
    shown = rig.provider.requests[0]["messages"][1]["content"]
    assert "Alfama" in shown and "tennis" not in shown


def test_no_more_than_the_cap_a_day(rig: Rig) -> None:
    facts = rig.learn(*LISBON)
    ids = [f.id for f in facts]
    rig.insights(
        (INSIGHT, ids[:2]),
        ("The user wants a life by the sea", ids[1:3]),
    )
    assert len(rig.reflector.reflect("lisbon").insights) == 2
    rig.insights(
        ("The user is changing their whole life", ids[:3]),
        ("The user values flexibility at work", ids[2:4]),
    )
    assert len(rig.reflector.reflect("lisbon").insights) == 1  # 3 a day
    late = rig.reflector.reflect("lisbon")
    assert late.insights == [] and "more tomorrow" in late.note
    assert len(rig.provider.requests) == 2  # the model was not asked a third time
    rig.clock.ahead += timedelta(days=1)
    assert rig.reflector.left_today() == 3
    assert len(rig.written()) == 3


def test_an_insight_already_written_is_not_written_twice(rig: Rig) -> None:
    facts = rig.learn(*LISBON)
    for _ in range(2):
        rig.insights((INSIGHT, [facts[0].id, facts[1].id]))
        rig.reflector.reflect("lisbon")
    assert [i.text for i in rig.written()] == [INSIGHT]
    shown = rig.provider.requests[1]["messages"][1]["content"]
    assert "Insights already written" in shown and INSIGHT in shown


def test_an_answer_that_is_not_json_says_so_rather_than_no_insight(rig: Rig) -> None:
    facts = rig.learn(*LISBON)
    rig.provider.enqueue("Sure! The user seems to be moving to Lisbon.")
    unreadable = rig.reflector.reflect("lisbon")
    assert unreadable.insights == [] and unreadable.note == UNREADABLE_NOTE
    rig.insights((INSIGHT, [facts[0].id]))  # JSON, but resting on one memory: dropped
    nothing_new = rig.reflector.reflect("lisbon")
    assert nothing_new.insights == [] and nothing_new.note == "No new insight in these memories."
    assert rig.written() == []


def test_too_few_memories_are_not_reflected_on(rig: Rig) -> None:
    rig.learn(*LISBON[:2])
    reflection = rig.reflector.reflect("lisbon")
    assert reflection.insights == [] and "Not enough memories" in reflection.note
    assert not rig.provider.requests


def test_due_after_n_new_memories_and_not_again_at_once(rig: Rig) -> None:
    rig.learn(*LISBON[:3])
    assert not rig.reflector.due()
    rig.learn(LISBON[3])
    assert rig.reflector.due()
    rig.provider.enqueue('{"insights": []}')  # nothing to say: not asked again at once
    assert rig.reflector.reflect_if_due() == []
    assert not rig.reflector.due()
    rig.learn("The user booked a flight", "The user packs boxes", "The user said goodbye")
    assert not rig.reflector.due()
    rig.learn("The user gave notice on the flat")
    assert rig.reflector.due()
    rig.provider.enqueue(ProviderError("the server is down"))
    assert rig.reflector.reflect_if_due() == []  # an error is logged, never raised


@pytest.mark.parametrize(
    ("answer", "count"),
    [
        ("not json", 0),
        ('{"insights": [null]}', 0),
        ('{"insights": "many"}', 0),
        ('{"insights": [{"text": "x", "rests_on": ["a"]}]}', 0),  # one memory is no insight
        ('{"insights": [{"text": "x", "rests_on": "a b"}]}', 0),
        ('{"insights": [{"text": 5, "rests_on": ["a", "b"]}]}', 0),
        ('{"insights": [{"text": "x", "rests_on": ["a", "zz", "b"], "importance": "hi"}]}', 1),
        ('```json\n{"insights": [{"text": "x", "rests_on": ["a", "b"]}]}\n```', 1),
        (
            json.dumps({"insights": [{"text": f"x{i}", "rests_on": ["a", "b"]} for i in range(9)]}),
            MAX_INSIGHTS,
        ),
    ],
)
def test_insight_answers_are_parsed_defensively(
    answer: str, count: int, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="assistant.agent.reflection"):
        insights = parse_insights(answer, ["a", "b", "c"])
    assert len(insights) == count
    for insight in insights:
        assert set(insight.rests_on) <= {"a", "b", "c"} and 0 <= insight.importance <= 1
    if count == 0:
        assert caplog.records


# --- after a turn: the agent's upkeep ---------------------------------------------------------


def agent_rig(
    root: Path, provider: ScriptedProvider
) -> tuple[Agent, SemanticMemory, ConversationStore]:
    memory = SemanticMemory.open(root / "memory", HashEmbedder())
    topics = TopicStore(root / "memory")
    conversations = ConversationStore(root)
    agent = Agent(
        provider,
        memory,
        conversations,
        WorkingMemoryStore(root / "memory"),
        config=AgentConfig(auto_memories=True),
        curator=Curator(provider, memory, topics),
        reflector=Reflector(provider, memory, topics, after_memories=3, per_day=3),
    )
    for text in LISBON[:3]:
        topics.add_memory("lisbon", memory.add(text, origin="curator").id)
    return agent, memory, conversations


def extraction(text: str) -> str:
    return json.dumps({"memories": [{"kind": "fact", "text": text, "topic": "lisbon"}]})


def test_a_turn_that_makes_reflection_due_reflects(data_dir: Path) -> None:
    provider = ScriptedProvider()
    agent, memory, conversations = agent_rig(data_dir, provider)
    provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
    provider.always(lambda m: m[0]["content"] == EXTRACT_PROMPT, extraction("The user sings"))

    def insight(messages: list[dict[str, Any]]) -> str:
        ids = [i.id for i in memory.all()][:2]
        return json.dumps({"insights": [{"text": INSIGHT, "rests_on": ids}]})

    provider.always(lambda m: m[0]["content"] == REFLECT_PROMPT, insight)
    provider.always(lambda m: m[0]["content"] == DECIDE_PROMPT, '{"decisions": []}')
    events: list[AgentEvent] = []
    provider.enqueue("Nice.")
    agent.run(conversations.create().id, "I sing in a choir.", events.append, CancelToken())
    edits = [e.edit for e in events if isinstance(e, MemoryEdited)]
    assert [e.after.text for e in edits] == ["The user sings", INSIGHT]
    assert [e.after.origin for e in edits] == ["curator", "reflection"]
    memory.close()


def test_a_temporary_chat_never_reflects(data_dir: Path) -> None:
    provider = ScriptedProvider()
    agent, memory, conversations = agent_rig(data_dir, provider)
    memory.add("One more thing about Lisbon")
    provider.enqueue("Sure.")
    agent.run(conversations.create(temporary=True).id, "Hi", lambda e: None, CancelToken())
    assert len(provider.requests) == 1  # the reply only: no curator, no reflection
    provider.assert_all_used()
    memory.close()


# --- on demand: through the workspace and a real OpenAI client -------------------------------


def test_reflect_on_demand_through_the_openai_api(data_dir: Path, fake_openai: FakeOpenAI) -> None:
    configure(data_dir, fake_openai, embeddings=False, reflection_per_day=1)
    workspace = Workspace.open(data_dir)
    try:
        facts = [workspace.memory.add(t, origin="curator") for t in LISBON]
        for fact in facts:
            workspace.topics.add_memory("Lisbon", fact.id)

        def answer(request: dict[str, Any]) -> str:
            assert request["messages"][0]["content"] == REFLECT_PROMPT
            assert request["response_format"] == {"type": "json_object"}
            return json.dumps(
                {"insights": [{"text": INSIGHT, "rests_on": [facts[0].id, facts[3].id]}]}
            )

        fake_openai.enqueue(answer)
        (insight,) = workspace.reflect("Lisbon").insights
        assert insight.rests_on == (facts[0].id, facts[3].id)
        assert "1 insight a day" in workspace.reflect("Lisbon").note
        assert len(fake_openai.requests_to("/chat/completions")) == 1
    finally:
        workspace.close()
    reopened = Workspace.open(data_dir)
    try:
        (kept,) = [i for i in reopened.memory.all() if i.kind == "insight"]
        assert kept.origin == "reflection" and kept.rests_on == insight.rests_on
    finally:
        reopened.close()


def test_the_settings_say_when_and_how_much() -> None:
    assert (Settings().reflection_after_memories, Settings().reflection_per_day) == (10, 3)
    settings, warnings = Settings.from_json(
        {"reflection_after_memories": 25, "reflection_per_day": 0}
    )
    assert settings.reflection_after_memories == 25 and settings.reflection_per_day == 3
    assert len(warnings) == 1 and "reflection_per_day" in warnings[0]


def test_a_forgotten_insight_is_never_written_again(rig: Rig) -> None:
    facts = rig.learn(*LISBON)
    rig.insights((INSIGHT, [facts[0].id, facts[1].id]))
    (insight,) = rig.reflector.reflect("lisbon").insights
    rig.memory.forget(insight.id)
    rig.clock.ahead += timedelta(days=1)
    rig.insights((INSIGHT.lower() + ".", [facts[0].id, facts[1].id]))
    again = rig.reflector.reflect("lisbon")
    assert again.insights == [] and rig.written() == []
