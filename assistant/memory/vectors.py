"""Dense vectors: unit rows in one contiguous float32 matrix, and their on-disk cache.

The cache (`vectors-<model>.npz`: the vectors, the memory ids of the rows and the embedder's
name) is derived data. A missing, stale or unreadable cache only means those memories get
embedded again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.fileio import atomic_write_with
from assistant.memory.arrays import ensure_capacity

log = logging.getLogger(__name__)

CACHE_VERSION = 1
FloatMatrix = npt.NDArray[np.float32]


class VectorMatrix:
    """Unit vectors by slot; slots without a vector are marked as missing."""

    def __init__(self, name: str, dim: int, capacity: int = 1024) -> None:
        self.name = name
        self.dim = dim
        self._m: FloatMatrix = np.zeros((capacity, dim), dtype=np.float32)
        self._has = np.zeros(capacity, dtype=bool)
        self._end = 0  # one past the highest slot ever set

    def set(self, slot: int, vector: npt.ArrayLike) -> None:
        """Store `vector`, normalized to unit length, at `slot`."""
        self.set_many([slot], np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def set_many(self, slots: Iterable[int], vectors: npt.ArrayLike) -> None:
        """Store one normalized row per slot; raises ValueError for a wrong shape or a zero row."""
        rows = np.asarray(vectors, dtype=np.float32)
        index = np.fromiter(slots, dtype=np.int64)
        if rows.ndim != 2 or rows.shape != (len(index), self.dim):
            raise ValueError(
                f"expected {len(index)} vectors of dimension {self.dim}, got {rows.shape}"
            )
        norms = np.linalg.norm(rows, axis=1)
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            raise ValueError("a vector is zero or not finite")
        if len(index):
            self._m = ensure_capacity(self._m, int(index.max()) + 1)
            self._has = ensure_capacity(self._has, int(index.max()) + 1)
            self._m[index] = rows / norms[:, None]
            self._has[index] = True
            self._end = max(self._end, int(index.max()) + 1)

    def clear(self, slot: int) -> None:
        """Mark `slot` as having no vector."""
        if slot < len(self._has):
            self._has[slot] = False

    def has(self, slot: int) -> bool:
        """Whether `slot` has a vector."""
        return slot < len(self._has) and bool(self._has[slot])

    def get(self, slot: int) -> FloatMatrix:
        """The unit vector at `slot` (a copy)."""
        if not self.has(slot):
            raise KeyError(slot)
        row: FloatMatrix = self._m[slot].copy()
        return row

    def present(self, n_slots: int) -> npt.NDArray[np.bool_]:
        """A mask over the first `n_slots` slots: which have a vector."""
        mask = np.zeros(n_slots, dtype=bool)
        end = min(n_slots, self._end)
        mask[:end] = self._has[:end]
        return mask

    def similarities(self, query: FloatMatrix, n_slots: int) -> npt.NDArray[np.float32]:
        """Cosine similarity of the unit `query` with the first `n_slots` slots (0 if missing)."""
        sims = np.zeros(n_slots, dtype=np.float32)
        end = min(n_slots, self._end)
        if end:
            sims[:end] = self._m[:end] @ query
        return sims

    def save(self, path: Path, ids: list[str]) -> None:
        """Write the vectors of the slots that have one, with the ids of those slots."""
        end = min(self._end, len(ids))
        slots = np.flatnonzero(self._has[:end])
        meta = json.dumps({"version": CACHE_VERSION, "name": self.name, "dim": self.dim})

        def write(f: object) -> None:
            np.savez(
                f,  # type: ignore[arg-type]
                vectors=self._m[slots],
                ids=np.array([ids[s] for s in slots], dtype=str),
                meta=np.array(meta),
            )

        atomic_write_with(path, write)

    @classmethod
    def from_cache(cls, path: Path, name: str, slot_of: dict[str, int]) -> VectorMatrix | None:
        """The vectors cached in `path` for the embedder `name`, placed at the ids' slots.

        None when there is no cache, or it is of another model, unreadable or inconsistent.
        """
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                if meta.get("version") != CACHE_VERSION or meta.get("name") != name:
                    return None
                ids = data["ids"].tolist()
                vectors = data["vectors"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.warning("Ignoring unreadable vector cache %s (%s); will re-embed", path.name, exc)
            return None
        dim = int(meta.get("dim", 0))
        if dim <= 0 or vectors.shape != (len(ids), dim):
            log.warning("Ignoring inconsistent vector cache %s; will re-embed", path.name)
            return None
        matrix = cls(name, dim, capacity=max(len(slot_of), 1024))
        rows = [(slot_of[i], row) for row, i in enumerate(ids) if i in slot_of]
        if rows:
            slots, picked = zip(*rows, strict=True)
            try:
                matrix.set_many(slots, vectors[list(picked)])
            except ValueError as exc:
                log.warning("Ignoring vector cache %s (%s); will re-embed", path.name, exc)
                return None
        return matrix


def cache_path(directory: Path, name: str) -> Path:
    """The cache file of the embedder called `name`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60]
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    return directory / f"vectors-{slug}-{digest}.npz"
