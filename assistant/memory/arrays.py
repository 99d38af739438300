"""Numpy arrays that grow geometrically, so appending stays amortized O(1)."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

_T = TypeVar("_T", bound=np.generic)


def with_headroom(n: int) -> int:
    """Rows to allocate for `n` items that will grow: a quarter more, so that the first adds
    after opening copy nothing (zero pages cost no memory until written)."""
    return max(1024, n + n // 4)


def ensure_capacity(a: npt.NDArray[_T], size: int) -> npt.NDArray[_T]:
    """`a` itself if it has `size` rows, else a zero-padded copy with at least twice the rows."""
    if size <= len(a):
        return a
    out = np.zeros((max(size, 2 * len(a)), *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out
