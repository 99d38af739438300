"""One budget for every change the model makes to memory in a reply: tools, curator and reflection
together, adds with their own limit; the rest is offered in the chat, kept with the conversation.
A question about a pinned memory survives turns and restarts; only an explicit yes changes it."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.change_budget import (
    MAX_ADDS_PER_REPLY,
    MAX_CHANGES_PER_REPLY,
    MAX_OFFERS_PER_REPLY,
    ReplyBudget,
)
from assistant.agent.consent import explicit_answer
from assistant.agent.curator import TOPIC_PROMPT, Curator
from assistant.agent.decisions import DECIDE_PROMPT
from assistant.agent.events import AgentEvent, MemoryEdited, MemorySuggested, ToolCallFinished
from assistant.agent.loop import Agent, AgentConfig
from assistant.agent.reflection import Reflector
from assistant.memory import ConversationStore, SemanticMemory, TopicStore
from assistant.memory.pending import PendingChange, apply_pending
from assistant.memory.working import WorkingMemoryStore
from tests.embedders import HashEmbedder
from tests.scripted import ScriptedProvider, calls

WORDS = (
    "amber basil cedar dune ember fjord grove harbor iris juniper kelp lagoon maple nectar "
    "orchid pebble quartz reef saffron thistle umber violet willow yarrow zephyr bramble "
    "cobalt delta falcon garnet heron indigo jasper kestrel lupin marble nutmeg onyx pine"
).split()


def unrelated_facts(n: int, seed: int = 0) -> list[str]:
    """`n` facts that share no word (so the curator adds each without asking)."""
    rng = random.Random(seed)
    words = WORDS[:]
    rng.shuffle(words)
    return [f"{words[2 * i]} {words[2 * i + 1]}" for i in range(n)]


class Rig:
    """An agent on real stores with the curator (run in the turn) and a scripted model."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.provider = ScriptedProvider()
        self.provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
        self.memory = SemanticMemory.open(root / "memory", HashEmbedder())
        self.topics = TopicStore(root / "memory")
        self.conversations = ConversationStore(root)
        self.cid = self.conversations.create().id
        self.agent = self.new_agent()
        self.events: list[AgentEvent] = []

    def new_agent(self, *, curator: bool = True) -> Agent:
        """An agent as a new start of the app makes it (nothing kept in memory)."""
        return Agent(
            self.provider,
            self.memory,
            self.conversations,
            WorkingMemoryStore(self.root / "memory"),
            config=AgentConfig(max_steps=3, auto_memories=curator),
            curator=Curator(self.provider, self.memory, self.topics) if curator else None,
        )

    def turn(self, text: str, *extracted: str) -> list[AgentEvent]:
        """One turn; with `extracted`, the curator then finds these facts in it."""
        if self.agent.curator is not None:
            memories = [
                {"kind": "fact", "text": t, "importance": 0.5, "topic": "t"} for t in extracted
            ]
            self.provider.enqueue(json.dumps({"memories": memories}))
        self.events = []
        self.agent.run(self.cid, text, self.events.append, CancelToken())
        return self.events

    def edits(self) -> list[MemoryEdited]:
        return [e for e in self.events if isinstance(e, MemoryEdited)]

    def offered(self) -> list[PendingChange]:
        return [e.change for e in self.events if isinstance(e, MemorySuggested)]

    def results(self) -> list[ToolCallFinished]:
        return [e for e in self.events if isinstance(e, ToolCallFinished)]

    def pending(self) -> tuple[PendingChange, ...]:
        return ConversationStore(self.root).load(self.cid).pending  # as read from the file


@pytest.fixture
def rig(data_dir: Path) -> Iterator[Rig]:
    made = Rig(data_dir)
    yield made
    made.memory.close()


