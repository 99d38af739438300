"""Embedders turn texts into unit vectors; the OpenAI one works with any compatible server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Something that embeds texts; `name` and `dim` identify its vector space."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return one float32 row per text, shape (len(texts), dim)."""
        ...
