"""Dense vectors: unit rows in one contiguous float32 matrix, and their on-disk cache.

The cache is derived data: `vectors-<model>.npy` holds the rows, `vectors-<model>.json` their
memory ids, the embedder's name and the size and time of the `.npy` it belongs to. A missing,
stale or unreadable cache only means those memories get embedded again.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.fileio import atomic_write_json, atomic_write_with
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

    def save(self, directory: Path, ids: list[str]) -> None:
        """Write the vectors of the slots that have one (`.npy`), then their ids (`.json`)."""
        end = min(self._end, len(ids))
        slots = np.flatnonzero(self._has[:end])
        rows = self._m[:end] if len(slots) == end else self._m[slots]
        npy, meta = cache_paths(directory, self.name)
        atomic_write_with(npy, lambda f: np.lib.format.write_array(f, rows, allow_pickle=False))
        stat = npy.stat()
        atomic_write_json(
            meta,
            {
                "version": CACHE_VERSION,
                "name": self.name,
                "dim": self.dim,
                "npy": {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns},
                "ids": [ids[s] for s in slots],
            },
        )

    @classmethod
    def from_cache(cls, directory: Path, name: str, slot_of: dict[str, int]) -> VectorMatrix | None:
        """The vectors cached for the embedder `name`, placed at the slots of their ids.

        None when there is no cache, or it is of another model, unreadable or inconsistent.
        """
        npy, meta_path = cache_paths(directory, name)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            stat = npy.stat()
            if meta["version"] != CACHE_VERSION or meta["name"] != name:
                return None
            if meta["npy"] != {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}:
                raise ValueError("the vectors and their ids were not written together")
            ids, dim = meta["ids"], int(meta["dim"])
            with npy.open("rb") as f:
                major, _ = np.lib.format.read_magic(f)
                read_header = (
                    np.lib.format.read_array_header_1_0
                    if major == 1
                    else np.lib.format.read_array_header_2_0
                )
                shape, fortran, dtype = read_header(f)
                if shape != (len(ids), dim) or fortran or dtype != np.float32:
                    raise ValueError(f"unexpected array {shape} {dtype}")
                return cls._read_rows(f, name, dim, ids, slot_of)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("Ignoring the vector cache of %s (%s); will re-embed", name, exc)
            return None

    @classmethod
    def _read_rows(
        cls, f: io.BufferedReader, name: str, dim: int, ids: list[str], slot_of: dict[str, int]
    ) -> VectorMatrix:
        """Read the rows straight into the matrix when they are in slot order (the usual case)."""
        matrix = cls(name, dim, capacity=max(len(slot_of), 1024))
        slots = np.fromiter((slot_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
        if np.array_equal(slots, np.arange(len(ids))):
            target = matrix._m[: len(ids)]
            if f.readinto(target.data.cast("B")) != target.nbytes:
                raise ValueError("the vector file is truncated")
        else:
            rows = np.fromfile(f, dtype=np.float32, count=len(ids) * dim).reshape(-1, dim)
            if len(rows) != len(ids):
                raise ValueError("the vector file is truncated")
            known = slots >= 0
            slots = slots[known]
            matrix._m[slots] = rows[known]
        matrix._has[slots] = True
        matrix._end = int(slots.max()) + 1 if len(slots) else 0
        return matrix


def cache_paths(directory: Path, name: str) -> tuple[Path, Path]:
    """The cache files (vectors, ids) of the embedder called `name`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60]
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    stem = f"vectors-{slug}-{digest}"
    return directory / f"{stem}.npy", directory / f"{stem}.json"
