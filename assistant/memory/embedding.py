"""Embedders turn texts into unit vectors: the protocol, and a lazy wrapper."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt


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
