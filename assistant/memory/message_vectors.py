"""The embeddings of conversation messages: one row per (conversation, message), and its cache.

Messages never change once written (an edit is a new sibling), so a message's vector is kept
under its ids for good, at the precision of the cache (`quantize`: 8 bits and a scale a row),
and held in memory that way too: a quarter of float32 (39 MB at 100,000 messages instead of
154), restored to float32 only for the rows a search scores exactly (the same values).
The cache `conversations/vectors-<model>.npz` (those rows, ids, model and dimension; older
caches have float16 rows) is a derived file: written atomically, ignored when unreadable or of
another model, and saved as embedding goes on, so a stopped run resumes where it was.
"""

from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.fileio import atomic_write_with
from assistant.memory.arrays import ensure_capacity
from assistant.memory.blas import one_thread
from assistant.memory.projection import Projection, draw
from assistant.memory.quantize import pack, packed_width, unpack

log = logging.getLogger(__name__)

CACHE_VERSION = 1
EXACT_UP_TO = 5000  # rows scanned exactly; above, a projection picks candidates first
PROJECTED_DIM = 64
REFIT_GROWTH = 4  # fit the projection again when the rows have grown this many times
SAMPLE = 2048  # rows a projection is fitted on (`Projection.fit`'s default)
CHUNK = 4096  # rows restored to float32 at a time to be projected
MessageKey = tuple[str, str]  # conversation id, message id
FloatMatrix = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Int8Matrix = npt.NDArray[np.int8]
Restore = Callable[[IntArray], FloatMatrix]  # rows (numbers) as float32


