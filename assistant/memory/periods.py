"""A named period's own candidates: the best messages written in the period a query names join
the search's candidates.

A query that names a period ("in May 2023", "last week") favours the messages written in it
(`SearchConfig.date_weight`), but only those among the best `depth` of the whole history by
keywords or meaning; an answer from that week that says little in the query's words is not among
them. LongMemEval's time-aware retrieval (Wu et al., 2024) narrows the search to the period;
here the best `depth` of each ranking within the period are added to the candidates
(`SearchConfig.period_candidates`), which are then fused and weighed as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Ranking = list[tuple[int, float]]  # (key, score), best first


class Timeline(dict[int, str]):
    """When each message was written (key -> ISO 8601 stamp, which sorts as time does), that
    finds the keys written in a period by a binary search (sorted again after a change, unless
    the change is a message newer than all, as a chat's next message is)."""

    _sorted: tuple[npt.NDArray[np.int64], npt.NDArray[np.str_]] | None = None

    def __setitem__(self, key: int, written: str) -> None:
        known = key in self
        super().__setitem__(key, written)
        if self._sorted is None:
            return
        keys, stamps = self._sorted
        if not known and (not len(stamps) or written >= stamps[-1]):
            self._sorted = np.append(keys, key), np.append(stamps, written)
        else:
            self._sorted = None

    def __delitem__(self, key: int) -> None:
        super().__delitem__(key)
        self._sorted = None

    def written_in(self, start: str, end: str) -> list[int]:
        """The keys written in [start, end) (stamps), in the order they were written."""
        if self._sorted is None:
            keys = np.fromiter(self.keys(), dtype=np.int64, count=len(self))
            stamps = np.array(list(self.values()), dtype=np.str_)
            order = np.argsort(stamps, kind="stable")
            self._sorted = keys[order], stamps[order]
        keys, stamps = self._sorted
        low, high = np.searchsorted(stamps, [start, end])
        return [int(key) for key in keys[low:high]]


def flags(keys: Sequence[int]) -> npt.NDArray[np.bool_]:
    """A flag per key up to the largest of `keys`, set for those (for `BM25Index.top`)."""
    out = np.zeros(max(keys, default=-1) + 1, dtype=bool)
    out[list(keys)] = True
    return out


def best(keys: Sequence[int], scores: Sequence[float], depth: int, floor: float) -> Ranking:
    """The best `depth` of `keys` by `scores` that reach `floor`, best first."""
    ranked = sorted(zip(keys, scores, strict=True), key=lambda pair: (-pair[1], pair[0]))
    return [(key, score) for key, score in ranked if score >= floor][:depth]


def joined(ranking: Ranking, extra: Ranking) -> Ranking:
    """Both rankings as one, best first, each key once."""
    have = {key for key, _ in ranking}
    merged = ranking + [(key, score) for key, score in extra if key not in have]
    return sorted(merged, key=lambda pair: -pair[1])
