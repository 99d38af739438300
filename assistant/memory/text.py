"""Tokenizing for BM25: words, their stems (the index's terms), and the small stop-word list."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import snowballstemmer

_TOKEN = re.compile(r"[^\W_]+")
_STEMMER = snowballstemmer.stemmer("english")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# Words that alone never make a result relevant. They still count in BM25 scores (so scores
# stay those of rank_bm25 on the same terms); they only cannot pass the relevance floor alone.
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


def identifier_words(name: str) -> list[str]:
    """The words of a name such as `lookupOrder`, `lookup_order` or `lookup-order`."""
    return _CAMEL.sub(" ", name).replace("_", " ").replace("-", " ").split()


def tokenize(text: str) -> list[str]:
    """Lowercase `text` and split it on anything that is not a Unicode letter or digit."""
    return _TOKEN.findall(text.lower())


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The English (Porter 2) stem of a lowercase word: "peanuts" and "peanut" give "peanut"."""
    return str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """The terms the keyword indexes use: the stems of the words of `text`, in order."""
    return [stem(word) for word in tokenize(text)]


def query_terms(text: str) -> tuple[list[str], list[str]]:
    """A query's terms, and those of its words that are not stop words (that may make a hit)."""
    words = tokenize(text)
    return [stem(w) for w in words], [stem(w) for w in words if is_informative(w)]


def is_informative(token: str) -> bool:
    """Whether a token may make a result relevant on its own (not a stop word)."""
    return token not in STOP_WORDS


def expand_last(
    query: str, tokens: list[str], informative: list[str], with_prefix: Callable[[str], list[str]]
) -> tuple[list[str], list[str]]:
    """`query_terms` for a query being typed: the last word, unless followed by a space or a
    mark, also stands for the terms it begins (`with_prefix` finds them in an index)."""
    words = tokenize(query)
    if not words or not query.lower().endswith(words[-1]):
        return tokens, informative
    extra = [t for t in with_prefix(words[-1]) if t != tokens[-1]]
    return tokens + extra, informative + extra


def matched_words(query: str, text: str, *, prefix: bool = False) -> tuple[str, ...]:
    """The words of `query`, as typed and without stop words, that `text` has in some form
    ("peanut" in "peanuts"); with `prefix`, the last word also matches the words it begins."""
    words = _TOKEN.findall(query)
    have = set(terms(text))
    last = len(words) - 1
    typing = prefix and bool(words) and query.lower().endswith(words[-1].lower())
    found: list[str] = []
    for n, word in enumerate(words):
        low = word.lower()
        if not is_informative(low):
            continue
        if stem(low) in have or (typing and n == last and any(t.startswith(low) for t in have)):
            found.append(word)
    return tuple(dict.fromkeys(found))
