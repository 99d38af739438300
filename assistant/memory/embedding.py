"""Embedders turn texts into unit vectors: the protocol, a lazy wrapper, and the batches
embedding work is done in."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from assistant.errors import AssistantError

log = logging.getLogger(__name__)

# Texts per embedding call: one request to a server, and one step of progress (and of
# cancelling) when the stores embed what they lack or an import adds memories.
EMBED_BATCH = 64

_T = TypeVar("_T")


def embedding_batches(items: Sequence[_T]) -> Iterator[Sequence[_T]]:
    """`items` in consecutive slices of at most `EMBED_BATCH`."""
    for start in range(0, len(items), EMBED_BATCH):
        yield items[start : start + EMBED_BATCH]


def query_vector(embedder: Embedder, query: str, dim: int) -> npt.NDArray[np.float32] | None:
    """The query's unit vector for comparing with vectors of size `dim`; None (logged) if it
    cannot be had, so that the search goes on by keywords."""
    try:
        qvec = np.asarray(embedder.embed([query]), dtype=np.float32).reshape(-1)
    except (AssistantError, ValueError) as exc:
        log.warning("Embedding the search failed, searching by keywords: %s", exc)
        return None
    norm = float(np.linalg.norm(qvec))
    if len(qvec) != dim or not math.isfinite(norm) or norm == 0:
        return None
    return qvec / norm


class Embedder(Protocol):
    """Something that embeds texts; `name` and `dim` identify its vector space."""

    name: str

    @property
    def dim(self) -> int:
        """The vector size."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return one float32 row per text, shape (len(texts), dim)."""
        ...


class LazyEmbedder:
    """An `Embedder` built on first use, so opening the memory needs no network client."""

    def __init__(self, name: str, build: Callable[[], Embedder]) -> None:
        self.name = name
        self._build = build
        self._embedder: Embedder | None = None

    def _real(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._build()
        return self._embedder

    @property
    def dim(self) -> int:
        """The vector size (may ask the server)."""
        return self._real().dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed with the real embedder, building it first if needed."""
        return self._real().embed(texts)
