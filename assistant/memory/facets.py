"""Facets: what tells the same fact reworded from another fact on the same subject.

Two texts close in meaning may still say different facts: "loves coriander" and "hates
coriander", "rent is 900 euros" and "rent is 1200 euros", "sister lives in Porto" and "sister
lives in Lisbon", "does not eat pork" and "eats pork". A sentence embedding puts these close
together; three cheap marks set them apart:

- the polarity: the parity of the negations ("not", "n't", "never", "no longer", "stopped",
  "quit", and the plain negations of a few other languages) and of the words of dislike
  ("hate", "dislike", ...),
- the numbers (digits, and number words up to twelve, tens, hundred and thousand),
- the names: words written with a capital letter (the first word too, unless a stop word).

A tombstone keeps only FACET_BITS bits of a hash of the three, never the words: a match says
the marks are very likely the same, a mismatch that one of them differs.
"""

from __future__ import annotations

import hashlib
import re

from assistant.memory.text import is_informative, stem, tokenize

FACET_BITS = 8  # a differing fact passes as the same one time in 256; a guess stays a guess
_NEGATIONS = frozenset(
    # English ("t" is what is left of "n't"), then Spanish, Italian, Portuguese, French, German,
    # Dutch: the languages of the labelled sets; another one just never has its facets agree.
    "not no never t cannot without none nobody nothing neither nor anymore stop quit "
    "nunca non mai não ne pas jamais nicht kein keine nie niet geen".split()
)
_DISLIKES = frozenset(stem(w) for w in "hate dislike detest loathe despise dread".split())
_NUMBER_WORDS = dict(
    zip(
        "zero one two three four five six seven eight nine ten eleven twelve".split(),
        range(13),
        strict=True,
    )
) | {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "thousand": 1000}
_WORD = re.compile(r"[^\W_]+")


def facets(text: str) -> int:
    """FACET_BITS bits of a hash of `text`'s polarity, numbers and names (`text` folded as
    tombstones fold it, but keeping its case)."""
    words = tokenize(text)
    negative = sum(w in _NEGATIONS or stem(w) in _NEGATIONS or stem(w) in _DISLIKES for w in words)
    numbers = sorted({n for n in map(_number, words) if n is not None})
    marks = f"{negative % 2}|{','.join(map(str, numbers))}|{','.join(_names(text))}"
    digest = hashlib.sha256(marks.encode("utf-8")).digest()
    return digest[0] & ((1 << FACET_BITS) - 1)


def _number(word: str) -> str | None:
    if word.isdecimal():
        return str(int(word))
    value = _NUMBER_WORDS.get(word)
    return None if value is None else str(value)


def _names(text: str) -> list[str]:
    """The stems of the capitalised words of `text` (not stop words), sorted and distinct."""
    found = {
        stem(word.casefold())
        for word in _WORD.findall(text)
        if word[0].isupper() and len(word) > 1 and is_informative(word.casefold())
    }
    return sorted(found)
