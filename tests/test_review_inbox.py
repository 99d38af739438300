"""The review inbox and the policy in the loop: proposals persist, accept (as written or edited)
makes memories, reject leaves a tombstone and no text, pending proposals are in no prompt and
no search, the `remember` tool follows the policy, and the settings keep it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.agent.cancel import CancelToken
from assistant.agent.curator import TOPIC_PROMPT, Curator
from assistant.agent.events import AgentEvent, ToolCallFinished
from assistant.agent.loop import Agent, AgentConfig
from assistant.agent.prompt import ASK_NOTE, ON_REQUEST_NOTE
from assistant.errors import StorageError
from assistant.memory import (
    ConversationStore,
    Inbox,
    Proposal,
    Review,
    SemanticMemory,
    Source,
    TopicStore,
    WorkingMemoryStore,
)
from assistant.memory.inbox import INBOX_NAME, MAX_PENDING
from assistant.memory.tombstones import REJECTED_PROPOSAL
from assistant.memory_policy import MemoryPolicy, clean_own_topics
from assistant.paths import memory_dir, settings_file
from assistant.settings import Settings
from assistant.workspace import Workspace
from tests.embedders import HashEmbedder
from tests.scripted import ScriptedProvider, calls

ASK = MemoryPolicy("ask", ("health",))


class Rig:
    """Real stores in the data dir, an inbox and its review, an agent on a scripted model."""

    def __init__(self, root: Path, policy: MemoryPolicy = ASK) -> None:
        self.root = root
        self.provider = ScriptedProvider()
        self.provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
        self.memory = SemanticMemory.open(root / "memory", HashEmbedder())
        self.topics = TopicStore(root / "memory")
        self.inbox = Inbox(root / "memory")
        self.review = Review(self.inbox, self.memory, self.topics)
        self.conversations = ConversationStore(root)
        self.agent = Agent(
            self.provider,
            self.memory,
            self.conversations,
            WorkingMemoryStore(root / "memory"),
            config=AgentConfig(auto_memories=True, memory_policy=policy),
            curator=Curator(self.provider, self.memory, self.topics, self.inbox),
            inbox=self.inbox,
        )
        self.events: list[AgentEvent] = []

    def turn(self, cid: str, text: str) -> None:
        self.agent.run(cid, text, self.events.append, CancelToken())

    def extracts(self, *texts: str) -> None:
        memories = [{"kind": "fact", "text": t, "importance": 0.6, "topic": "home"} for t in texts]
        self.provider.enqueue(json.dumps({"memories": memories}))


@pytest.fixture
def rig(data_dir: Path) -> Iterator[Rig]:
    made = Rig(data_dir)
    yield made
    made.provider.assert_all_used()
    made.memory.close()
    made.conversations.close()


def test_ask_first_puts_candidates_in_the_inbox_never_in_the_prompt_or_search(rig: Rig) -> None:
    cid = rig.conversations.create().id
    rig.provider.enqueue("Nice!")
    rig.extracts("The user lives in Lisbon", "The user has asthma")
    rig.turn(cid, "I live in Lisbon, asthma and all.")
    (waiting,) = rig.inbox.pending()
    assert waiting.text == "The user lives in Lisbon" and waiting.by == "curator"
    assert waiting.source == Source(cid, rig.conversations.load(cid).messages[0].id)
    assert len(rig.memory) == 0 and rig.memory.search("Lisbon", k=5) == []
    assert ASK_NOTE in rig.provider.requests[0]["messages"][0]["content"]
    assert "health (illnesses" in rig.provider.requests[0]["messages"][0]["content"]

    rig.provider.enqueue("Lisbon is lovely.")
    rig.extracts()
    rig.turn(cid, "Where do I live?")
    system = rig.provider.requests[-2]["messages"][0]["content"]
    assert "Lisbon" not in system  # the proposal waits: it is in no prompt
    assert Inbox(rig.root / "memory").pending() == [waiting]  # and on disk


def test_accept_as_written_and_edited_makes_model_memories(rig: Rig) -> None:
    source = Source("c1", "m1")
    first, second = rig.inbox.propose(
        [
            Proposal("The user lives in Lisbon", topic="home", source=source),
            Proposal("The user likes figs", kind="preference"),
        ]
    )
    done = rig.review.accept([first.id, second.id], {second.id: "  The user loves  figs "})
    assert not done.refused
    kept = {e.after.text: e.after for e in done.edits}
    assert set(kept) == {"The user lives in Lisbon", "The user loves figs"}
    lisbon = kept["The user lives in Lisbon"]
    assert lisbon.origin == "curator" and lisbon.source == source
    assert "topic:home" in lisbon.tags and lisbon.id in rig.topics.get("home").memory_ids  # type: ignore[union-attr]
    assert kept["The user loves figs"].kind == "preference"
    assert rig.inbox.pending() == [] and Inbox(rig.root / "memory").pending() == []
    assert {h.item.text for h in rig.memory.search("Lisbon figs", k=5)} == set(kept)


def test_accepting_a_replacement_supersedes_the_old_memory(rig: Rig) -> None:
    porto = rig.memory.add("The user lives in Porto", origin="curator")
    (proposal,) = rig.inbox.propose(
        [Proposal("The user lives in Lisbon", change="replace", target=porto.id, reason="moved")]
    )
    (edit,) = rig.review.accept([proposal.id]).edits
    assert edit.action == "superseded" and edit.before == porto
    old = rig.memory.get(porto.id)
    assert old is not None and not old.is_current and old.superseded_by == edit.after.id


def test_a_replacement_whose_target_went_is_added(rig: Rig) -> None:
    porto = rig.memory.add("The user lives in Porto")
    (proposal,) = rig.inbox.propose(
        [Proposal("The user lives in Lisbon", change="replace", target=porto.id)]
    )
    rig.memory.forget(porto.id)
    (edit,) = rig.review.accept([proposal.id]).edits
    assert edit.action == "remembered" and edit.after.supersedes == ()


def test_reject_leaves_a_tombstone_and_no_text_and_is_not_proposed_again(rig: Rig) -> None:
    cid = rig.conversations.create().id
    (proposal,) = rig.inbox.propose([Proposal("The user collects zqstamps")])
    assert rig.review.reject([proposal.id]) == 1
    assert (
        rig.inbox.pending() == []
        and rig.memory.resemblance("The user collects zqstamps") is not None
    )
    rig.provider.enqueue("Fun!")
    rig.extracts("The user collects zqstamps")
    rig.turn(cid, "Stamps again")
    assert rig.inbox.pending() == [] and len(rig.memory) == 0
    rig.memory.close()
    rig.conversations.close()
    leftovers = [
        p.name
        for p in rig.root.rglob("*")
        if p.is_file() and p.parent.name == "memory" and b"zqstamps" in p.read_bytes()
    ]
    assert leftovers == []
    # The user adding it themselves lifts the tombstone.
    again = SemanticMemory.open(rig.root / "memory", HashEmbedder())
    rig.memory = again
    again.add("The user collects zqstamps")
    assert again.resemblance("The user collects zqstamps") is None


def test_a_rejection_shows_in_the_timeline_as_one_after_a_restart(rig: Rig) -> None:
    (proposal,) = rig.inbox.propose([Proposal("The user collects zqstamps")])
    forgotten = rig.memory.add("The user likes green tea")
    rig.memory.forget(forgotten.id)
    rig.review.reject([proposal.id])
    rig.memory.close()
    rig.memory = SemanticMemory.open(rig.root / "memory", HashEmbedder())
    events = {e.memory_id: e for e in rig.memory.timeline(types=["forgotten"])}
    assert events[proposal.id].reason == REJECTED_PROPOSAL and events[proposal.id].by == "user"
    assert events[forgotten.id].reason != REJECTED_PROPOSAL


def test_all_at_once(rig: Rig) -> None:
    proposals = rig.inbox.propose(Proposal(f"The user visited city zq{n}x") for n in range(4))
    ids = [p.id for p in proposals]
    assert rig.review.reject(ids[:2]) == 2
    done = rig.review.accept(ids[2:])
    assert len(done.edits) == 2 and rig.inbox.pending() == [] and len(rig.memory) == 2


def test_accepting_a_fact_forgotten_meanwhile_is_refused(rig: Rig) -> None:
    (proposal,) = rig.inbox.propose([Proposal("The user plays the oboe")])
    item = rig.memory.add("The user plays the oboe")
    rig.memory.forget(item.id)
    done = rig.review.accept([proposal.id])
    assert done.edits == [] and done.refused[0][1] == "you had Assistant forget this"
    assert rig.inbox.pending() == []


def test_the_remember_tool_proposes_when_asking_first_and_keeps_off_never_topics(
    rig: Rig,
) -> None:
    cid = rig.conversations.create().id
    rig.provider.enqueue(
        calls(
            ("remember", {"text": "The user likes figs"}),
            ("remember", {"text": "The user has a migraine every week"}),
        ),
        "Done.",
    )
    rig.extracts()
    rig.turn(cid, "Remember I like figs and my weekly migraine")
    figs, migraine = [e for e in rig.events if isinstance(e, ToolCallFinished)]
    assert figs.ok and "Proposed, not saved yet" in figs.result
    assert not migraine.ok and "never to remember anything about Health" in migraine.result
    (waiting,) = rig.inbox.pending()
    assert waiting.text == "The user likes figs" and waiting.by == "tool" and len(rig.memory) == 0


def test_on_request_tells_the_model_and_stores_what_was_asked(data_dir: Path) -> None:
    rig = Rig(data_dir, MemoryPolicy("on_request"))
    try:
        cid = rig.conversations.create().id
        rig.provider.enqueue("Sure.")
        rig.provider.enqueue(
            json.dumps(
                {"memories": [{"kind": "fact", "text": "The user owns a kayak", "asked": 1}]}
            )
        )
        rig.turn(cid, "I own a kayak.")
        assert ON_REQUEST_NOTE in rig.provider.requests[0]["messages"][0]["content"]
        assert len(rig.memory) == 0  # "asked" must be true, not merely truthy
        rig.provider.assert_all_used()
    finally:
        rig.memory.close()
        rig.conversations.close()


def test_the_inbox_survives_a_corrupt_file_and_refuses_a_newer_one(data_dir: Path) -> None:
    directory = data_dir / "memory"
    directory.mkdir(parents=True)
    (directory / INBOX_NAME).write_text('{"version": 1, "proposals": [{"id": 3}]}')
    inbox = Inbox(directory)
    assert inbox.pending() == [] and "moved it to inbox.json.corrupt-" in inbox.warnings[0]
    assert list(directory.glob("inbox.json.corrupt-*"))
    (directory / INBOX_NAME).write_text('{"version": 9, "proposals": []}')
    with pytest.raises(StorageError, match="newer version"):
        Inbox(directory)


def test_the_inbox_keeps_no_repeats_and_at_most_its_limit(data_dir: Path) -> None:
    inbox = Inbox(data_dir / "memory")
    assert len(inbox.propose([Proposal("The user likes figs."), Proposal("the user likes FIGS")]))
    assert len(inbox) == 1
    inbox.propose(Proposal(f"Fact zq{n}") for n in range(MAX_PENDING + 5))
    pending = Inbox(data_dir / "memory").pending()
    assert len(pending) == MAX_PENDING and pending[-1].text == f"Fact zq{MAX_PENDING + 4}"


def test_the_settings_keep_the_policy_and_the_workspace_hands_it_to_the_agent(
    data_dir: Path,
) -> None:
    Settings(
        provider="custom",
        base_url="http://127.0.0.1:9/v1",
        memory_policy="ask",
        never_remember=["money", "names"],
        never_remember_own=["my ex"],
    ).save(settings_file(data_dir))
    raw = json.loads(settings_file(data_dir).read_text())
    assert raw["memory_policy"] == "ask" and raw["never_remember"] == ["money", "names"]
    workspace = Workspace.open(data_dir, embed=False)
    try:
        agent = workspace.agent()
        assert agent.config.memory_policy == MemoryPolicy("ask", ("money", "names"), ("my ex",))
        assert agent.inbox is workspace.inbox is agent.curator.inbox  # type: ignore[union-attr]
        assert (memory_dir(data_dir) / INBOX_NAME).exists() is False  # nothing written yet
    finally:
        workspace.close()
    settings, warnings = Settings.from_json({"memory_policy": "sometimes", "never_remember": ["x"]})
    assert settings.policy() == MemoryPolicy() and len(warnings) == 2


def test_own_topics_are_cleaned() -> None:
    assert clean_own_topics(["  my  ex ", "", "My Ex", "politics"]) == ["my ex", "politics"]
    with pytest.raises(ValueError, match="no word"):
        clean_own_topics(["the"])
    with pytest.raises(ValueError, match="at most 80"):
        clean_own_topics(["x" * 81])


def test_an_accepted_proposal_keeps_the_scope_it_was_proposed_in(rig: Rig) -> None:
    (work, mine) = rig.inbox.propose(
        [Proposal("The launch is on Friday", project="proj1"), Proposal("The user likes figs")]
    )
    assert Inbox(rig.root / "memory").pending()[0].project == "proj1"
    done = rig.review.accept([work.id, mine.id])
    scopes = {e.after.text: e.after.project for e in done.edits}
    assert scopes == {"The launch is on Friday": "proj1", "The user likes figs": None}
