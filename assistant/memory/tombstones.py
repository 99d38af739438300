"""Tombstones: fingerprints of forgotten memories that recognise the fact again without its text.

A forget removes a memory's text and history from disk; its tombstone stays, so that the
curator (or an import) never learns the same fact again. A fingerprint is made of the
memory's *content words*: the stems of its words that are not stop words or single letters,
so inflection, case, punctuation and word order do not matter ("Porto is where my sister
lives" and "my sister lived in Porto" have the same ones). It holds

- `hash`: a SHA-256 of the sorted, distinct content words (an exact match), and
- `signature`: a 1-bit MinHash of them (256 bits), which estimates the Jaccard similarity of
  two word sets, so that the same fact with a word more or less is recognised too.

- `sketch`: the meaning, when an embedder is at hand: SKETCH_BITS random-hyperplane bits of the
  text's vector (which side of each of SKETCH_BITS fixed random planes it lies on), so that the
  same fact in other words is recognised too; the share of bits that differ estimates the angle
  between the two vectors. It is kept with the embedder's name: another model's vectors are
  not comparable.

- `facets`: FACET_BITS bits of a hash of the text's polarity, numbers and names (see
  `facets`), which tell the same fact reworded from another fact on the same subject.

A match falls in one of two bands (`Fingerprint.resemblance`). "forgotten", near-certain: the
same content words, nearly the same ones, or a meaning as close as SAME_COSINE, with the same
facets; the fact is not learned again. "resembles": a meaning as close as REVIEW_COSINE, or
one of the above with other facets (the opposite, another number or name); the fact is not
learned without the user's yes (it waits on the Review tab).

None can be read back. One bit per MinHash slot (instead of the usual whole hash value)
keeps single words from being confirmed slot by slot against a dictionary; a guess of the
whole fact can always be tested, as with any fingerprint that recognises it. Texts are folded
first (NFKC, lower case, look-alike letters of other scripts to Latin ones), so homoglyphs
and full-width letters say the same as plain ones.
"""

from __future__ import annotations

import functools
import hashlib
import math
import struct
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from assistant.memory.facets import FACET_BITS, facets
from assistant.memory.text import is_informative, stem, tokenize
from assistant.timestamps import parse, stamp

SIGNATURE_BITS = 256
# Two word sets match if their estimated Jaccard similarity reaches this. With one bit a slot,
# a slot agrees with probability (1 + J) / 2: sets with J = 0.5 (3 words of 4 in common) pass
# by chance once in 100,000 comparisons; one word more in 7 (J = 0.86) fails once in 3,000.
MATCH_JACCARD = 0.75
_MATCH_BITS = round(SIGNATURE_BITS * (1 + MATCH_JACCARD) / 2)
_MIN_WORDS = 3  # fewer content words: only the exact hash matches (one word is too many)
SKETCH_BITS = 512
# Two sketches of one model say the same fact (with the same facets) if the cosine of their
# vectors, as the bits estimate it, reaches SAME_COSINE, and resemble each other (the user is
# asked) from REVIEW_COSINE. Chosen on the first two labelled sets of tests/data/rewordings.py
# with the built-in embedder (all-MiniLM-L6-v2): no near miss there with the same facets is
# closer than 0.92 (which passes 0.96 by the sketch's error less than once in 100); from 0.80
# most English rewordings are asked about, and 4 of 40 unrelated facts.
SAME_COSINE = 0.96
REVIEW_COSINE = 0.80
_SAME_DIFFER = round(SKETCH_BITS * math.acos(SAME_COSINE) / math.pi)  # at most this many
_REVIEW_DIFFER = round(SKETCH_BITS * math.acos(REVIEW_COSINE) / math.pi)
Resemblance = Literal["forgotten", "resembles"]
# Letters of other scripts that look like Latin ones (what NFKC leaves as they are).
_LOOK_ALIKES = str.maketrans(
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0430\u0435\u043e"
    "\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u04bb\u0501\u0391\u0392\u0395\u0396\u0397"
    "\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03b1\u03b9\u03ba\u03bd\u03bf"
    "\u03c1\u03c5\u03c7",
    "ABEKMHOPCTXaeopcyxijshdABEZHIKMNOPTYXaikvopux",
)
# Not content: the curator writes "The user's sister ...", the user "My sister ...".
_NOT_CONTENT = frozenset(["user"])


def fold(text: str) -> str:
    """`text` with compatibility forms (full-width letters, ligatures) and look-alike letters of
    other scripts made plain, in lower case: what a tombstone compares."""
    return _plain(text).casefold()


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_LOOK_ALIKES)


def content_words(text: str) -> frozenset[str]:
    """The stems of the words of `text` that carry its content."""
    stems = (stem(w) for w in tokenize(fold(text)) if len(w) > 1 and is_informative(w))
    return frozenset(s for s in stems if s not in _NOT_CONTENT)


@dataclass(frozen=True)
class Meaning:
    """A text's vector (of its folded text) and the embedder's name."""

    model: str
    vector: npt.NDArray[np.float32]


