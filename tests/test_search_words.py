"""Search hits say which of the query's words they contain, as the user typed them."""

from __future__ import annotations

from pathlib import Path

from assistant.memory.semantic import SemanticMemory
from assistant.memory.text import matched_words
from tests.embedders import HashEmbedder


def test_matched_words_keep_the_typing_and_find_word_forms() -> None:
    text = "My sister is allergic to peanuts and lives in Porto"
    assert matched_words("Sister in Porto", text) == ("Sister", "Porto")  # "in" is a stop word
    assert matched_words("peanut", text) == ("peanut",)
    assert matched_words("Lisbon", text) == ()
    assert matched_words("siste", text) == ()
    assert matched_words("siste", text, prefix=True) == ("siste",)
    assert matched_words("siste ", text, prefix=True) == ()  # a finished word is taken as it is
    assert matched_words("porto porto", text) == ("porto",)


def test_search_hits_carry_the_matched_words(tmp_path: Path) -> None:
    mem = SemanticMemory.open(tmp_path, embedder=HashEmbedder())
    sister = mem.add("My sister lives in Porto").id
    mem.add("The user likes green tea")
    (hit,) = [h for h in mem.search("where does my sister live, Porto?") if h.item.id == sister]
    assert hit.matched == ("sister", "live", "Porto")
    typed = mem.search("siste", prefix=True)
    assert [(h.item.id, h.matched) for h in typed] == [(sister, ("siste",))]
    mem.close()
