"""Names in a query ("Caroline", "Lisbon", "Max") and the texts that mention them.

A name is a capitalised word that does not start the query's sentence and is not a stop word,
a month or a day of the week.
BM25 weighs a name by its rarity, so the name of someone who speaks in half the messages counts
for almost nothing; yet a question about Caroline is answered mostly where Caroline is named
or speaks ("Caroline: ..."). Search adds `SearchConfig.entity_weight` to the relevance of the
candidates that mention every name of the query (as a whole word, in any case).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.memory.text import STOP_WORDS
from assistant.memory.when import MONTHS

_NOT_NAMES = (
    STOP_WORDS
    | set(MONTHS)
    | {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)

_WORD = re.compile(r"[^\W\d_][^\W_]*(?:'[^\W_]+)?")
_SENTENCE_END = re.compile(r"[.!?:]\s*$")


def names(query: str) -> list[str]:
    """The capitalised words of `query` that are not the first of a sentence, stop words, months
    or days of the week, lowercase, each once ("John's" gives "john")."""
    found: list[str] = []
    for match in _WORD.finditer(query):
        word = match.group().split("'")[0]
        first = not query[: match.start()].strip() or _SENTENCE_END.search(query[: match.start()])
        if first or not word[0].isupper() or word.lower() in _NOT_NAMES or len(word) < 2:
            continue
        if word.lower() not in found:
            found.append(word.lower())
    return found


def mentions(text: str, wanted: Sequence[str]) -> bool:
    """Whether `text` has every name of `wanted` as a word."""
    if not wanted:
        return False
    words = {m.group().split("'")[0].lower() for m in _WORD.finditer(text)}
    return all(name in words for name in wanted)