def test_the_curator_adds_no_more_than_the_budget_and_offers_the_rest(rig: Rig) -> None:
    facts = unrelated_facts(8)
    rig.provider.enqueue("Noted.")
    rig.turn("Here is my life story", *facts)
    added = [e.edit.after.text for e in rig.edits()]
    assert added == facts[:MAX_ADDS_PER_REPLY]
    assert len(rig.memory) == MAX_ADDS_PER_REPLY
    offered = rig.offered()
    assert [(c.action, c.text, c.origin) for c in offered] == [
        ("remember", t, "curator") for t in facts[MAX_ADDS_PER_REPLY:]
    ]
    assert rig.pending() == tuple(offered)  # kept with the conversation


def test_tool_changes_and_curator_changes_share_one_budget(rig: Rig) -> None:
    olds = [rig.memory.add(f"{w} is a word the user likes", origin="curator") for w in WORDS[:5]]
    forgets = calls(*(("forget", {"memory_id": o.id}) for o in olds[:MAX_CHANGES_PER_REPLY]))
    rig.provider.enqueue(forgets, "Done.")
    refined = f"{WORDS[4]} is a word the user likes a lot"
    decision = {"candidate": 0, "action": "UPDATE", "target": olds[4].id, "text": refined}
    rig.provider.always(
        lambda m: m[0]["content"] == DECIDE_PROMPT, json.dumps({"decisions": [decision]})
    )
    rig.turn("Forget three of them", refined)
    assert [e.edit.action for e in rig.edits()] == ["forgot"] * MAX_CHANGES_PER_REPLY
    assert rig.memory.get(olds[4].id).text == olds[4].text  # type: ignore[union-attr]
    (offer,) = rig.offered()
    assert (offer.action, offer.target_id, offer.text) == ("update", olds[4].id, refined)
    assert offer.describe().startswith("Change the memory “") and "a lot" in offer.describe()


def test_two_hundred_remembers_add_five_and_offer_a_few(rig: Rig) -> None:
    rig.agent = rig.new_agent(curator=False)
    texts = [f"Fact {n}: {WORDS[n % len(WORDS)]} {n * 7919}" for n in range(200)]
    rig.provider.enqueue(calls(*(("remember", {"text": t}) for t in texts)), "Saved.")
    rig.turn("Remember all of this")
    assert len(rig.memory) == MAX_ADDS_PER_REPLY
    assert [r.ok for r in rig.results()].count(True) == MAX_ADDS_PER_REPLY
    assert "suggestion" in rig.results()[-1].result
    assert len(rig.offered()) == MAX_OFFERS_PER_REPLY
    assert [c.text for c in rig.pending()] == texts[5 : 5 + MAX_OFFERS_PER_REPLY]


def test_insights_draw_on_the_replys_budget(rig: Rig) -> None:
    facts = [rig.memory.add(t, origin="curator") for t in unrelated_facts(4, seed=3)]
    for fact in facts:
        rig.topics.add_memory("words", fact.id)
    reflector = Reflector(rig.provider, rig.memory, rig.topics, after_memories=1, per_day=3)
    offers: list[PendingChange] = []
    budget = ReplyBudget(offers.append)
    for _ in range(MAX_ADDS_PER_REPLY - 1):
        assert budget.take("remember")  # the curator added four
    insights = [
        {"text": "The user collects rare words", "rests_on": [facts[0].id, facts[1].id]},
        {"text": "The user names things after stones", "rests_on": [facts[2].id, facts[3].id]},
    ]
    rig.provider.enqueue(json.dumps({"insights": insights}))
    written = reflector.reflect_if_due(cancel=CancelToken(), budget=budget)
    assert [i.text for i in written] == ["The user collects rare words"]
    assert [(o.text, o.origin, o.kind) for o in offers] == [
        ("The user names things after stones", "reflection", "insight")
    ]


def test_accepting_a_suggestion_applies_it_and_it_waits_no_more(rig: Rig) -> None:
    facts = unrelated_facts(6, seed=1)
    rig.provider.enqueue("Noted.")
    rig.turn("More about me", *facts)
    (offer,) = rig.pending()
    edit = apply_pending(rig.memory, offer, rig.cid)
    assert edit.action == "remembered" and edit.after.text == facts[-1]
    assert edit.after.origin == "curator"
    rig.conversations.answer_pending(rig.cid, offer.id, "accepted")
    assert rig.pending() == ()


