"""The curator against existing memories: add, refine, supersede or nothing; forgotten facts stay
forgotten; pinned memories stay as they are; every change reports an edit with Undo."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.candidates import parse_candidates
from assistant.agent.curator import EXTRACT_PROMPT, RELATED_K, TOPIC_PROMPT, Curator
from assistant.agent.decisions import DECIDE_MAX_TOKENS, DECIDE_PROMPT
from assistant.agent.events import AgentEvent, MemoryEdited
from assistant.agent.loop import Agent, AgentConfig
from assistant.errors import ProviderError
from assistant.memory import ConversationStore, MemoryEdit, Message, SemanticMemory, TopicStore
from assistant.memory.edits import undo
from assistant.memory.working import WorkingMemoryStore
from assistant.timestamps import now_utc
from assistant.workspace import Workspace
from tests.desktop import configure
from tests.embedders import HashEmbedder
from tests.fake_openai import FakeOpenAI
from tests.scripted import Script, ScriptedProvider

USER = Message("u1", None, "user", "I moved to Lisbon last week.", "2026-03-03T10:00:00.000000Z")
REPLY = Message("a1", "u1", "assistant", "Congratulations!", "2026-03-03T10:00:01.000000Z")


class Rig:
    """A curator on a real store (hashed-words embedder) and a scripted model."""

    def __init__(self, root: Path, *, embedder: bool = True) -> None:
        self.provider = ScriptedProvider()
        self.provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
        self.memory = SemanticMemory.open(root / "memory", HashEmbedder() if embedder else None)
        self.topics = TopicStore(root / "memory")
        self.curator = Curator(self.provider, self.memory, self.topics)
        self.edits: list[MemoryEdit] = []

    def extracts(self, *texts: str, kind: str = "fact") -> None:
        memories = [{"kind": kind, "text": t, "importance": 0.6, "topic": "home"} for t in texts]
        self.provider.enqueue(json.dumps({"memories": memories}))

    def decides(self, *decisions: dict[str, Any] | Script) -> None:
        for decision in decisions:
            self.provider.enqueue(
                json.dumps({"decisions": [decision]}) if isinstance(decision, dict) else decision
            )

    def process(self) -> list[Any]:
        return self.curator.process("c1", USER, REPLY, self.edits.append)

    def asked(self, prompt: str) -> list[dict[str, Any]]:
        return [r for r in self.provider.requests if r["messages"][0]["content"] == prompt]


@pytest.fixture
def rig(data_dir: Path) -> Iterator[Rig]:
    made = Rig(data_dir)
    yield made
    made.provider.assert_all_used()
    made.memory.close()


def test_a_move_supersedes_the_old_home_and_undo_brings_it_back(rig: Rig) -> None:
    porto = rig.memory.add("The user lives in Porto", origin="curator")
    rig.extracts("The user lives in Lisbon")
    rig.decides(
        {"candidate": 0, "action": "SUPERSEDE", "target": porto.id, "reason": "the user moved"}
    )
    (lisbon,) = rig.process()
    old = rig.memory.get(porto.id)
    assert old is not None and not old.is_current and old.superseded_by == lisbon.id
    assert old.valid_to is not None
    assert lisbon.supersedes == (porto.id,) and lisbon.origin == "curator" and lisbon.is_current
    (superseded,) = [e for e in rig.memory.history(porto.id) if e.type == "superseded"]
    assert superseded.reason == "the user moved" and superseded.related_id == lisbon.id
    assert [i.text for i in rig.memory.all()] == ["The user lives in Lisbon"]
    (edit,) = rig.edits
    assert edit.action == "superseded" and edit.before == porto and edit.after == lisbon
    assert edit.describe() == "Replaced “The user lives in Porto” with “The user lives in Lisbon”"
    undo(rig.memory, edit)
    back = rig.memory.get(porto.id)
    assert back is not None and back.is_current and back.superseded_by is None
    assert [i.text for i in rig.memory.all()] == ["The user lives in Porto"]


def test_an_update_refines_the_same_memory_and_keeps_what_it_said(rig: Rig) -> None:
    job = rig.memory.add("The user works at Google")
    rig.extracts("The user works on the Maps team")
    rig.decides(
        {
            "candidate": 0,
            "action": "UPDATE",
            "target": job.id,
            "text": "The user works on the Maps team at Google",
        }
    )
    (item,) = rig.process()
    assert item.id == job.id and item.text == "The user works on the Maps team at Google"
    merged = [e for e in rig.memory.history(job.id) if e.type == "merged"]
    assert merged and merged[0].text_before == "The user works at Google"
    assert merged[0].by == "curator"
    (edit,) = rig.edits
    assert edit.action == "updated" and edit.before == job
    undo(rig.memory, edit)
    assert rig.memory.get(job.id).text == "The user works at Google"  # type: ignore[union-attr]


def test_nothing_changes_nothing(rig: Rig) -> None:
    allergy = rig.memory.add("The user is allergic to peanuts")
    rig.extracts("The user has a peanut allergy")
    rig.decides({"candidate": 0, "action": "NOTHING", "target": allergy.id})
    assert rig.process() == []
    assert rig.memory.all() == [allergy] and not rig.edits


def test_nothing_related_is_added_without_asking(rig: Rig) -> None:
    rig.memory.add("Ana is my sister")
    rig.extracts("The user plays the cello")
    (item,) = rig.process()
    assert item.text == "The user plays the cello" and item.origin == "curator"
    assert item.source is not None and item.source.message_id == USER.id
    assert not rig.asked(DECIDE_PROMPT)
    assert [e.action for e in rig.edits] == ["remembered"]


def test_a_memory_said_word_for_word_is_not_asked_about(rig: Rig) -> None:
    rig.memory.add("The user lives in Porto.")
    rig.extracts("the user lives in  Porto")
    assert rig.process() == [] and not rig.asked(DECIDE_PROMPT)


def test_one_request_for_all_candidates_shows_each_its_related_memories(rig: Rig) -> None:
    porto = rig.memory.add("The user lives in Porto")
    cat = rig.memory.add("The user has a cat called Miso")
    rig.extracts("The user lives in Lisbon", "The user has a cat named Miso", "The user sings")
    rig.decides(
        json.dumps(
            {
                "decisions": [
                    {"candidate": 1, "action": "NOTHING", "target": cat.id},
                    {"candidate": 0, "action": "SUPERSEDE", "target": porto.id, "reason": "moved"},
                ]
            }
        )
    )
    stored = rig.process()
    assert [i.text for i in stored] == ["The user lives in Lisbon", "The user sings"]
    (request,) = rig.asked(DECIDE_PROMPT)
    asked = request["messages"][1]["content"]
    assert request["json_mode"] and request["max_tokens"] == DECIDE_MAX_TOKENS
    first, second = asked.split("Candidate 1:")
    assert porto.id in first and cat.id in second and "Candidate 2" in second
    assert "I moved to Lisbon" in asked  # the exchange, for the user's own words


def test_related_memories_are_found_by_words_too(data_dir: Path) -> None:
    """Keyword-only (no embedder): the hybrid search still finds what to compare with."""
    rig = Rig(data_dir, embedder=False)
    home = rig.memory.add("The user rents a flat on Rua das Flores in Porto")
    rig.extracts("The user rents a flat on Avenida da Boavista in Porto")
    rig.decides({"candidate": 0, "action": "SUPERSEDE", "target": home.id, "reason": "moved"})
    rig.process()
    assert not rig.memory.get(home.id).is_current  # type: ignore[union-attr]
    rig.provider.assert_all_used()


def test_at_most_a_few_related_memories_are_shown(rig: Rig) -> None:
    for i in range(12):
        rig.memory.add(f"The user visited Lisbon in year {2000 + i}")
    rig.extracts("The user lives in Lisbon")
    rig.decides({"candidate": 0, "action": "ADD"})
    rig.process()
    asked = rig.asked(DECIDE_PROMPT)[0]["messages"][1]["content"]
    assert asked.count("] (fact) ") == RELATED_K


@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        '{"decisions": [{"candidate": 0, "action": "SUPERSEDE", "target": "made-up-id"}]}',
        '{"decisions": [{"action": "ADD"}]}',
        ProviderError("the server hung up"),
    ],
)
def test_without_a_valid_decision_a_near_duplicate_is_not_added_again(
    rig: Rig, answer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    cat = rig.memory.add("The user has a cat called Miso")
    porto = rig.memory.add("The user lives in Porto")
    rig.extracts("The user has a cat called Miso too", "The user lives in Lisbon")
    rig.decides(answer)
    with caplog.at_level(logging.INFO, logger="assistant.agent"):
        stored = rig.process()
    # The near-duplicate is nothing; the other candidate is kept (added), never lost.
    assert [i.text for i in stored] == ["The user lives in Lisbon"]
    assert rig.memory.get(porto.id).is_current  # type: ignore[union-attr]
    assert rig.memory.get(cat.id).text == cat.text  # type: ignore[union-attr]
    assert "falling back" in caplog.text or "could not ask" in caplog.text


def test_a_pinned_memory_is_neither_updated_nor_superseded(rig: Rig) -> None:
    pinned = rig.memory.add("The user is allergic to penicillin", pinned=True)
    for action in ("UPDATE", "SUPERSEDE"):
        rig.extracts("The user is not allergic to penicillin")
        rig.decides({"candidate": 0, "action": action, "target": pinned.id, "text": "x"})
        assert rig.process() == []
    assert rig.memory.all() == [pinned] and not rig.edits


def test_the_prompt_shows_current_facts_only(data_dir: Path) -> None:
    provider = ScriptedProvider()
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    conversations = ConversationStore(data_dir)
    agent = Agent(provider, memory, conversations, WorkingMemoryStore(data_dir / "memory"))
    porto = memory.add("The user lives in Porto", pinned=False)
    lisbon = memory.supersede(porto.id, "The user lives in Lisbon", by="curator", reason="moved")
    provider.enqueue("In Lisbon.")
    agent.run(conversations.create().id, "Where do I live?", lambda e: None, CancelToken())
    system = provider.requests[0]["messages"][0]["content"]
    assert f"[{lisbon.id}]" in system and porto.id not in system and "Porto" not in system
    memory.close()


def test_a_candidate_extracted_twice_is_stored_once(rig: Rig) -> None:
    rig.extracts("The user plays the cello", "The user plays the cello.")
    assert [i.text for i in rig.process()] == ["The user plays the cello"]
    assert len(rig.memory.all()) == 1


def test_a_move_end_to_end_through_the_openai_api(data_dir: Path, fake_openai: FakeOpenAI) -> None:
    configure(data_dir, fake_openai, embeddings=False, auto_memories=True)
    workspace = Workspace.open(data_dir)
    try:
        porto = workspace.memory.add("The user lives in Porto")
        extraction = {"memories": [{"kind": "fact", "text": "The user lives in Lisbon"}]}

        def decide(request: dict[str, Any]) -> str:
            assert request["messages"][0]["content"] == DECIDE_PROMPT
            assert f"[{porto.id}]" in request["messages"][1]["content"]
            target = {"candidate": 0, "action": "SUPERSEDE", "target": porto.id, "reason": "moved"}
            return json.dumps({"decisions": [target]})

        fake_openai.enqueue("Welcome to Lisbon!", json.dumps(extraction), decide, "Home: Lisbon.")
        events: list[AgentEvent] = []
        cid = workspace.conversations.create().id
        workspace.agent().run(cid, "I moved to Lisbon.", events.append, CancelToken())
        assert fake_openai.pending == 0
        (edit,) = [e.edit for e in events if isinstance(e, MemoryEdited)]
        assert edit.action == "superseded" and edit.before is not None
        assert edit.before.id == porto.id
        assert [i.text for i in workspace.memory.all()] == ["The user lives in Lisbon"]
        old = workspace.memory.get(porto.id)
        assert old is not None and old.superseded_by == edit.after.id
    finally:
        workspace.close()


def test_a_forgotten_fact_is_never_shown_to_the_model_or_learned_again(rig: Rig) -> None:
    rig.extracts("The user's bank PIN hint is the cat's birthday")
    (item,) = rig.process()
    rig.memory.forget(item.id)
    rig.extracts("The user's bank PIN hint is the cat's birthday", "The user likes tea")
    stored = rig.process()
    assert [i.text for i in stored] == ["The user likes tea"]
    assert not rig.asked(DECIDE_PROMPT)
    rig.extracts("the user's bank PIN hint is the cat's birthday.")
    assert rig.process() == []


def test_replaying_an_exchange_after_a_forget_brings_nothing_back(data_dir: Path) -> None:
    """The original exchange, replayed through the agent after a forget (issue 14)."""
    provider = ScriptedProvider()
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    conversations = ConversationStore(data_dir)
    topics = TopicStore(data_dir / "memory")
    agent = Agent(
        provider,
        memory,
        conversations,
        WorkingMemoryStore(data_dir / "memory"),
        config=AgentConfig(auto_memories=True),
        curator=Curator(provider, memory, topics),
    )
    extraction = json.dumps(
        {"memories": [{"kind": "fact", "text": "The user's ex is called Jordan", "topic": "x"}]}
    )
    provider.always(lambda m: m[0]["content"] == EXTRACT_PROMPT, extraction)
    provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
    cid = conversations.create().id
    events: list[AgentEvent] = []
    provider.enqueue("Noted.")
    agent.run(cid, "My ex is called Jordan.", events.append, CancelToken())
    (learned,) = memory.all()
    memory.forget(learned.id)
    for _ in range(2):  # the same exchange again, in the same and in a new conversation
        provider.enqueue("Noted.")
        agent.run(cid, "My ex is called Jordan.", events.append, CancelToken())
        cid = conversations.create().id
    memory.close()
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())  # after a restart too
    agent.memory = memory
    agent.curator = Curator(provider, memory, topics)
    provider.enqueue("Noted.")
    agent.run(cid, "My ex is called Jordan.", events.append, CancelToken())
    assert memory.all() == []
    assert [e.edit.action for e in events if isinstance(e, MemoryEdited)] == ["remembered"]
    provider.assert_all_used()
    memory.close()


def test_a_long_memory_is_shown_cut_and_never_rewritten_from_the_cut(rig: Rig) -> None:
    long = rig.memory.add("The user works at Google. " + "They like the canteen. " * 40)
    rig.extracts("The user works at Google on the Maps team")
    rig.decides({"candidate": 0, "action": "UPDATE", "target": long.id, "text": "Cut short"})
    (added,) = rig.process()
    asked = rig.asked(DECIDE_PROMPT)[0]["messages"][1]["content"]
    assert long.id in asked and "…" in asked and long.text not in asked
    assert rig.memory.get(long.id) == long  # kept whole
    assert added.text == "The user works at Google on the Maps team"


def test_a_target_forgotten_meanwhile_is_not_changed(rig: Rig) -> None:
    porto = rig.memory.add("The user lives in Porto")

    def forget_then_supersede(messages: list[dict[str, Any]]) -> str:
        rig.memory.forget(porto.id)  # the user forgets it while the model decides
        target = {"candidate": 0, "action": "SUPERSEDE", "target": porto.id, "reason": "moved"}
        return json.dumps({"decisions": [target]})

    # (Not "lives in Lisbon": so close to the forgotten fact, it would wait for the user's yes.)
    rig.extracts("The user moved to a flat in Lisbon")
    rig.decides(forget_then_supersede)
    (added,) = rig.process()
    assert added.supersedes == () and rig.memory.get(porto.id).state == "forgotten"  # type: ignore[union-attr]


def test_a_move_the_user_dates_ends_the_old_home_that_day(rig: Rig) -> None:
    porto = rig.memory.add("The user lives in Porto")
    week_ago = (now_utc().astimezone() - timedelta(days=7)).date()
    rig.extracts("The user lives in Lisbon")
    rig.decides(
        {
            "candidate": 0,
            "action": "SUPERSEDE",
            "target": porto.id,
            "since": f"{week_ago:%Y-%m-%d}",
            "reason": "moved last week",
        }
    )
    (lisbon,) = rig.process()
    old = rig.memory.get(porto.id)
    assert lisbon.valid_from is not None and lisbon.valid_from.date() == week_ago
    assert old is not None and old.valid_to == lisbon.valid_from
    asked = rig.asked(DECIDE_PROMPT)[0]["messages"][1]["content"]
    today = f"{now_utc().astimezone():%Y-%m-%d}"
    assert f"Today is {today}." in asked or today == f"{week_ago + timedelta(days=8)}"  # midnight


def test_an_exchange_yields_facts_not_insights() -> None:
    """Insights come from reflection over several memories; an extracted one is kept as a fact."""
    assert "insight" not in EXTRACT_PROMPT
    answer = '{"memories": [{"kind": "insight", "text": "The user likes hills", "topic": "walks"}]}'
    assert [(c.kind, c.text) for c in parse_candidates(answer)] == [
        ("fact", "The user likes hills")
    ]
