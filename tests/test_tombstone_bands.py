"""Two bands for forgotten facts: the same fact is refused; one that only resembles it (in other
words, or a near miss such as the opposite) is never learned without the user's yes and never
dropped either: it waits on the Review tab, saying why, across restarts; accepting learns it.
Whatever enters memory from the model goes this way (curator, `remember` tool, MCP,
reflection); what the user types is theirs. Nothing of the forgotten text is kept."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import pytest

from assistant.agent.curator import Curator
from assistant.agent.events import ToolCallFinished
from assistant.agent.reflection import REFLECT_PROMPT, Reflector
from assistant.mcp_server.operations import answer
from assistant.memory import Inbox, Review, SemanticMemory, TopicStore
from assistant.memory.resembling import RESEMBLES
from assistant.memory.semantic import ForgottenFactError
from assistant.memory.tombstones import Fingerprint
from assistant.memory_policy import AUTOMATIC
from assistant.workspace import Workspace
from tests.embedders import HashEmbedder, hashed_vector
from tests.scripted import ScriptedProvider, calls
from tests.test_curator import REPLY, USER
from tests.test_review_inbox import Rig

# With the hashed-words embedder these share 5 of 6 words: close in meaning, not the same fact.
FORGOTTEN = "The user hates zqcoriander in salads"
REWORDED = "The user hates zqcoriander in soups"


@pytest.fixture
def rig(data_dir: Path) -> Iterator[Rig]:
    made = Rig(data_dir, AUTOMATIC)
    made.memory.forget(made.memory.add(FORGOTTEN).id)
    yield made
    made.provider.assert_all_used()
    made.memory.close()
    made.conversations.close()


def _learn_in_a_turn(rig: Rig, cid: str, *texts: str) -> None:
    rig.provider.enqueue("Noted.")
    rig.extracts(*texts)
    rig.turn(cid, "Zqcoriander soups, ugh.")


def test_a_reworded_forgotten_fact_waits_for_a_yes_across_a_restart(rig: Rig) -> None:
    cid = rig.conversations.create().id
    _learn_in_a_turn(rig, cid, REWORDED)
    assert rig.memory.all() == []  # not learned
    (waiting,) = rig.inbox.pending()  # nor dropped
    assert waiting.text == REWORDED and waiting.resembles_forgotten and waiting.by == "curator"
    assert Inbox(rig.root / "memory").pending() == [waiting]  # on disk, flagged

    from assistant.ui.memory.review_page import caption  # Qt: loaded only here

    assert caption(waiting, None).startswith(RESEMBLES)

    rig.memory.close()  # the forgotten text leaves every file at close
    rig.conversations.close()
    on_disk = b"".join(p.read_bytes() for p in rig.root.rglob("*") if p.is_file())
    assert b"salad" not in on_disk and b"Salad" not in on_disk
    rig.memory = SemanticMemory.open(rig.root / "memory", HashEmbedder())
    rig.conversations = type(rig.conversations)(rig.root)

    review = Review(Inbox(rig.root / "memory"), rig.memory, TopicStore(rig.root / "memory"))
    done = review.accept([waiting.id])  # the user's yes: not refused again
    assert not done.refused and [e.after.text for e in done.edits] == [REWORDED]
    assert [i.text for i in rig.memory.all()] == [REWORDED]
    assert rig.memory.resemblance(FORGOTTEN) is not None  # the forgotten fact stays forgotten


def test_rejecting_it_learns_nothing_and_it_is_not_asked_again(rig: Rig) -> None:
    cid = rig.conversations.create().id
    _learn_in_a_turn(rig, cid, REWORDED)
    (waiting,) = rig.inbox.pending()
    assert rig.review.reject([waiting.id]) == 1
    _learn_in_a_turn(rig, cid, REWORDED)
    assert rig.inbox.pending() == [] and rig.memory.all() == []


def test_the_same_fact_is_refused_and_other_facts_are_learned(rig: Rig) -> None:
    cid = rig.conversations.create().id
    _learn_in_a_turn(rig, cid, "The user hates zqcoriander in salads!", "The user has a red kite")
    assert [i.text for i in rig.memory.all()] == ["The user has a red kite"]
    assert rig.inbox.pending() == []


def test_the_remember_tool_holds_a_resembling_fact_and_refuses_the_same(rig: Rig) -> None:
    cid = rig.conversations.create().id
    rig.provider.enqueue(
        calls(("remember", {"text": REWORDED}), ("remember", {"text": FORGOTTEN})), "Done."
    )
    rig.extracts()
    rig.turn(cid, "Remember my zqcoriander dislike")
    held, same = [e for e in rig.events if isinstance(e, ToolCallFinished)]
    assert held.ok and "waits for their yes in the Review tab" in held.result
    assert not same.ok and "made you forget this" in same.result
    assert rig.memory.all() == []
    (waiting,) = rig.inbox.pending()
    assert waiting.text == REWORDED and waiting.by == "tool" and waiting.resembles_forgotten


def test_what_the_user_types_is_kept_whatever_it_resembles(rig: Rig) -> None:
    item = rig.memory.add(REWORDED)  # the sidebar's origin: the user
    assert [i.id for i in rig.memory.all()] == [item.id] and rig.inbox.pending() == []


def test_the_opposite_in_the_same_words_is_asked_about_not_refused(data_dir: Path) -> None:
    """Without an embedder too: "eats pork" has the content words of "does not eat pork"."""
    provider = ScriptedProvider()
    memory = SemanticMemory.open(data_dir / "memory")
    inbox = Inbox(data_dir / "memory")
    try:
        memory.forget(memory.add("The user does not eat pork").id)
        assert memory.resemblance("The user does NOT eat pork.") == "forgotten"
        assert memory.resemblance("The user eats pork") == "resembles"
        curator = Curator(provider, memory, TopicStore(data_dir / "memory"), inbox)
        memory_line = {"kind": "fact", "text": "The user eats pork", "importance": 0.5}
        provider.enqueue(json.dumps({"memories": [memory_line]}))
        assert curator.process("c1", USER, REPLY) == []
        (waiting,) = inbox.pending()
        assert waiting.text == "The user eats pork" and waiting.resembles_forgotten
    finally:
        memory.close()


def test_another_app_over_mcp_is_held_too(data_dir: Path) -> None:
    workspace = Workspace.open(data_dir, embed=False)
    try:
        workspace.memory.forget(workspace.memory.add("The user does not eat pork").id)
        said = answer(
            workspace, {"op": "remember", "args": {"text": "The user eats pork"}, "client": "T"}
        )
        assert said.startswith("Not remembered yet: it resembles something the user asked")
        (waiting,) = workspace.inbox.pending()
        assert waiting.by == "mcp" and waiting.resembles_forgotten
        assert workspace.memory.all() == []
    finally:
        workspace.close()


def test_a_reflection_resembling_a_forgotten_fact_waits_too(data_dir: Path) -> None:
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    inbox = Inbox(data_dir / "memory")
    try:
        kept = [memory.add(f"The user cooks zqsoup number {n}", origin="curator") for n in range(3)]
        memory.forget(memory.add(FORGOTTEN).id)
        provider = ScriptedProvider()
        insight = {"text": REWORDED, "importance": 0.6, "rests_on": [i.id for i in kept]}
        provider.always(
            lambda m: m[0]["content"] == REFLECT_PROMPT, json.dumps({"insights": [insight]})
        )
        reflector = Reflector(
            provider, memory, TopicStore(data_dir / "memory"), after_memories=1, inbox=inbox
        )
        reflector.reflect()
        assert not any(i.kind == "insight" for i in memory.all())
        (waiting,) = inbox.pending()
        assert waiting.kind == "insight" and waiting.resembles_forgotten
    finally:
        memory.close()


class TranslatingEmbedder(HashEmbedder):
    """A multilingual embedder, as a provider's `/v1/embeddings` is: a translation lands where
    its English says (here by a table; the hashed words of the English)."""

    ENGLISH: ClassVar[dict[str, str]] = {
        "la hermana del usuario vive en oporto": "the user's sister lives in porto",
        "l'utilisateur est allergique à la pénicilline": "the user is allergic to penicillin",
    }

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        said = [self.ENGLISH.get(t.casefold(), t.casefold()) for t in texts]
        return np.stack([hashed_vector(t, self.dim) for t in said]).astype(np.float32)


def test_with_a_multilingual_embedder_a_translation_is_caught(data_dir: Path) -> None:
    memory = SemanticMemory.open(data_dir / "memory", TranslatingEmbedder(name="multi"))
    try:
        for fact in ("The user's sister lives in Porto", "The user is allergic to penicillin"):
            memory.forget(memory.add(fact).id)
        assert memory.resemblance("La hermana del usuario vive en Oporto") is not None
        assert memory.resemblance("L'utilisateur est allergique à la pénicilline") is not None
        assert memory.resemblance("Der Nutzer spielt gern Schach") is None
        with pytest.raises(ForgottenFactError):
            memory.add("La hermana del usuario vive en Oporto", origin="curator")
    finally:
        memory.close()


def test_a_fingerprint_tells_the_bands_apart() -> None:
    forgotten = Fingerprint.of("The user's rent is 900 euros a month")
    assert forgotten.resemblance(Fingerprint.of("The user's rent is 900 euros a month!")) == (
        "forgotten"
    )
    other_number = Fingerprint.of("The user's rent is 1200 euros a month")
    assert forgotten.resemblance(other_number) is None  # words differ, no meaning to compare
    opposite = Fingerprint.of("The user never pays rent of 900 euros a month")
    assert forgotten.resemblance(opposite) != "forgotten"
