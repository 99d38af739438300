"""Embedders for tests: deterministic hashed bags of words, so texts sharing words are near."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from assistant.errors import ProviderError
from assistant.memory.text import tokenize


def hashed_vector(text: str, dim: int) -> npt.NDArray[np.float32]:
    """A unit vector with one hashed bucket per word (a constant one for empty text)."""
    vec = np.zeros(dim, dtype=np.float32)
    for token in tokenize(text) or [""]:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        vec[int.from_bytes(digest, "little") % dim] += 1.0
    return vec / np.linalg.norm(vec)


class HashEmbedder:
    """An in-process `Embedder`; counts calls and can be told to fail."""

    def __init__(self, name: str = "hash", dim: int = 64) -> None:
        self.name = name
        self.dim = dim
        self.calls = 0
        self.texts = 0
        self.fail = False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        if self.fail:
            raise ProviderError("Could not reach http://127.0.0.1:9/v1")
        self.texts += len(texts)
        return np.stack([hashed_vector(t, self.dim) for t in texts]).astype(np.float32)
