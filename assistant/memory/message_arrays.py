"""The searched messages of a conversation index as numpy arrays, for the search by meaning:
from a vector row to the message that has it, and from a message to the one before it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from assistant.memory.message_vectors import MessageVectors


@dataclass(frozen=True)
class SearchArrays:
    """The searched messages in key order: key, row of its vector (-1: none) and the position
    of the message before it (-1: none); and by vector row, the position of its message."""

    keys: npt.NDArray[np.int64]
    rows: npt.NDArray[np.int64]
    prev: npt.NDArray[np.int64]
    position_of_row: npt.NDArray[np.int64]
    position: dict[int, int]  # key -> its place in `keys`

    @classmethod
    def of(
        cls,
        docs: Mapping[int, tuple[str, str, str]],
        prev: Mapping[int, int],
        vectors: MessageVectors,
    ) -> SearchArrays:
        """From the indexed messages `docs` (key -> conversation, message, text), the key of
        the message before each (`prev`) and the `vectors` some of them have."""
        keys = np.array(sorted(docs), dtype=np.int64)
        position = {key: i for i, key in enumerate(keys.tolist())}
        rows = np.array([vectors.row(docs[key][:2]) for key in keys.tolist()], dtype=np.int64)
        before = np.array(
            [position.get(prev.get(key, -1), -1) for key in keys.tolist()], dtype=np.int64
        )
        position_of_row = np.full(len(vectors), -1, dtype=np.int64)
        has = rows >= 0
        position_of_row[rows[has]] = np.flatnonzero(has)
        return cls(keys, rows, before, position_of_row, position)

    def appended(self, key: int, row: int, prev_key: int) -> SearchArrays:
        """With a message of a key above all others (O(n) copies, no Python loop)."""
        place = len(self.keys)
        by_row = self.position_of_row
        if row >= 0:
            grow = max(0, row + 1 - len(by_row))
            by_row = np.concatenate((by_row, np.full(grow, -1, dtype=np.int64)))
            by_row[row] = place
        prev = self.position.get(prev_key, -1)
        self.position[key] = place  # shared: the arrays before this one are dropped
        return SearchArrays(
            np.append(self.keys, key),
            np.append(self.rows, row),
            np.append(self.prev, prev),
            by_row,
            self.position,
        )

    def placed(self, keys: Sequence[int], rows: Sequence[int]) -> SearchArrays:
        """With vectors (rows) for the messages of `keys`, in place where it can."""
        by_row = self.position_of_row
        grow = max(rows, default=-1) + 1 - len(by_row)
        if grow > 0:
            by_row = np.concatenate((by_row, np.full(grow, -1, dtype=np.int64)))
        for key, row in zip(keys, rows, strict=True):
            at = self.position.get(key)
            if at is not None:
                self.rows[at] = row
                by_row[row] = at
        return replace(self, position_of_row=by_row)
