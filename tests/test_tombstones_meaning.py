"""A forgotten fact does not come back in other words: tombstones compare meaning (a sketch of the
embedder's vector, never the text) and fold homoglyphs. The same fact is refused; one close to
it waits for the user's yes; other facts, even about the same person or place, are learned. The
rates on the three labelled sets are held to fixed floors, and no near miss is ever refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.memory.local_embedder import LocalEmbedder
from assistant.memory.semantic import ForgottenFactError, SemanticMemory
from assistant.memory.tombstones import Fingerprint, Meaning, Tombstone, fold, sketch
from tests.bench.tombstone_bench import SETS, measure
from tests.data import rewordings_fresh
from tests.data.rewordings import REWORDINGS, UNRELATED
from tests.embedders import HashEmbedder

# Measured with the built-in embedder (all-MiniLM-L6-v2, English only), caught = refused or
# held for review: first set 19 of 32 (none of 10 in other languages), second 9 of 12, fresh
# 16 of 24 (none of 5 in other languages); unrelated facts held 4 of 40 and 0 of 40, refused
# none. The floors leave room for a rounding difference of the model's runtime, not for a
# change of the method.
MIN_CAUGHT = {"first": 18, "second": 8, "fresh": 15}
MAX_HELD_UNRELATED = {"first": 5, "second": 0, "fresh": 2}


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    yield LocalEmbedder(threads=1)


def test_the_labelled_sets_are_large_and_varied() -> None:
    hows = {"synonym", "paraphrase", "language", "homoglyph"}
    assert len(REWORDINGS) >= 30 and {how for _, _, how in REWORDINGS} == hows
    assert len(UNRELATED) >= 30
    fresh = rewordings_fresh
    assert len(fresh.REWORDINGS) >= 20 and {how for _, _, how in fresh.REWORDINGS} == hows
    assert len(fresh.NEAR_MISSES) >= 20 and len(fresh.UNRELATED) >= 40


@pytest.mark.parametrize("name", list(SETS))
def test_rewordings_are_caught_and_other_facts_never_refused(
    tmp_path: Path, embedder: LocalEmbedder, name: str
) -> None:
    rates = measure(tmp_path, embedder, *SETS[name])
    caught = sum(rates.caught.values())
    print(f"{name}: caught {caught}, near misses held {rates.near_held}, {rates.other_held}")
    assert caught >= MIN_CAUGHT[name]
    assert rates.caught["homoglyph"] == rates.total["homoglyph"]
    assert rates.near_refused == [] and rates.other_refused == []
    assert len(rates.other_held) <= MAX_HELD_UNRELATED[name]


def test_homoglyphs_are_caught_without_an_embedder(tmp_path: Path) -> None:
    rates = measure(tmp_path, None)
    assert rates.refused["homoglyph"] == rates.total["homoglyph"]
    assert rates.other_refused == [] and rates.other_held == []


def test_the_opposite_is_asked_about_never_refused(tmp_path: Path, embedder: LocalEmbedder) -> None:
    memory = SemanticMemory.open(tmp_path, embedder)
    try:
        memory.forget(memory.add("The user hates coriander").id)
        assert memory.resemblance("The user loves coriander") == "resembles"
        assert memory.resemblance("The user can't stand the taste of coriander") == "resembles"
        full_width = "".join(chr(ord(c) + 0xFEE0) if c != " " else c for c in "The user hates")
        assert memory.resemblance(f"{full_width} coriander") == "forgotten"
        with pytest.raises(ForgottenFactError) as refused:  # the curator's way in, say
            memory.add("The user loves coriander", origin="curator")
        assert refused.value.resemblance == "resembles"  # held for a yes, not refused
        memory.add("The user loves coriander", origin="curator", confirmed=True)
    finally:
        memory.close()


def test_the_curator_does_not_learn_a_forgotten_fact_in_other_words(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    memory = SemanticMemory.open(tmp_path, embedder)
    try:
        memory.forget(memory.add("The user is allergic to penicillin").id)
        assert memory.resemblance("The user has a penicillin allergy") is not None
        assert memory.resemblance("The user is allergic to cats") is None
        memory.add("The user is allergic to cats", origin="curator")  # learned
    finally:
        memory.close()
    reopened = SemanticMemory.open(tmp_path, embedder)  # from the log and its caches
    try:
        assert reopened.resemblance("The user has a penicillin allergy") is not None
    finally:
        reopened.close()


def test_the_tombstone_keeps_no_text(tmp_path: Path, embedder: LocalEmbedder) -> None:
    memory = SemanticMemory.open(tmp_path, embedder)
    memory.forget(memory.add("The user's secret lover is called Dominique").id)
    memory.close()
    on_disk = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    for word in (b"secret", b"lover", b"Dominique", b"dominiqu"):
        assert word not in on_disk


def test_sketches_of_another_model_are_not_compared() -> None:
    vector = HashEmbedder().embed(["The user lives in Porto"])[0]
    mine = Fingerprint.of("The user lives in Porto", Meaning("a", vector))
    other = Fingerprint.of("In Porto is where one finds the user", Meaning("b", vector))
    same = Fingerprint.of("In Porto is where one finds the user", Meaning("a", vector))
    assert not mine.means_as(other) and mine.means_as(same)


def test_a_tombstone_with_a_sketch_round_trips_and_an_old_one_still_reads() -> None:
    vector = HashEmbedder().embed(["x y z"])[0]
    stone = Tombstone.from_json(
        {"memory_id": "m", "hash": "h", "signature": "0", "words": 3, "at": "2026-01-01T00:00:00Z"}
    )
    assert stone.fingerprint.sketch is None
    made = Fingerprint.of("The user lives in Porto", Meaning("model", vector))
    again = Tombstone.from_json(Tombstone("m", made, stone.at).to_json())
    assert again.fingerprint == made and made.sketch == sketch(vector)
    assert made.facets is not None and stone.fingerprint.facets is None


def test_folding_makes_look_alikes_plain() -> None:
    looks_alike = "\u0422h\u0435 us\u0435r's d\u03bfg \u0392iscuit \uff4e\uff55\uff52\uff53\uff45"
    assert fold(looks_alike) == "the user's dog biscuit nurse"
