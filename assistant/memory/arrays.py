"""Numpy arrays that grow geometrically, so appending stays amortized O(1)."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

_T = TypeVar("_T", bound=np.generic)


def ensure_capacity(a: npt.NDArray[_T], size: int) -> npt.NDArray[_T]:
    """`a` itself if it has `size` rows, else a zero-padded copy with at least twice the rows."""
    if size <= len(a):
        return a
    out = np.zeros((max(size, 2 * len(a)), *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out
