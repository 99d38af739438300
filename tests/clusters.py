"""Clustered random unit vectors, like the bench's: for tests of the dense search."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]
DIM = 256  # more than PROJECTED_DIM, so the projection loses something


def centres(rng: np.random.Generator, count: int = 40) -> FloatMatrix:
    """Random unit vectors: the topics of `clustered`."""
    unit: FloatMatrix = rng.standard_normal((count, DIM), dtype=np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    return unit


def clustered(rng: np.random.Generator, n: int, topics: FloatMatrix) -> FloatMatrix:
    """Unit vectors each near one of `topics` (same-topic cosine about 0.4, as in the bench)."""
    noise = rng.standard_normal((n, DIM), dtype=np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    rows = 0.63 * topics[rng.integers(0, len(topics), n)] + 0.77 * noise
    unit: FloatMatrix = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit
