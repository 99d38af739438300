"""Embedders for tests: deterministic hashed bags of words, so texts sharing words are near."""

from __future__ import annotations

import hashlib
import threading
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


class GatedEmbedder(HashEmbedder):
    """A `HashEmbedder` whose calls for held texts wait until the test opens their gate, and
    that can be told to fail as no embedder should (an unexpected error, not a provider's)."""

    def __init__(self, name: str = "hash", dim: int = 64) -> None:
        super().__init__(name, dim)
        self.crash: Exception | None = None
        self._gates: dict[str, threading.Event] = {}
        self._entered: dict[str, threading.Event] = {}

    def hold(self, text: str) -> None:
        """Make the next calls that embed `text` wait for `release`."""
        self._gates[text] = threading.Event()
        self._entered[text] = threading.Event()

    def waiting(self, text: str) -> bool:
        """Whether a call for the held `text` has come and waits at its gate."""
        return self._entered[text].is_set() and not self._gates[text].is_set()

    def release(self, text: str | None = None) -> None:
        """Open the gate of `text`, or every gate."""
        for held, gate in self._gates.items():
            if text is None or held == text:
                gate.set()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        for text in texts:
            if text in self._gates:
                self._entered[text].set()
                self._gates[text].wait(30)
        if self.crash is not None:
            raise self.crash
        return super().embed(texts)
