"""Tombstones: a forgotten fact is recognised again (reordered, inflected, a word more) without
its text being kept, and the curator never learns it again; Undo lifts it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from assistant.agent.curator import Curator
from assistant.memory.memory_log import LOG_NAME
from assistant.memory.messages import Message
from assistant.memory.semantic import ForgottenFactError, SemanticMemory
from assistant.memory.tombstones import Fingerprint, Tombstone, content_words
from assistant.memory.topics import TopicStore
from assistant.memory.vectors import cache_paths
from assistant.timestamps import now_utc, stamp
from tests.embedders import HashEmbedder
from tests.scripted import ScriptedProvider

FACT = "The user's sister Ana lives in Porto and works as a nurse"
SAME = [
    "the user's sister ana lives in porto and works as a nurse.",  # case, punctuation
    "Ana, the user's sister, works as a nurse and lives in Porto",  # reordered
    "The user's sister Ana lived in Porto, working as a nurse",  # inflected
    "The user's sister Ana lives in Porto and works as a night nurse",  # a word more
]
OTHER = [
    "The user's brother lives in Lisbon",
    "Ana is the user's sister",  # a part of the fact is another fact
    "The user works as a nurse in Porto hospital on weekends and nights",
]


def test_fingerprints_match_the_same_fact_and_no_other() -> None:
    fact = Fingerprint.of(FACT)
    for text in SAME:
        assert fact.matches(Fingerprint.of(text)), text
    for text in OTHER:
        assert not fact.matches(Fingerprint.of(text)), text
    assert Fingerprint.of(SAME[1]).hash == fact.hash  # reordered: the very same words
    assert content_words("I am allergic to peanuts") == {"allerg", "peanut"}
    assert Fingerprint.of("Peanuts: allergic!").matches(Fingerprint.of("I am allergic to peanut"))
    assert not Fingerprint.of("likes tea").matches(Fingerprint.of("likes green tea"))


def test_fingerprints_are_stable_across_versions() -> None:
    """Tombstones written today must match the same texts in later versions."""
    fingerprint = Fingerprint.of(FACT)
    words = ["ana", "live", "nurs", "porto", "sister", "work"]  # "user" is not content
    assert sorted(content_words(FACT)) == words
    assert fingerprint.hash == hashlib.sha256("\n".join(words).encode()).hexdigest()
    assert f"{fingerprint.signature:064x}" == (
        "83b816ecd1194eee752a88b324e30e988585e7d585159907626f6133b6973c30"
    )


def test_tombstones_keep_no_text_and_round_trip() -> None:
    tombstone = Tombstone("m1", Fingerprint.of(FACT), now_utc())
    raw = tombstone.to_json()
    assert Tombstone.from_json(json.loads(json.dumps(raw))) == tombstone
    dumped = json.dumps(raw).lower()
    assert not any(word in dumped for word in ("porto", "sister", "nurse", "ana"))
    for field, value in [("hash", 3), ("signature", "f" * 65), ("words", -1), ("at", None)]:
        with pytest.raises(ValueError, match=field):
            Tombstone.from_json({**raw, field: value})


@pytest.fixture
def mem_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.mark.parametrize("reopen", ["none", "close", "crash", "compact"])
def test_a_forgotten_fact_stays_forgotten(mem_dir: Path, reopen: str) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    item = mem.add(FACT, origin="curator")
    other = mem.add("The user likes chess")
    mem.forget(item.id)
    if reopen == "close":
        mem.close()
    if reopen == "compact":
        mem.compact()
    if reopen != "none":
        mem = SemanticMemory.open(mem_dir, HashEmbedder())
    for text in [FACT, *SAME]:
        assert mem.resemblance(text) is not None, text
        with pytest.raises(ForgottenFactError):
            mem.add(text, origin="curator")
        with pytest.raises(ForgottenFactError):
            mem.save(text, origin="reflection")
        with pytest.raises(ForgottenFactError):
            mem.merge_into(other.id, text, by="curator")
        with pytest.raises(ForgottenFactError):
            mem.supersede(other.id, text, by="curator", reason="r")
    assert not any(mem.resemblance(text) is not None for text in OTHER)
    assert len(mem) == 1
    assert [e.type for e in mem.timeline(types=["forgotten"])] == ["forgotten"]


def test_undo_lifts_the_tombstone_for_good(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add(FACT)
    mem.forget(item.id)
    mem.restore(item.id)
    assert mem.resemblance(FACT) is None
    mem.close()
    again = SemanticMemory.open(mem_dir)
    assert again.resemblance(FACT) is None
    assert again.get(item.id).state == "active"  # type: ignore[union-attr]
    again.compact()
    assert b'"tombstone"' not in (mem_dir / LOG_NAME).read_bytes()


def test_the_user_adding_a_forgotten_fact_again_lifts_its_tombstone(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    mem.forget(mem.add(FACT).id)
    with pytest.raises(ForgottenFactError):  # the model's remember tool: refused, as the curator
        mem.add(SAME[1], origin="tool")
    assert mem.resemblance(FACT) is not None and len(mem) == 0
    mem.add(SAME[1])  # the user, in the sidebar
    assert mem.resemblance(FACT) is None
    again = SemanticMemory.open(mem_dir)  # replayed from the log
    assert again.resemblance(FACT) is None


def test_forgotten_text_leaves_every_file_and_the_tombstone_stays(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    item = mem.add(FACT)
    mem.update(item.id, text=SAME[3])
    mem.mark_used([item.id])
    mem.add("The user likes chess")
    mem.forget(item.id)
    mem.close()
    data = b"".join(p.read_bytes() for p in mem_dir.iterdir() if p.is_file())
    for word in (b"Porto", b"porto", b"nurse", b"Ana"):
        assert word not in data
    # Nor is its embedding kept: the vector cache holds the other memory's alone.
    meta = json.loads(cache_paths(mem_dir, "hash").meta.read_text())
    assert item.id not in meta["ids"] and len(meta["ids"]) == 1
    assert SemanticMemory.open(mem_dir).resemblance(FACT) is not None


def _message(mid: str, role: str, content: str) -> Message:
    return Message(mid, None, role, content, stamp())  # type: ignore[arg-type]


def _extraction(*texts: str) -> str:
    memories = [{"kind": "fact", "text": t, "importance": 0.6, "topic": "family"} for t in texts]
    return json.dumps({"memories": memories})


def test_replaying_the_exchange_after_a_forget_learns_nothing(tmp_path: Path) -> None:
    """The original exchange, and a new one saying the same in other words, go through the
    curator again after the forget: nothing comes back, and other facts are still learned."""
    memory = SemanticMemory.open(tmp_path / "memory", HashEmbedder())
    topics = TopicStore(tmp_path / "memory")
    provider = ScriptedProvider(_extraction(FACT), "The user's sister is a nurse in Porto.")
    curator = Curator(provider, memory, topics)
    user = _message("u1", "user", "My sister Ana lives in Porto, she's a nurse.")
    reply = _message("a1", "assistant", "Nice! Porto is lovely.")
    [learned] = curator.process("conv", user, reply)
    memory.forget(learned.id)
    memory.close()

    memory = SemanticMemory.open(tmp_path / "memory", HashEmbedder())
    curator = Curator(provider, memory, topics)
    provider.enqueue(_extraction(FACT))
    assert curator.process("conv", user, reply) == []
    provider.enqueue(_extraction(SAME[2], "The user plays chess"), "The user plays chess.")
    user2 = _message("u2", "user", "Ana lived in Porto working as a nurse. I play chess.")
    [chess] = curator.process("conv2", user2, _message("a2", "assistant", "Good to know."))
    assert chess.text == "The user plays chess"
    assert [i.text for i in memory.all(state=None)] == ["The user plays chess"]
    provider.assert_all_used()


def test_every_text_a_forgotten_memory_had_stays_forgotten(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("The user works at Google", origin="curator")
    mem.merge_into(item.id, "The user works on the Maps team at Google", by="curator")
    mem = SemanticMemory.open(mem_dir)  # a crash: the history is read from the log
    mem.forget(item.id)
    for store in (mem, SemanticMemory.open(mem_dir)):
        assert store.resemblance("I work at Google") is not None  # the text before the merge
        assert store.resemblance("works on the Google Maps team") is not None
        assert store.resemblance("The user works at Apple") is None
    mem.compact()
    mem.close()
    again = SemanticMemory.open(mem_dir)
    assert again.resemblance("I work at Google") is not None
    assert [e.memory_id for e in again.timeline(types=["forgotten"])] == [item.id]
    log = (mem_dir / LOG_NAME).read_text()
    assert log.count('"op":"tombstone"') == 2 and "Google" not in log


def test_a_forget_cut_short_by_a_crash_never_loses_its_tombstone(mem_dir: Path) -> None:
    """The forget's append writes the tombstone first: any prefix of it that reached the disk
    holds the tombstone, or nothing of the forget."""
    mem = SemanticMemory.open(mem_dir)
    item = mem.add(FACT)
    log = mem_dir / LOG_NAME
    before = log.read_bytes()
    mem.forget(item.id)
    forget = log.read_bytes()[len(before) :].splitlines(keepends=True)
    assert [json.loads(line)["op"] for line in forget] == ["tombstone", "put", "event"]
    for cut in range(1, len(forget)):  # the crash left the first `cut` records
        log.write_bytes(before + b"".join(forget[:cut]))
        again = SemanticMemory.open(mem_dir)
        assert again.resemblance(FACT) is not None
        again.close()