@dataclass(frozen=True)
class Fingerprint:
    """What recognises a fact: the hash of its content words, their MinHash signature, the hash
    of its facets and, if an embedder was at hand, the sketch of its meaning."""

    hash: str
    signature: int  # SIGNATURE_BITS bits
    words: int  # how many content words (not their text)
    model: str | None = None  # the embedder of `sketch`
    sketch: int | None = None  # SKETCH_BITS bits
    facets: int | None = None  # FACET_BITS bits; None in tombstones older than them

    @classmethod
    def of(cls, text: str, meaning: Meaning | None = None) -> Fingerprint:
        """The fingerprint of `text`, with the sketch of its `meaning` if given."""
        words = content_words(text) or frozenset(tokenize(fold(text))) or frozenset([text.strip()])
        digest = hashlib.sha256("\n".join(sorted(words)).encode("utf-8")).hexdigest()
        marks = facets(_plain(text))
        if meaning is None:
            return cls(digest, _minhash(words), len(words), facets=marks)
        return cls(
            digest, _minhash(words), len(words), meaning.model, sketch(meaning.vector), marks
        )

    def matches(self, other: Fingerprint) -> bool:
        """Whether the two say the same fact or resemble each other (either band)."""
        return self.resemblance(other) is not None

    def resemblance(self, other: Fingerprint) -> Resemblance | None:
        """How the two match. "forgotten": they say the same fact (equal or nearly equal
        content words, or with sketches of one model a meaning as close as SAME_COSINE) with
        the same facets. "resembles": a meaning as close as REVIEW_COSINE, or words that match
        with other facets (another number, name, the opposite) or another meaning. Else None.
        Without facets (an older tombstone) only equal content words are "forgotten"."""
        differ = self._sketches_differ(other)
        words = self.hash == other.hash or self._words_match(other)
        if not words and (differ is None or differ > _REVIEW_DIFFER):
            return None
        if self.facets is None or other.facets is None:
            return "forgotten" if self.hash == other.hash else "resembles"
        # The same words in another order may say another fact ("the manager dislikes the
        # user"): with sketches, the meaning must be close too.
        close = differ is None or differ <= _REVIEW_DIFFER
        same = (words and close) or (differ is not None and differ <= _SAME_DIFFER)
        return "forgotten" if same and self.facets == other.facets else "resembles"

    def means_as(self, other: Fingerprint) -> bool:
        """Whether both have sketches of one model, close enough to resemble each other."""
        differ = self._sketches_differ(other)
        return differ is not None and differ <= _REVIEW_DIFFER

    def _words_match(self, other: Fingerprint) -> bool:
        if min(self.words, other.words) < _MIN_WORDS:
            return False
        agree = SIGNATURE_BITS - (self.signature ^ other.signature).bit_count()
        return agree >= _MATCH_BITS

    def _sketches_differ(self, other: Fingerprint) -> int | None:
        """How many bits the sketches differ in, if both have one of the same model."""
        if self.sketch is None or other.sketch is None or self.model != other.model:
            return None
        return (self.sketch ^ other.sketch).bit_count()


def sketch(vector: npt.ArrayLike) -> int:
    """SKETCH_BITS bits: on which side of each of the fixed random planes `vector` lies."""
    values = np.asarray(vector, dtype=np.float32).ravel()
    sides = _planes(len(values)) @ values > 0
    return int.from_bytes(np.packbits(sides, bitorder="little").tobytes(), "little")


@functools.cache
def _planes(dim: int) -> npt.NDArray[np.float32]:
    """SKETCH_BITS random planes through the origin in `dim` dimensions, the same every run
    (a fixed seed): sketches made now must compare with those of years ago."""
    rng = np.random.default_rng(20261125 + dim)
    return rng.standard_normal((SKETCH_BITS, dim)).astype(np.float32)


# The reason of the "forgotten" event a rejected proposal shows as in the timeline.
REJECTED_PROPOSAL = "a proposal rejected on the Review tab"


@dataclass(frozen=True)
class Tombstone:
    """A forgotten memory's fingerprint: its id and when it was forgotten, not its text;
    `rejected`: a proposal the user turned down on the Review tab, never a memory."""

    memory_id: str
    fingerprint: Fingerprint
    at: datetime
    rejected: bool = False

    def to_json(self) -> dict[str, Any]:
        """The tombstone as a JSON object (the signature and sketch as hexadecimal)."""
        data = {
            "memory_id": self.memory_id,
            "hash": self.fingerprint.hash,
            "signature": f"{self.fingerprint.signature:0{SIGNATURE_BITS // 4}x}",
            "words": self.fingerprint.words,
            "at": stamp(self.at),
        }
        if self.fingerprint.sketch is not None and self.fingerprint.model is not None:
            data["model"] = self.fingerprint.model
            data["sketch"] = f"{self.fingerprint.sketch:0{SKETCH_BITS // 4}x}"
        if self.fingerprint.facets is not None:
            data["facets"] = f"{self.fingerprint.facets:0{FACET_BITS // 4}x}"
        if self.rejected:
            data["rejected"] = True
        return data

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
        model, bits = raw.get("model"), raw.get("sketch")
        meant: int | None = None
        if isinstance(model, str) and isinstance(bits, str):  # older tombstones have none
            meant = int(bits, 16)
            if meant >> SKETCH_BITS:
                raise ValueError("tombstone sketch: too long")
        marks = raw.get("facets")
        if marks is not None and not isinstance(marks, str):
            raise ValueError("tombstone facets: expected a string")
        facet_bits = None if marks is None else int(marks, 16)
        if facet_bits is not None and facet_bits >> FACET_BITS:
            raise ValueError("tombstone facets: too long")
        print_ = Fingerprint(
            raw["hash"],
            signature,
            words,
            model if meant is not None else None,
            meant,
            facet_bits,
        )
        return cls(raw["memory_id"], print_, parse(raw["at"]), raw.get("rejected") is True)


def _minhash(words: frozenset[str]) -> int:
    """For each of SIGNATURE_BITS hash functions, the lowest bit of the smallest hash of a word."""
    lows = [0xFFFFFFFF] * SIGNATURE_BITS
    for word in words:
        data = hashlib.shake_128(word.encode("utf-8")).digest(4 * SIGNATURE_BITS)
        values = struct.unpack(f"<{SIGNATURE_BITS}I", data)
        lows = [min(low, value) for low, value in zip(lows, values, strict=True)]
    return sum((low & 1) << i for i, low in enumerate(lows))