def cache_path(directory: Path, model: str, prefix: str = "vectors") -> Path:
    """Where the vectors of `model` are cached in the conversations directory (`prefix`
    "vectors": of the messages; "keys": of the texts messages are also indexed under)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
    return directory / f"{prefix}-{safe}.npz"


class Candidates:
    """The rows likely nearest a query, among many: above `EXACT_UP_TO` rows, picked by a
    `PROJECTED_DIM`-d PCA projection of every row (a sixth of the memory traffic of 384-d rows)
    and rescored exactly, as the semantic memory's dense search does. The projection is fitted
    in memory (a fraction of a second) when the rows first pass that size and again at each
    `REFIT_GROWTH`-fold growth. The rows themselves are the owner's: `restore(rows)` gives
    them as float32."""

    def __init__(self) -> None:
        self.projection: Projection | None = None
        self._projected: FloatMatrix = np.zeros((0, 0), dtype=np.float32)
        self._fitted_at = 0  # rows when the projection was fitted

    def update(self, restore: Restore, n: int, first: int) -> None:
        """Rows `first` to `n` (of `n`) are new: fit the projection if it is due, else project
        them."""
        if n > EXACT_UP_TO and (self.projection is None or n >= REFIT_GROWTH * self._fitted_at):
            picked, rng = draw(np.arange(n), SAMPLE, 0)
            self.projection = Projection.from_sample(restore(picked), PROJECTED_DIM, rng)
            self._projected = np.zeros((n, self.projection.d), dtype=np.float32)
            self._fitted_at, first = n, 0
        elif self.projection is None:
            return
        self._projected = ensure_capacity(self._projected, n)
        for start in range(first, n, CHUNK):  # a few MB of float32 rows at a time
            part = np.arange(start, min(n, start + CHUNK))
            self._projected[part] = self.projection.project(restore(part))

    def nearest(
        self, restore: Restore, n: int, query: FloatMatrix, candidates: int
    ) -> tuple[IntArray, FloatMatrix]:
        """Of `n` rows, those likely among the `candidates` most similar to the unit `query`,
        and their exact cosines (every row, up to `EXACT_UP_TO` rows or without a projection)."""
        with one_thread():
            if self.projection is None or candidates >= n:
                rows = np.arange(n, dtype=np.int64)
                sims: FloatMatrix = restore(rows) @ query
                return rows, sims
            estimate = self._projected[:n] @ self.projection.project_query(query)
            rows = np.sort(np.argpartition(estimate, n - candidates)[n - candidates :])
            exact: FloatMatrix = restore(rows) @ query
        return rows.astype(np.int64), exact


class MessageVectors:
    """Unit vectors of one model, by message; not thread-safe (the store holds its lock).
    `nearest` picks its candidates as `Candidates` says."""

    def __init__(self, model: str, dim: int, prefix: str = "vectors") -> None:
        self.model = model
        self.dim = dim
        self.prefix = prefix  # of the cache file's name
        self._packed: Int8Matrix = np.zeros((0, packed_width(dim)), dtype=np.int8)
        self._row: dict[MessageKey, int] = {}
        self._saved = 0  # rows in the cache file
        self._candidates = Candidates()

    def __len__(self) -> int:
        return len(self._row)

    @property
    def projection(self) -> Projection | None:
        """The projection used to pick candidates, once fitted (as `VectorMatrix.projection`)."""
        return self._candidates.projection

    def rows(self, index: npt.ArrayLike) -> FloatMatrix:
        """The unit vectors of these rows (row numbers), as float32."""
        return unpack(self._packed[np.asarray(index, dtype=np.int64)])

    def stored_keys(self) -> list[MessageKey]:
        """The keys of the rows, in order."""
        return list(self._row)

    def row(self, key: MessageKey) -> int:
        """The row of a message's vector, or -1."""
        return self._row.get(key, -1)

    def add(self, keys: list[MessageKey], vectors: npt.NDArray[np.float32]) -> None:
        """Store unit rows for messages (ValueError for the wrong shape or non-finite rows)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(keys), self.dim) or not np.isfinite(vectors).all():
            raise ValueError(f"expected {len(keys)} finite rows of {self.dim} values")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        packed = pack(vectors / np.maximum(norms, 1e-12))
        start = len(self._row)
        self._packed = ensure_capacity(self._packed, start + len(keys))
        first = start
        for i, key in enumerate(keys):
            row = self._row.setdefault(key, start)
            self._packed[row] = packed[i]
            start += row == start
        self._candidates.update(self.rows, start, first)

    def nearest(self, query: FloatMatrix, candidates: int) -> tuple[IntArray, FloatMatrix]:
        """Rows likely to be among the `candidates` most similar to the unit `query`, and their
        exact cosines (every row, up to `EXACT_UP_TO` rows or without a projection)."""
        return self._candidates.nearest(self.rows, len(self._row), query, candidates)

    def similarity(self, rows: IntArray, query: FloatMatrix) -> FloatMatrix:
        """The exact cosines of some rows with a unit `query`."""
        with one_thread():
            out: FloatMatrix = self.rows(rows) @ query
        return out

    def subset(self, keys: list[MessageKey]) -> MessageVectors:
        """A copy holding only the vectors of `keys` (those it has), as not saved yet."""
        have = [key for key in dict.fromkeys(keys) if key in self._row]
        out = MessageVectors(self.model, self.dim, self.prefix)
        out._packed = self._packed[[self._row[key] for key in have]]
        out._row = {key: i for i, key in enumerate(have)}
        out._candidates.update(out.rows, len(have), 0)
        return out

    @property
    def unsaved(self) -> int:
        """Rows added since the cache was last written or read."""
        return len(self._row) - self._saved

    def save(self, directory: Path) -> None:
        """Write the cache atomically, straight to the file (no copy of it in memory); a
        failure is logged, nothing is lost."""
        keys = list(self._row)
        arrays = {
            "version": np.array(CACHE_VERSION),
            "model": np.array(self.model),
            "conversations": np.array([c for c, _ in keys], dtype=str),
            "messages": np.array([m for _, m in keys], dtype=str),
            "vectors": self._packed[: len(keys)],
        }
        try:
            path = cache_path(directory, self.model, self.prefix)
            atomic_write_with(path, lambda f: np.savez(f, **arrays))  # type: ignore[arg-type]
        except OSError as exc:
            log.warning("Could not save the message vectors: %s", exc)
            return
        self._saved = len(keys)

    @classmethod
    def load(cls, directory: Path, model: str, prefix: str = "vectors") -> MessageVectors | None:
        """The cached vectors of `model`, or None if there are none usable."""
        path = cache_path(directory, model, prefix)
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["version"]) != CACHE_VERSION or str(data["model"]) != model:
                    return None
                vectors = data["vectors"]
                if vectors.dtype != np.int8 and vectors.ndim == 2:  # older float16 rows
                    vectors = pack(vectors.astype(np.float32))
                conversations = data["conversations"].tolist()
                messages = data["messages"].tolist()
        except FileNotFoundError:
            return None
        except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            log.warning("Ignoring the message vector cache %s: %s", path.name, exc or "empty")
            return None
        if vectors.ndim != 2 or not len(vectors) == len(messages) == len(conversations):
            return None
        out = cls(model, vectors.shape[1] - packed_width(0), prefix)
        out._packed = vectors
        out._row = {key: i for i, key in enumerate(zip(conversations, messages, strict=True))}
        out._saved = len(out._row)
        out._candidates.update(out.rows, len(out._row), 0)
        return out
