"""A forgotten fact does not come back in other words: tombstones compare meaning (a sketch of the
embedder's vector, never the text) and fold homoglyphs; other facts, even about the same person
or place, are still learned. The rates on the labelled set are held to fixed floors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.memory.local_embedder import LocalEmbedder
from assistant.memory.semantic import SemanticMemory
from assistant.memory.tombstones import Fingerprint, Meaning, Tombstone, fold, sketch
from tests.bench.tombstone_bench import measure
from tests.data.rewordings import REWORDINGS, UNRELATED
from tests.embedders import HashEmbedder

# Measured with the built-in embedder (all-MiniLM-L6-v2, English only): 15 of 32 rewordings
# (all 6 homoglyphs, 9 of 16 English synonyms and paraphrases, none of 10 in other languages),
# 1 false positive of 40. The floors leave room for a rounding difference of the model's
# runtime, not for a change of the method.
MIN_CAUGHT = 14
MAX_FALSE_POSITIVES = 2


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    yield LocalEmbedder(threads=1)


def test_the_labelled_set_is_large_and_varied() -> None:
    hows = {how for _, _, how in REWORDINGS}
    assert len(REWORDINGS) >= 30 and hows == {"synonym", "paraphrase", "language", "homoglyph"}
    assert len(UNRELATED) >= 30


def test_rewordings_are_caught_and_other_facts_are_not(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    rates = measure(tmp_path, embedder)
    caught = sum(rates.caught.values())
    print(f"caught {caught}/{len(REWORDINGS)}, false positives {rates.false_positives}")
    assert caught >= MIN_CAUGHT
    assert rates.caught["homoglyph"] == rates.total["homoglyph"]
    assert len(rates.false_positives) <= MAX_FALSE_POSITIVES


def test_homoglyphs_are_caught_without_an_embedder(tmp_path: Path) -> None:
    rates = measure(tmp_path, None)
    assert rates.caught["homoglyph"] == rates.total["homoglyph"]
    assert rates.false_positives == []


def test_the_curator_does_not_learn_a_forgotten_fact_in_other_words(
    tmp_path: Path, embedder: LocalEmbedder
) -> None:
    memory = SemanticMemory.open(tmp_path, embedder)
    try:
        memory.forget(memory.add("The user is allergic to penicillin").id)
        assert memory.is_forgotten_fact("The user has a penicillin allergy")
        assert not memory.is_forgotten_fact("The user is allergic to cats")
        memory.add("The user is allergic to cats", origin="curator")  # learned
    finally:
        memory.close()
    reopened = SemanticMemory.open(tmp_path, embedder)  # from the log and its caches
    try:
        assert reopened.is_forgotten_fact("The user has a penicillin allergy")
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


def test_folding_makes_look_alikes_plain() -> None:
    looks_alike = "\u0422h\u0435 us\u0435r's d\u03bfg \u0392iscuit \uff4e\uff55\uff52\uff53\uff45"
    assert fold(looks_alike) == "the user's dog biscuit nurse"