# -- pinned memories ------------------------------------------------------------------------------


def ask_to_forget(rig: Rig, pinned_id: str, user_text: str) -> None:
    rig.provider.enqueue(calls(("forget", {"memory_id": pinned_id})), "Done or asked.")
    rig.turn(user_text)


@pytest.mark.parametrize("answer", ["No", "no, keep it", "Nein", "Yes, but don't forget it"])
def test_no_explicit_yes_never_forgets_a_pinned_memory(rig: Rig, answer: str) -> None:
    rig.agent = rig.new_agent(curator=False)
    pinned = rig.memory.add("The user is allergic to penicillin", pinned=True)
    ask_to_forget(rig, pinned.id, "Forget my allergy")
    (question,) = rig.pending()
    assert (question.reason, question.action, question.target_id) == ("pinned", "forget", pinned.id)
    assert rig.offered() == [question]  # shown in the chat
    ask_to_forget(rig, pinned.id, answer)  # the model forgets anyway
    assert rig.memory.get(pinned.id).state == "active"  # type: ignore[union-attr]
    assert not rig.results()[0].ok
    if explicit_answer(answer) == "no":
        assert rig.pending() == ()  # answered
    else:
        assert [p.id for p in rig.pending()] == [question.id]  # still open, not asked twice


def test_the_question_survives_other_turns_and_a_restart(rig: Rig) -> None:
    rig.agent = rig.new_agent(curator=False)
    pinned = rig.memory.add("The user lives in Lyon", pinned=True)
    ask_to_forget(rig, pinned.id, "Forget where I live")
    rig.provider.enqueue("Sunny.")
    rig.turn("What is the weather like?")  # answers nothing
    rig.agent = rig.new_agent(curator=False)  # the app restarted
    assert len(rig.pending()) == 1
    ask_to_forget(rig, pinned.id, "Yes, forget it")
    assert rig.memory.get(pinned.id).state == "forgotten"  # type: ignore[union-attr]
    assert [e.edit.action for e in rig.edits()] == ["forgot"]
    assert rig.pending() == ()


def test_a_retry_of_the_asking_message_is_no_answer(rig: Rig) -> None:
    rig.agent = rig.new_agent(curator=False)
    pinned = rig.memory.add("The user lives in Lyon", pinned=True)
    ask_to_forget(rig, pinned.id, "yes forget where I live")
    rig.provider.enqueue(calls(("forget", {"memory_id": pinned.id})), "Asked again.")
    rig.events = []
    rig.agent.retry(rig.cid, rig.events.append, CancelToken())
    assert rig.memory.get(pinned.id).state == "active"  # type: ignore[union-attr]


def test_the_yes_on_the_chat_line_changes_the_pinned_memory(rig: Rig) -> None:
    rig.agent = rig.new_agent(curator=False)
    pinned = rig.memory.add("The user lives in Lyon", pinned=True)
    rig.provider.enqueue(
        calls(("remember", {"text": "The user lives in Nice", "replaces": pinned.id})), "Asked."
    )
    rig.turn("I moved to Nice")
    (question,) = rig.pending()
    assert question.describe() == (
        "Replace the pinned memory “The user lives in Lyon” with “The user lives in Nice”"
    )
    edit = apply_pending(rig.memory, question, rig.cid)
    assert edit.action == "superseded" and edit.after.text == "The user lives in Nice"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes", "yes"),
        ("yes, forget it", "yes"),
        ("Ok!", "yes"),
        ("Oui", "yes"),
        ("Ja, bitte", "yes"),
        ("да", "yes"),
        ("No", "no"),
        ("nope", "no"),
        ("Non merci", "no"),
        ("Keep it", "no"),
        ("yes but do not", None),
        ("Hmm, what do you mean?", None),
        ("I said yes earlier", None),
        ("", None),
    ],
)
def test_explicit_answers(text: str, expected: str | None) -> None:
    assert explicit_answer(text) == expected
