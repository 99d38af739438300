"""Tombstones: fingerprints of forgotten memories that recognise the fact again without its text.

A forget removes a memory's text and history from disk; its tombstone stays, so that the
curator (or an import) never learns the same fact again. A fingerprint is made of the
memory's *content words*: the stems of its words that are not stop words or single letters,
so inflection, case, punctuation and word order do not matter ("Porto is where my sister
lives" and "my sister lived in Porto" have the same ones). It holds

- `hash`: a SHA-256 of the sorted, distinct content words (an exact match), and
- `signature`: a 1-bit MinHash of them (256 bits), which estimates the Jaccard similarity of
  two word sets, so that the same fact with a word more or less is recognised too.

Neither can be read back. One bit per MinHash slot (instead of the usual whole hash value)
keeps single words from being confirmed slot by slot against a dictionary; a guess of the
whole fact can always be tested, as with any fingerprint that recognises it.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from assistant.memory.text import is_informative, stem, tokenize
from assistant.timestamps import parse, stamp

SIGNATURE_BITS = 256
# Two word sets match if their estimated Jaccard similarity reaches this. With one bit a slot,
# a slot agrees with probability (1 + J) / 2: sets with J = 0.5 (3 words of 4 in common) pass
# by chance once in 100,000 comparisons; one word more in 7 (J = 0.86) fails once in 3,000.
MATCH_JACCARD = 0.75
_MATCH_BITS = round(SIGNATURE_BITS * (1 + MATCH_JACCARD) / 2)
_MIN_WORDS = 3  # fewer content words: only the exact hash matches (one word is too many)
# Not content: the curator writes "The user's sister ...", the user "My sister ...".
_NOT_CONTENT = frozenset(["user"])


def content_words(text: str) -> frozenset[str]:
    """The stems of the words of `text` that carry its content."""
    stems = (stem(w) for w in tokenize(text) if len(w) > 1 and is_informative(w))
    return frozenset(s for s in stems if s not in _NOT_CONTENT)


@dataclass(frozen=True)
class Fingerprint:
    """What recognises a fact: the hash of its content words and their MinHash signature."""

    hash: str
    signature: int  # SIGNATURE_BITS bits
    words: int  # how many content words (not their text)

    @classmethod
    def of(cls, text: str) -> Fingerprint:
        """The fingerprint of `text`."""
        words = content_words(text) or frozenset(tokenize(text)) or frozenset([text.strip()])
        digest = hashlib.sha256("\n".join(sorted(words)).encode("utf-8")).hexdigest()
        return cls(digest, _minhash(words), len(words))

    def matches(self, other: Fingerprint) -> bool:
        """Whether the two say the same fact: equal content words, or nearly equal ones."""
        if self.hash == other.hash:
            return True
        if min(self.words, other.words) < _MIN_WORDS:
            return False
        agree = SIGNATURE_BITS - (self.signature ^ other.signature).bit_count()
        return agree >= _MATCH_BITS


@dataclass(frozen=True)
class Tombstone:
    """A forgotten memory's fingerprint: its id and when it was forgotten, not its text."""

    memory_id: str
    fingerprint: Fingerprint
    at: datetime

    def to_json(self) -> dict[str, Any]:
        """The tombstone as a JSON object (the signature as hexadecimal)."""
        return {
            "memory_id": self.memory_id,
            "hash": self.fingerprint.hash,
            "signature": f"{self.fingerprint.signature:0{SIGNATURE_BITS // 4}x}",
            "words": self.fingerprint.words,
            "at": stamp(self.at),
        }

    @classmethod
    def from_json(cls, raw: Any) -> Tombstone:
        """Parse a tombstone; raises ValueError naming the first bad field."""
        if not isinstance(raw, dict):
            raise ValueError("tombstone: expected an object")
        for name in ("memory_id", "hash", "signature", "at"):
            if not isinstance(raw.get(name), str):
                raise ValueError(f"tombstone {name}: expected a string")
        words = raw.get("words")
        if not isinstance(words, int) or isinstance(words, bool) or words < 0:
            raise ValueError("tombstone words: expected a count")
        signature = int(raw["signature"], 16)
        if signature >> SIGNATURE_BITS:
            raise ValueError("tombstone signature: too long")
        return cls(raw["memory_id"], Fingerprint(raw["hash"], signature, words), parse(raw["at"]))


def _minhash(words: frozenset[str]) -> int:
    """For each of SIGNATURE_BITS hash functions, the lowest bit of the smallest hash of a word."""
    lows = [0xFFFFFFFF] * SIGNATURE_BITS
    for word in words:
        data = hashlib.shake_128(word.encode("utf-8")).digest(4 * SIGNATURE_BITS)
        values = struct.unpack(f"<{SIGNATURE_BITS}I", data)
        lows = [min(low, value) for low, value in zip(lows, values, strict=True)]
    return sum((low & 1) << i for i, low in enumerate(lows))
