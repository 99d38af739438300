"""Dense vectors: unit rows in one contiguous float32 matrix, and their on-disk cache.

The cache is derived data: `vectors-<model>.npy` holds the rows as 8-bit integers with a scale
each (`quantize`: a quarter of float32 on disk, cosines within about 1e-3 of the exact ones;
older float16 and float32 files still load), `vectors-<model>.json` their keys (`vector_key`:
the memory's id and a hash of its text; a row under an older text is not taken), the
embedder's name and the size, time and CRC-32 of the `.npy` it belongs to (the CRC is checked
only when the time differs: a copied data dir keeps its vectors). Above a few thousand vectors,
`vectors-<model>.proj.npz` holds the fitted projection and the projected rows (float16, in the
order of the `.npy`; they only pick candidates), recorded in the `.json` the same way. A
missing, stale or unreadable cache only means those memories get embedded again, or the
projection fitted again.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from assistant.fileio import atomic_write_json, atomic_write_with
from assistant.memory.arrays import ensure_capacity, with_headroom
from assistant.memory.blas import one_thread
from assistant.memory.projection import Projection
from assistant.memory.quantize import pack, packed_width, stored, unpack_into

log = logging.getLogger(__name__)

CACHE_VERSION = 1  # the projection is optional: caches without it still load
OLDER_TYPES = (np.dtype(np.float16), np.dtype(np.float32))  # of unquantized rows in the .npy
PROJECTED_DIM = 128
REFIT_GROWTH = 4  # fit the projection again when the vectors have grown this many times
FloatMatrix = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]


class Refit(NamedTuple):
    """A snapshot to fit a projection on: the matrix (not copied), its used end, the slots
    with a vector, and how many those were."""

    rows: FloatMatrix
    end: int
    among: IntArray
    vectors: int

    def compute(self) -> tuple[Projection, FloatMatrix]:
        """Fit the projection and project the rows (the slow part: up to a second at 100k)."""
        projection = Projection.fit(self.rows, PROJECTED_DIM, among=self.among)
        return projection, projection.project(self.rows[: self.end])


class CachePaths(NamedTuple):
    """The cache files of one embedder."""

    vectors: Path
    meta: Path
    projection: Path


class VectorMatrix:
    """Unit vectors by slot; slots without a vector are marked as missing.

    Once there are enough vectors, a projection of them (`begin_refit`, `end_refit`) lets
    `nearest` score all rows cheaply and only the best candidates exactly.
    """

    def __init__(self, name: str, dim: int, capacity: int = 1024) -> None:
        self.name = name
        self.dim = dim
        self._m: FloatMatrix = np.zeros((capacity, dim), dtype=np.float32)
        self._has = np.zeros(capacity, dtype=bool)
        self._end = 0  # one past the highest slot ever set
        self._count = 0  # slots with a vector
        self._projection: Projection | None = None
        self._projected: FloatMatrix = np.zeros((0, 0), dtype=np.float32)  # rows of _m, projected
        self._fitted = 0  # vectors when the projection was fitted
        self._changed: list[int] | None = None  # slots set while a refit is computed
        self.restamp = False  # read from a cache whose files were copied: write it again

    @property
    def count(self) -> int:
        """How many slots have a vector."""
        return self._count

    @property
    def projection(self) -> Projection | None:
        """The projection used to pick candidates, once fitted."""
        return self._projection

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
        if not len(index):
            return
        size = int(index.max()) + 1
        self._m = ensure_capacity(self._m, size)
        self._has = ensure_capacity(self._has, size)
        self._count += int(np.count_nonzero(~self._has[np.unique(index)]))
        unit = stored(rows / norms[:, None])
        self._m[index] = unit
        self._has[index] = True
        self._end = max(self._end, size)
        if self._projection is not None:
            self._projected = ensure_capacity(self._projected, size)
            self._projected[index] = self._projection.project(unit)
        if self._changed is not None:
            self._changed.extend(index.tolist())

    def clear(self, slot: int) -> None:
        """Mark `slot` as having no vector."""
        if self.has(slot):
            self._has[slot] = False
            self._count -= 1

    def vector(self, slot: int) -> FloatMatrix | None:
        """The unit vector at `slot` (a copy), or None if it has none."""
        return self._m[slot].copy() if self.has(slot) else None

    def has(self, slot: int) -> bool:
        """Whether `slot` has a vector."""
        return slot < len(self._has) and bool(self._has[slot])

    def present(self, n_slots: int) -> npt.NDArray[np.bool_]:
        """A mask over the first `n_slots` slots: which have a vector."""
        mask = np.zeros(n_slots, dtype=bool)
        end = min(n_slots, self._end)
        mask[:end] = self._has[:end]
        return mask

    def refit_due(self, exact_up_to: int) -> bool:
        """Whether to fit the projection: once there are more than `exact_up_to` vectors, and
        again each time their number has grown `REFIT_GROWTH` times (amortized O(1) a vector)."""
        if self._count <= exact_up_to:
            return False
        return self._projection is None or self._count >= REFIT_GROWTH * self._fitted

    def begin_refit(self) -> Refit:
        """What a new projection is fitted on; from now on the slots set are noted, so that
        `end_refit` can project them again. `Refit.compute` may then run without a lock."""
        end = self._end
        self._changed = []
        return Refit(self._m, end, np.flatnonzero(self._has[:end]), self._count)

    def end_refit(self, refit: Refit, fitted: tuple[Projection, FloatMatrix] | None) -> None:
        """Adopt a computed projection (None: give up), projecting again the slots set since."""
        changed, self._changed = self._changed, None
        if fitted is None:
            return
        projection, projected = fitted
        projected = ensure_capacity(projected, self._end)
        if changed:
            slots = np.unique(np.asarray(changed, dtype=np.int64))
            projected[slots] = projection.project(self._m[slots])
        self._projection, self._projected, self._fitted = projection, projected, refit.vectors
        log.info("Fitted the projection of %s on %d vectors", self.name, refit.vectors)

    def nearest(
        self,
        query: FloatMatrix,
        allowed: npt.NDArray[np.bool_],
        depth: int,
        *,
        exact_up_to: int,
        candidates: int,
    ) -> tuple[IntArray, FloatMatrix]:
        """The up to `depth` slots with a vector among `allowed` most similar to the unit
        `query`, best first, and their exact cosines.

        With more than `exact_up_to` vectors and a projection, only the `candidates` best slots
        by the projected estimate are scored exactly; otherwise every slot is.
        """
        end = min(len(allowed), self._end)
        mask = allowed[:end] & self._has[:end]
        candidates = max(candidates, depth, 1)
        with one_thread():
            if self._projection is None or self._count <= exact_up_to or candidates >= end:
                slots = np.arange(end)
                sims: FloatMatrix = self._m[:end] @ query
                np.putmask(sims, ~mask, -np.inf)
            else:
                estimate = self._projected[:end] @ self._projection.project_query(query)
                np.putmask(estimate, ~mask, -np.inf)
                slots = np.argpartition(estimate, end - candidates)[end - candidates :]
                slots = np.sort(slots[mask[slots]])  # in memory order, for the rows' gather
                sims = self._m[slots] @ query
        kth = len(sims) - depth
        order = np.argpartition(sims, kth - 1)[kth:] if kth > 0 else np.arange(len(sims))
        order = order[np.lexsort((slots[order], -sims[order]))]  # equal ones by slot
        order = order[sims[order] > -np.inf]
        return slots[order], sims[order]

    def save(self, directory: Path, ids: list[str]) -> None:
        """Write the vectors of the slots that have one (`.npy`), their projection (`.proj.npz`),
        then their ids and the files' sizes and times (`.json`)."""
        end = min(self._end, len(ids))
        slots = np.flatnonzero(self._has[:end])
        every = len(slots) == end
        rows = pack(self._m[:end]) if every else pack(self._m, slots)
        paths = cache_paths(directory, self.name)
        atomic_write_with(
            paths.vectors, lambda f: np.lib.format.write_array(f, rows, allow_pickle=False)
        )
        checksum = zlib.crc32(np.ascontiguousarray(rows).data)
        projection: dict[str, int] | None = None
        if self._projection is not None:
            mean, basis = self._projection.mean, self._projection.basis
            projected = (self._projected[:end] if every else self._projected[slots]).astype(
                np.float16
            )
            atomic_write_with(
                paths.projection, lambda f: np.savez(f, mean=mean, basis=basis, rows=projected)
            )
            projection = {"fitted": self._fitted, **_stamp(paths.projection)}
        else:
            paths.projection.unlink(missing_ok=True)
        atomic_write_json(
            paths.meta,
            {
                "version": CACHE_VERSION,
                "name": self.name,
                "dim": self.dim,
                "npy": {**_stamp(paths.vectors), "crc32": checksum},
                "projection": projection,
                "ids": [ids[s] for s in slots],
            },
        )

    @classmethod
    def from_cache(cls, directory: Path, name: str, keys: list[str]) -> VectorMatrix | None:
        """The vectors cached for the embedder `name`, placed at the slots of their ids
        (`keys`: the `vector_key` of each slot).

        None when there is no cache, or it is of another model, unreadable or inconsistent. A
        bad projection is only left out. A `.npy` of the recorded size but another time (the
        data dir was copied or restored) is used if its rows have the recorded checksum; then
        `restamp` is set, so that the cache is written again.
        """
        paths = cache_paths(directory, name)
        try:
            meta = json.loads(paths.meta.read_text(encoding="utf-8"))
            if meta["version"] != CACHE_VERSION or meta["name"] != name:
                return None
            recorded, actual = meta["npy"], _stamp(paths.vectors)
            same_write = all(recorded[k] == actual[k] for k in actual)
            if not same_write and (recorded["size"] != actual["size"] or "crc32" not in recorded):
                raise ValueError("the vectors and their ids were not written together")
            ids, dim = meta["ids"], int(meta["dim"])
            with paths.vectors.open("rb") as f:
                major, _ = np.lib.format.read_magic(f)
                read_header = (
                    np.lib.format.read_array_header_1_0
                    if major == 1
                    else np.lib.format.read_array_header_2_0
                )
                shape, fortran, dtype = read_header(f)
                packed = (len(ids), packed_width(dim)) if dtype == np.int8 else None
                older = (len(ids), dim) if dtype in OLDER_TYPES else None
                if shape not in (packed, older) or fortran:
                    raise ValueError(f"unexpected array {shape} {dtype}")
                matrix, slots, checksum = cls._read_rows(
                    f, name, dim, ids, keys, dtype=dtype, checksum=not same_write
                )
            if not same_write:
                if checksum != recorded["crc32"]:
                    raise ValueError("the vectors are not those their ids were written with")
                matrix.restamp = True
        except FileNotFoundError:
            return None
        except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
            log.warning("Ignoring the vector cache of %s (%s); will re-embed", name, exc or "empty")
            return None
        matrix._read_projection(
            paths.projection, meta.get("projection"), slots, copied=not same_write
        )
        return matrix

    @classmethod
    def _read_rows(
        cls,
        f: io.BufferedReader,
        name: str,
        dim: int,
        ids: list[str],
        keys: list[str],
        *,
        dtype: np.dtype[Any],
        checksum: bool,
    ) -> tuple[VectorMatrix, IntArray, int | None]:
        """Read the rows (int8 with scales, or float16 or float32 from older caches) into the
        matrix; float32 rows in slot order straight into it.

        Also returns the slot of each row (-1 for ids the store no longer has) and, if asked
        for, the rows' CRC-32.
        """
        crc = None
        matrix = cls(name, dim, capacity=with_headroom(len(keys)))
        if ids == keys:  # a row for every slot, in order (no dictionary of 100,000 keys)
            slots = np.arange(len(ids), dtype=np.int64)
        else:
            slot_of = {key: slot for slot, key in enumerate(keys)}
            slots = np.fromiter((slot_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
        if _in_order(slots) and dtype == np.float32:
            target = matrix._m[: len(ids)]
            if f.readinto(target.data.cast("B")) != target.nbytes:
                raise ValueError("the vector file is truncated")
            if checksum:
                crc = zlib.crc32(target.data)
        else:
            width = packed_width(dim) if dtype == np.int8 else dim
            rows = np.fromfile(f, dtype=dtype, count=len(ids) * width).reshape(-1, width)
            if len(rows) != len(ids):
                raise ValueError("the vector file is truncated")
            if checksum:
                crc = zlib.crc32(rows.data)
            known = slots >= 0
            kept, to = (rows, slots) if known.all() else (rows[known], slots[known])
            if dtype == np.int8:
                unpack_into(kept, matrix._m, to)
            else:
                matrix._m[to] = kept
        placed = slots[slots >= 0]
        matrix._has[placed] = True
        matrix._end = int(placed.max()) + 1 if len(placed) else 0
        matrix._count = len(placed)
        return matrix, slots, crc

    def _read_projection(self, path: Path, info: Any, slots: IntArray, *, copied: bool) -> None:
        """Adopt the cached projection if it was written with the vectors just read.

        When the vectors were `copied` (and checked by content) its time is another one too.
        """
        if info is None:
            return
        try:
            recorded, actual = {k: info[k] for k in ("size", "mtime_ns")}, _stamp(path)
            if recorded != actual and not (copied and recorded["size"] == actual["size"]):
                raise ValueError("the projection and the vectors were not written together")
            fitted = int(info["fitted"])
            with np.load(path, allow_pickle=False) as arrays:
                mean, basis, rows = arrays["mean"], arrays["basis"], arrays["rows"]
            d = basis.shape[1] if basis.ndim == 2 else -1
            shapes = (mean.shape, basis.shape, rows.shape)
            if shapes != ((self.dim,), (self.dim, d), (len(slots), d)):
                raise ValueError(f"unexpected arrays {shapes}")
            if (
                mean.dtype != np.float32
                or basis.dtype != np.float32
                or rows.dtype not in OLDER_TYPES
            ):
                raise ValueError("unexpected array types")
            rows = rows.astype(np.float32)
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            log.warning(
                "Ignoring the cached projection of %s (%s); will fit it again", self.name, exc
            )
            return
        if _in_order(slots):
            projected = rows  # covers the slots up to _end; set_many grows it
        else:
            known = slots >= 0
            projected = np.zeros((len(self._m), d), dtype=np.float32)
            projected[slots[known]] = rows[known]
        self._projection, self._projected, self._fitted = Projection(mean, basis), projected, fitted


def _in_order(slots: IntArray) -> bool:
    """Whether the rows of a cache belong to slots 0, 1, 2...: then they can be copied whole."""
    return bool(np.array_equal(slots, np.arange(len(slots))))


def _stamp(path: Path) -> dict[str, int]:
    """The size and modification time of `path`: which write of it a record belongs to."""
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def vector_key(item_id: str, text: str) -> str:
    """What a memory's vector is cached under: its id and a hash of the text it was made from,
    so that a cached vector never outlives its text (an edit that a crash kept from the cache)."""
    return f"{item_id}#{hashlib.blake2b(text.encode('utf-8'), digest_size=8).hexdigest()}"


def cache_paths(directory: Path, name: str) -> CachePaths:
    """The cache files of the embedder called `name`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60]
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
    stem = f"vectors-{slug}-{digest}"
    return CachePaths(
        directory / f"{stem}.npy", directory / f"{stem}.json", directory / f"{stem}.proj.npz"
    )
