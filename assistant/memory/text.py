"""Tokenizing for BM25, and the small stop-word list used by the relevance floor."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+")

# Words that alone never make a result relevant. They still count in BM25 scores (so scores
# stay those of rank_bm25); they only cannot pass the relevance floor on their own.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t don
    """.split()
)


def tokenize(text: str) -> list[str]:
    """Lowercase `text` and split it on anything that is not a Unicode letter or digit."""
    return _TOKEN.findall(text.lower())


def is_informative(token: str) -> bool:
    """Whether a token may make a result relevant on its own (not a stop word)."""
    return token not in STOP_WORDS
