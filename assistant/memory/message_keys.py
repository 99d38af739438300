"""The texts a message is also found by: the memories the curator extracted from it.

A fact extracted from a message ("Caroline attended an LGBTQ support group") says what the
message means in the words a later question uses, as LongMemEval's fact-augmented keys do
(Wu et al., 2024): conversation search indexes the message under its own words and its keys'
(one keyword document), and ranks it by the closest in meaning of its text and its keys.

The keys' vectors are kept like the messages' (`MessageVectors`), by a hash of the text, in
`conversations/keys-<model>.npz`; a key that is gone (its memory forgotten) leaves that file
at the next save (the store's close at the latest), so a forgotten memory's vector does not
outlive it there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.memory.message_vectors import MessageKey, MessageVectors

PREFIX = "keys"  # of the cache file's name
FloatArray = npt.NDArray[np.float32]


def text_id(text: str) -> MessageKey:
    """The id of a key's vector: a hash of its text (the cache holds no text)."""
    return ("", hashlib.sha256(text.encode("utf-8")).hexdigest()[:32])


class MessageKeys:
    """Key texts by message, and their vectors of one embedder; not thread-safe (the message
    index holds its lock)."""

    def __init__(self) -> None:
        self.texts: dict[MessageKey, tuple[str, ...]] = {}
        self.vectors: MessageVectors | None = None
        self._pairs: tuple[npt.NDArray[np.int64], list[MessageKey]] | None = None
        self.given = False  # whether the keys have been set (not only their vectors read)

    def __len__(self) -> int:
        return len(self.texts)

    def set(self, changes: Mapping[MessageKey, Sequence[str]]) -> list[MessageKey]:
        """Give these messages these keys instead of those they had (none: no keys);
        returns the messages whose keys changed."""
        changed = []
        self.given = True
        for message, texts in changes.items():
            clean = tuple(dict.fromkeys(t.strip() for t in texts if t.strip()))
            if clean == self.texts.get(message, ()):
                continue
            if clean:
                self.texts[message] = clean
            else:
                self.texts.pop(message, None)
            changed.append(message)
        if changed:
            self._pairs = None
        return changed

    def pending(self) -> list[str]:
        """The key texts without a vector, each once."""
        have = self.vectors
        texts = dict.fromkeys(t for ts in self.texts.values() for t in ts)
        return [t for t in texts if have is None or have.row(text_id(t)) < 0]

    def store(self, model: str, texts: Sequence[str], vectors: FloatArray) -> None:
        """Keep the vectors of these key texts (of `model`)."""
        if self.vectors is None or self.vectors.model != model:
            self.vectors = MessageVectors(model, vectors.shape[1], PREFIX)
        self.vectors.add([text_id(t) for t in texts], vectors)
        self._pairs = None

    def load(self, directory: Path, model: str) -> None:
        """Read the cached key vectors of `model` (none if there is no usable cache)."""
        self.vectors = MessageVectors.load(directory, model, PREFIX)
        self._pairs = None

    def save(self, directory: Path) -> None:
        """Write the vectors of the current keys, if some were added or some are stale (once
        the keys have been given: before, every cached one may still be wanted)."""
        vectors = self.vectors
        if vectors is None:
            return
        if self.given:
            live = [text_id(t) for ts in self.texts.values() for t in ts]
            if sum(vectors.row(key) >= 0 for key in set(live)) < len(vectors):
                vectors = self.vectors = vectors.subset(live)
                self._pairs = None
        if vectors.unsaved:
            vectors.save(directory)

    def best(self, query: FloatArray, candidates: int) -> dict[MessageKey, float]:
        """Per message with keys among the `candidates` closest to the unit `query`, the
        cosine of its closest key."""
        vectors = self.vectors
        if vectors is None or not len(vectors) or vectors.dim != len(query):
            return {}
        rows, messages = self._key_pairs(vectors)
        if not len(rows):
            return {}
        near, sims = vectors.nearest(query, candidates)
        by_row = np.full(len(vectors), -np.inf, dtype=np.float32)
        by_row[near] = sims
        pair_sims = by_row[rows]
        out: dict[MessageKey, float] = {}
        for i in np.flatnonzero(pair_sims > -np.inf).tolist():
            message, sim = messages[i], float(pair_sims[i])
            if sim > out.get(message, -np.inf):
                out[message] = sim
        return out

    def _key_pairs(self, vectors: MessageVectors) -> tuple[npt.NDArray[np.int64], list[MessageKey]]:
        """(vector row, message) of every key that has a vector."""
        if self._pairs is None:
            rows, messages = [], []
            for message, texts in self.texts.items():
                for text in texts:
                    row = vectors.row(text_id(text))
                    if row >= 0:
                        rows.append(row)
                        messages.append(message)
            self._pairs = (np.array(rows, dtype=np.int64), messages)
        return self._pairs
