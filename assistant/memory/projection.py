"""A linear projection of unit vectors onto their main directions (PCA), for a cheap first pass.

Dense search first scores every row in the projected space (`d` numbers a row instead of the
embedder's 1536 or so), then rescores the best candidates exactly. Ranking by `q . (x - mean)`
is ranking by `q . x`, since `q . mean` is the same for every row, so the estimate of a row's
score is `(basis.T q) . project(x)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from assistant.memory.blas import one_thread

FloatMatrix = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

_OVERSAMPLE = 16  # extra columns of the randomized SVD's test matrix
_POWER_ITERATIONS = 2


@dataclass(frozen=True, eq=False)
class Projection:
    """Centre on `mean`, then take coordinates along the orthonormal columns of `basis`."""

    mean: FloatMatrix  # (dim,)
    basis: FloatMatrix  # (dim, d)

    @classmethod
    def fit(
        cls,
        rows: FloatMatrix,
        d: int = 128,
        sample: int = 2048,
        seed: int = 0,
        *,
        among: IntArray | None = None,
    ) -> Projection:
        """The top-`d` principal directions of up to `sample` rows drawn with `seed`.

        Rows are drawn from `among` (row indices; all rows by default). A randomized SVD
        (Halko et al.) with power iterations finds the directions; the same rows, `d`, `sample`
        and `seed` always give the same projection.
        """
        picked, rng = draw(np.arange(len(rows)) if among is None else among, sample, seed)
        return cls.from_sample(np.asarray(rows[picked], dtype=np.float32), d, rng)

    @classmethod
    def from_sample(cls, x: FloatMatrix, d: int, rng: np.random.Generator) -> Projection:
        """`fit` on the rows `draw` picked (`x`, float32, changed in place) and its generator."""
        mean = x.mean(axis=0)
        x -= mean
        dim = x.shape[1]
        d = min(d, len(x), dim)
        width = min(d + _OVERSAMPLE, len(x), dim)
        # Small products: one BLAS thread (measured with the other core busy, 0.3-0.5 s
        # instead of 9-14 s for 10,000 x 384 rows; see `blas`).
        with one_thread():
            q, _ = np.linalg.qr(x @ rng.standard_normal((dim, width), dtype=np.float32))
            for _ in range(_POWER_ITERATIONS):
                z, _ = np.linalg.qr(x.T @ q)
                q, _ = np.linalg.qr(x @ z)
            _, _, vt = np.linalg.svd(q.T @ x, full_matrices=False)
        return cls(mean, np.ascontiguousarray(vt[:d].T))

    @property
    def d(self) -> int:
        """The number of projected coordinates."""
        return int(self.basis.shape[1])

    @cached_property
    def _offset(self) -> FloatMatrix:
        offset: FloatMatrix = self.mean @ self.basis
        return offset

    def project(self, rows: FloatMatrix) -> FloatMatrix:
        """The coordinates of `rows` (n, dim) as (n, d), without copying the centred rows."""
        with one_thread():
            out: FloatMatrix = rows @ self.basis
        out -= self._offset
        return out

    def project_query(self, query: FloatMatrix) -> FloatMatrix:
        """The query (dim,) in the projected space: its score estimates are dot products."""
        projected: FloatMatrix = self.basis.T @ query
        return projected


def draw(pool: IntArray, sample: int, seed: int) -> tuple[IntArray, np.random.Generator]:
    """The rows of `pool` a fit with `seed` uses (up to `sample`, in order), and the generator
    that goes on to draw its test matrix."""
    rng = np.random.default_rng(seed)
    pool = np.asarray(pool, dtype=np.int64)
    if not len(pool):
        raise ValueError("a projection needs at least one row")
    return np.sort(rng.choice(pool, min(sample, len(pool)), replace=False)), rng
