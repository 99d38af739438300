"""The curator's scope decisions on a labelled set of exchanges (scripted model): personal facts
and preferences go global, a project's facts stay in it, an isolated project keeps everything,
outside a project everything is global; and only memories the chat sees are compared with."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from assistant.agent.chat_scope import ChatScope
from assistant.agent.curator import EXTRACT_PROMPT, SCOPE_NOTE, TOPIC_PROMPT, Curator
from assistant.agent.decisions import DECIDE_PROMPT
from assistant.memory import MemoryScope, Message, SemanticMemory, TopicStore
from assistant.projects import Project
from tests.embedders import HashEmbedder
from tests.scripted import ScriptedProvider

Where = Literal["outside", "open", "walled"]  # no project; a project; an isolated project
Expect = Literal["global", "A", "B"]  # global, the chat's project (A), another project (B)

NOVEL = Project("A", "Novel")
OTHER = Project("B", "Garden")


@dataclass(frozen=True)
class Case:
    """One exchange: where it happens, what the model extracts (text, kind, the scope it says:
    None when it says none), where each memory must end up; and memories there before, with
    the model's decision on the first candidate against the first of them."""

    where: Where
    user: str
    said: tuple[tuple[str, str, str | None], ...]
    expect: tuple[Expect, ...]
    before: tuple[tuple[str, Expect], ...] = ()
    decision: str | None = None  # UPDATE / SUPERSEDE / NOTHING of `before[0]`, if asked


def personal(text: str, kind: str = "fact") -> tuple[str, str, str | None]:
    return (text, kind, "personal")


def work(text: str, kind: str = "fact") -> tuple[str, str, str | None]:
    return (text, kind, "project")


CASES = [
    # A person's own facts and preferences, said in a project's chat: global.
    Case("open", "My daughter Mia starts school in September.",
         (personal("The user's daughter Mia starts school in September", "event"),), ("global",)),
    Case("open", "By the way, I'm vegetarian.",
         (personal("The user is vegetarian", "preference"),), ("global",)),
    Case("open", "Please keep answers short, with bullet points.",
         (personal("The user prefers short answers with bullet points", "preference"),),
         ("global",)),
    Case("open", "I live in Lyon.", (personal("The user lives in Lyon"),), ("global",)),
    Case("open", "I'm allergic to penicillin.",
         (personal("The user is allergic to penicillin"),), ("global",)),
    Case("open", "I always work in metric units.",
         (personal("The user works in metric units", "preference"),), ("global",)),
    Case("open", "My birthday is on 4 May.",
         (personal("The user's birthday is on 4 May"),), ("global",)),
    Case("open", "I go running every morning at six.",
         (personal("The user runs every morning at six"),), ("global",)),
    Case("open", "My partner Sam will read the draft.",
         (personal("The user's partner is called Sam"), work("Sam will read the novel draft")),
         ("global", "A")),
    Case("open", "I'm learning Japanese on the side.",
         (personal("The user is learning Japanese", "plan"),), ("global",)),
    # The project's own facts: in the project.
    Case("open", "The heroine is called Ada.",
         (work("The novel's heroine is called Ada"),), ("A",)),
    Case("open", "The manuscript is due to the publisher on 1 March.",
         (work("The manuscript is due to the publisher on 1 March", "task"),), ("A",)),
    Case("open", "We decided chapter three is in the first person.",
         (work("Chapter three of the novel is written in the first person", "decision"),),
         ("A",)),
    Case("open", "Tomatoes go by the south wall.",
         (work("The plan puts the tomatoes by the south wall", "plan"),), ("A",)),
    Case("open", "The backend runs on PostgreSQL 16.",
         (work("The project's backend uses PostgreSQL 16"),), ("A",)),
    Case("open", "The client for this redesign is Acme Ltd.",
         (work("The redesign's client is Acme Ltd"),), ("A",)),
    Case("open", "The renovation budget is 12,000 euros.",
         (work("The kitchen renovation budget is 12,000 euros", "decision"),), ("A",)),
    Case("open", "The committee meets on 12 June.",
         (work("The thesis committee meets on 12 June", "event"),), ("A",)),
    Case("open", "Stand-up is at 9:30 on weekdays.",
         (work("The team's stand-up is at 9:30 on weekdays"),), ("A",)),
    Case("open", "We rotate the API keys every 90 days.",
         (work("The project's API keys rotate every 90 days"),), ("A",)),
    # What the model says, read strictly: no scope or an unknown one stays in the project.
    Case("open", "The villain is her uncle.",
         (("The novel's villain is the heroine's uncle", "fact", None),), ("A",)),
    Case("open", "I drink green tea.",
         (("The user drinks green tea", "preference", "global"),), ("global",)),
    Case("open", "The cover is blue.",
         (("The novel's cover is blue", "fact", "everywhere!"),), ("A",)),
    Case("open", "I'm vegetarian, and the launch dinner needs a vegan option.",
         (personal("The user is vegetarian", "preference"),
          work("The launch dinner needs a vegan option", "task")),
         ("global", "A")),
    # An isolated project keeps everything, whatever the model says (and is not asked).
    Case("walled", "I live in Lyon.", (personal("The user lives in Lyon"),), ("A",)),
    Case("walled", "The heroine is called Ada.",
         (work("The novel's heroine is called Ada"),), ("A",)),
    Case("walled", "I'm vegetarian.",
         (("The user is vegetarian", "preference", None),), ("A",)),
    # Outside every project everything is global (and the model is not asked).
    Case("outside", "The heroine is called Ada.",
         (work("The novel's heroine is called Ada"),), ("global",)),
    Case("outside", "I'm vegetarian.",
         (personal("The user is vegetarian", "preference"),), ("global",)),
    Case("outside", "The stand-up is at 9:30.",
         (("The team's stand-up is at 9:30", "fact", "nonsense"),), ("global",)),
    # Memories the chat does not see are not compared with: another project's twin is left.
    Case("open", "The heroine is called Ada.",
         (work("The novel's heroine is called Ada"),), ("A",),
         before=(("The novel's heroine is called Ada", "B"),)),
    Case("walled", "I'm vegetarian.",
         (personal("The user is vegetarian", "preference"),), ("A",),
         before=(("The user is vegetarian", "global"),)),
    # Memories it sees are: a global twin is enough, and a change keeps the memory's scope.
    Case("open", "I'm vegetarian.",
         (work("The user is vegetarian", "preference"),), (),
         before=(("The user is vegetarian", "global"),)),
    Case("open", "I moved to Lisbon last week.",
         (personal("The user lives in Lisbon"),), ("global",),
         before=(("The user lives in Porto", "global"),), decision="SUPERSEDE"),
    Case("open", "Ada is the heroine, and she is a pilot.",
         (work("The novel's heroine Ada is a pilot"),), ("A",),
         before=(("The novel's heroine is called Ada", "A"),), decision="UPDATE"),
]  # fmt: skip


def _scope(where: Where) -> ChatScope:
    if where == "outside":
        return ChatScope()
    project = Project(NOVEL.id, NOVEL.name, isolated=where == "walled")
    return ChatScope(MemoryScope(project.id, project.isolated), project)


_PROJECT: dict[Expect, str | None] = {"global": None, "A": NOVEL.id, "B": OTHER.id}


class Rig:
    """A curator on a real store with a scripted model that checks what it is asked."""

    def __init__(self, root: Path) -> None:
        self.provider = ScriptedProvider()
        self.provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
        self.memory = SemanticMemory.open(root / "memory", HashEmbedder())
        self.curator = Curator(self.provider, self.memory, TopicStore(root / "memory"))

    def extracts(self, case: Case) -> None:
        memories = []
        for text, kind, scope in case.said:
            entry: dict[str, Any] = {"kind": kind, "text": text, "importance": 0.6}
            entry["topic"] = "life"
            if scope is not None:
                entry["scope"] = scope
            memories.append(entry)

        def answer(messages: list[dict[str, Any]]) -> str:
            system = messages[0]["content"]
            assert system.startswith(EXTRACT_PROMPT)
            asked = SCOPE_NOTE.format(name=json.dumps(NOVEL.name)) in system
            assert asked == (case.where == "open"), "the scope is asked in open projects only"
            assert case.user in messages[1]["content"]
            return json.dumps({"memories": memories})

        self.provider.enqueue(answer)


@pytest.fixture
def rig(data_dir: Path) -> Iterator[Rig]:
    made = Rig(data_dir)
    yield made
    made.memory.close()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.where}-{c.user[:30]}" for c in CASES])
def test_the_curator_puts_each_memory_in_its_scope(rig: Rig, case: Case) -> None:
    before = [rig.memory.add(text, project=_PROJECT[scope]) for text, scope in case.before]
    rig.extracts(case)
    if case.decision is not None:
        decision = {"candidate": 0, "action": case.decision, "target": before[0].id}
        decision |= {"text": case.said[0][0], "reason": "the user said so"}
        rig.provider.enqueue(json.dumps({"decisions": [decision]}))
    user = Message("u1", None, "user", case.user, "2026-03-03T10:00:00.000000Z")
    reply = Message("a1", "u1", "assistant", "Noted.", "2026-03-03T10:00:01.000000Z")
    stored = rig.curator.process("c1", user, reply, scope=_scope(case.where))
    rig.provider.assert_all_used()
    assert [i.text for i in stored] == [t for t, _, _ in case.said][: len(case.expect)]
    assert [i.project for i in stored] == [_PROJECT[e] for e in case.expect]
    asked = [r for r in rig.provider.requests if r["messages"][0]["content"] == DECIDE_PROMPT]
    for request in asked:  # only memories the chat sees were shown to the model
        shown = request["messages"][1]["content"]
        for item in before:
            assert (item.id in shown) == _scope(case.where).memory.sees(item)
    for item in before:  # what was there keeps its scope
        assert rig.memory.get(item.id).project == item.project  # type: ignore[union-attr]


def test_the_labelled_set_covers_every_kind_of_chat_and_label() -> None:
    assert len(CASES) >= 30
    assert {c.where for c in CASES} == {"outside", "open", "walled"}
    labels = {scope for c in CASES for _, _, scope in c.said}
    assert {"personal", "project", None} <= labels
    assert {e for c in CASES for e in c.expect} == {"global", "A"}
