""" "Why this result" in a small memory store: a matched word that every memory has does not set
a result apart, and the explanation says so instead of a keyword score of 0.00 beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.memory import SearchHit, SemanticMemory
from assistant.memory.why import details_text, why_text

PORTO = (
    "My sister lives in Porto",
    "We took the train from Lisbon to Porto",
    "The best pastries in Porto are near the river",
)


@pytest.fixture
def memory(tmp_path: Path) -> SemanticMemory:
    mem = SemanticMemory.open(tmp_path / "memory")  # keywords only: no embedder
    for text in PORTO:
        mem.add(text)
    return mem


def parts_sum(hit: SearchHit) -> float:
    return hit.keyword_part + hit.meaning_part + hit.importance_boost + hit.recency_boost


def test_a_word_in_every_memory_is_said_not_to_set_the_result_apart(
    memory: SemanticMemory,
) -> None:
    hits = memory.search("Porto", k=5)
    assert len(hits) == 3
    for hit in hits:
        assert hit.matched == ("Porto",) and hit.common == (("Porto", 3),) and hit.searched == 3
        why = why_text(hit)
        assert why.startswith(
            "Matches 'Porto', which every memory has, so it does not set this one apart"
        )
        details = details_text(hit)
        assert "BM25" not in details and "0.00" not in details
        assert ": about the same for each memory with 'Porto', which every memory has" in details
        assert details.startswith(f"Score {hit.score:.3f}, the sum of:")
        assert abs(parts_sum(hit) - hit.score) < 1e-9  # the lines add up to the score
    memory.close()


def test_a_telling_word_is_a_match_and_the_common_one_is_named_apart(
    memory: SemanticMemory,
) -> None:
    (first, *_rest) = memory.search("sister Porto", k=5)
    assert first.item.text == "My sister lives in Porto"
    why = why_text(first)
    assert why.startswith("Matches 'sister' (and 'Porto', which every memory has)")
    details = details_text(first)
    assert "Keywords +1.000: 1st by keywords (keyword score 0.62)" in details  # no meaning
    assert "every memory" not in details  # 'sister' sets it apart: its score is shown
    memory.close()


def test_a_word_in_most_memories_counts_for_little(tmp_path: Path) -> None:
    mem = SemanticMemory.open(tmp_path / "memory")
    for text in (*PORTO, "Tea with milk in the morning"):
        mem.add(text)
    hit = mem.search("Porto", k=5)[0]
    assert hit.common == (("Porto", 3),) and hit.searched == 4
    assert why_text(hit).startswith(
        "Matches 'Porto', which 3 of 4 memories have, so it does not set this one apart"
    )
    mem.close()


def test_pinned_is_not_given_as_a_reason_a_search_found_a_memory(memory: SemanticMemory) -> None:
    item = memory.search("sister", k=1)[0].item
    memory.pin(item.id, True)
    hit = memory.search("sister", k=1)[0]
    assert hit.item.pinned
    assert "pinned" not in why_text(hit).lower()  # search does not favour pinned memories
    memory.close()
