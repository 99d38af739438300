"""The vectors of knowledge passages: a row per distinct text, by its digest, appended to a file
that searches read through a memory map.

`knowledge/vectors-<model>.bin` is a JSON header line (format, version, model, dimension; padded
to a multiple of 64 bytes) and rows of one width: the digest of the text (16 bytes), the vector
at 8 bits with its scale (`quantize`), and a CRC-32 of both. A save appends the rows embedded
since the last one (one write, one fsync): a change writes its own rows. The rows on disk take
no private memory: a search restores to float32 only those it scores exactly, through a
read-only map, and the projection that picks them (`Candidates`, in memory) is made from rows
read with plain reads, so that opening leaves no page of the file mapped.

Rows whose texts are no longer indexed are garbage: once they outnumber the rows in use (and
`COMPACT_FROM`), `compact` rewrites the file with the rows in use (atomically). An incomplete
last row (a crash while appending) is cut off; a row whose CRC does not match is never used (its
text is embedded again); a file of another model or version, or one that cannot be read, is
replaced by an empty one. The file is derived from the passages and can always be made again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assistant import failpoints
from assistant.errors import StorageError
from assistant.fileio import BINARY, NOFOLLOW, atomic_write_bytes, atomic_write_with, writing
from assistant.memory.arrays import ensure_capacity
from assistant.memory.jsonl import Appender
from assistant.memory.message_vectors import Candidates, MessageVectors, cache_path
from assistant.memory.quantize import pack, packed_width, unpack

log = logging.getLogger(__name__)

FORMAT = "assistant.knowledge.vectors"
VERSION = 1
DIGEST_BYTES = 16
COMPACT_FROM = 1024  # unused rows before the file is rewritten without them
READ_ROWS = 4096  # rows read at a time when the file is opened or rewritten
FloatMatrix = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Int8Matrix = npt.NDArray[np.int8]


def vectors_path(directory: Path, model: str) -> Path:
    """Where the passage vectors of `model` are kept in the knowledge directory."""
    return cache_path(directory, model).with_suffix(".bin")


def _row_dtype(dim: int) -> np.dtype[Any]:
    return np.dtype(
        [("digest", f"V{DIGEST_BYTES}"), ("packed", np.int8, (packed_width(dim),)), ("crc", "<u4")]
    )


def _header(model: str, dim: int) -> bytes:
    text = json.dumps({"format": FORMAT, "version": VERSION, "model": model, "dim": dim})
    width = -(-(len(text.encode()) + 1) // 64) * 64
    return text.encode().ljust(width - 1) + b"\n"


class VectorLog:
    """Unit vectors of one model by text digest, on disk at `path` (None: in memory only).

    Not thread-safe: `FileIndex` holds its lock around every call.
    """

    def __init__(self, path: Path | None, model: str, dim: int) -> None:
        self.path = path
        self.model = model
        self.dim = dim
        self._dtype = _row_dtype(dim)
        self._start = len(_header(model, dim))  # where the rows begin in the file
        self._row: dict[bytes, int] = {}
        self._disk = 0  # rows in the file
        self._map: npt.NDArray[Any] | None = None  # the rows in the file, mapped
        self._tail: Int8Matrix = np.zeros((0, packed_width(dim)), dtype=np.int8)  # the others
        self._tail_digests: list[bytes] = []
        self._candidates = Candidates()
        self._appender: Appender | None = None

    def __len__(self) -> int:
        return self._disk + len(self._tail_digests)

    @property
    def unsaved(self) -> int:
        """Rows not in the file yet."""
        return len(self._tail_digests) if self.path is not None else 0

    def row(self, digest: bytes) -> int:
        """The row of a text's vector, or -1."""
        return self._row.get(digest, -1)

    def digests(self) -> dict[bytes, int]:
        """Every usable row by its digest (for checks)."""
        return dict(self._row)

    def rows(self, index: npt.ArrayLike) -> FloatMatrix:
        """The unit vectors of these rows, as float32 (the file's through the map)."""
        return self._restore(np.asarray(index, dtype=np.int64), mapped=True)

    def _restore(self, index: IntArray, *, mapped: bool) -> FloatMatrix:
        out = np.empty((len(index), self.dim), dtype=np.float32)
        on_disk = index < self._disk
        if on_disk.any():
            rows = index[on_disk]
            packed = self._mapped(rows) if mapped else self._read(rows)
            out[on_disk] = unpack(packed)
        if not on_disk.all():
            out[~on_disk] = unpack(self._tail[index[~on_disk] - self._disk])
        return out

    def _mapped(self, rows: IntArray) -> Int8Matrix:
        if self._map is None:  # closed: mapped again
            self._remap()
        assert self._map is not None
        return np.asarray(self._map["packed"][rows])

    def _read(self, rows: IntArray) -> Int8Matrix:
        """The packed rows read from the file with plain reads (no page of it stays mapped)."""
        assert self.path is not None
        out = np.empty((len(rows), packed_width(self.dim)), dtype=np.int8)
        width = self._dtype.itemsize
        with writing(self.path, "read"), self.path.open("rb") as f:
            i = 0
            while i < len(rows):  # runs of consecutive rows in one read
                j = i + 1
                while j < len(rows) and rows[j] == rows[j - 1] + 1 and j - i < READ_ROWS:
                    j += 1
                f.seek(self._start + int(rows[i]) * width)
                data = np.frombuffer(f.read((j - i) * width), dtype=self._dtype)
                out[i:j] = data["packed"]
                i = j
        return out

    def add(self, digests: Sequence[bytes], vectors: FloatMatrix) -> None:
        """Keep unit rows for these texts (ValueError for the wrong shape or non-finite rows);
        they go to the file at the next `save`."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(digests), self.dim) or not np.isfinite(vectors).all():
            raise ValueError(f"expected {len(digests)} finite rows of {self.dim} values")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        packed = pack(vectors / np.maximum(norms, 1e-12))
        first = len(self)
        fresh = [i for i, d in enumerate(digests) if d not in self._row]
        fresh = list({digests[i]: i for i in fresh}.values())  # a text once (its last vector)
        used = len(self._tail_digests)
        self._tail = ensure_capacity(self._tail, used + len(fresh))
        for n, i in enumerate(fresh):
            self._tail[used + n] = packed[i]
            self._tail_digests.append(digests[i])
            self._row[digests[i]] = first + n
        self._candidates.update(self._bulk, len(self), first)

    def _bulk(self, index: IntArray) -> FloatMatrix:
        return self._restore(index, mapped=False)

    def nearest(self, query: FloatMatrix, candidates: int) -> tuple[IntArray, FloatMatrix]:
        """Rows likely among the `candidates` most similar to the unit `query`, and their exact
        cosines (`Candidates.nearest`)."""
        return self._candidates.nearest(self.rows, len(self), query, candidates)

    # -- the file --------------------------------------------------------------------------------

    def save(self) -> None:
        """Append the rows not in the file yet (durably; StorageError if they cannot be)."""
        if self.path is None or not self._tail_digests:
            return
        n = len(self._tail_digests)
        if self._appender is None:
            if self._disk == 0:  # a new file: its header first
                atomic_write_bytes(self.path, _header(self.model, self.dim))
            self._appender = Appender(self.path)
        self._appender.append_bytes(self._encode(self._tail_digests, self._tail[:n]))
        self._disk += n
        self._tail = self._tail[n:]
        self._tail_digests = []
        self._remap()

    def _encode(self, digests: Sequence[bytes], packed: Int8Matrix) -> bytes:
        """Rows as they are written: digest, packed vector, CRC-32 of both."""
        rows = np.zeros(len(digests), dtype=self._dtype)
        rows["digest"] = np.frombuffer(b"".join(digests), dtype=f"V{DIGEST_BYTES}")
        rows["packed"] = packed
        raw, width = rows.tobytes(), self._dtype.itemsize
        rows["crc"] = [zlib.crc32(raw[j : j + width - 4]) for j in range(0, len(raw), width)]
        return rows.tobytes()

    def _remap(self) -> None:
        """Map the rows in the file afresh (after it grew or was replaced)."""
        self._map = None
        if self.path is None or not self._disk:
            return
        with writing(self.path, "read"):
            self._map = np.memmap(
                self.path, dtype=self._dtype, mode="r", offset=self._start, shape=(self._disk,)
            )

    def garbage(self, used: npt.NDArray[np.bool_]) -> int:
        """Rows no text uses, given which rows are `used`."""
        return len(self) - int(used[: len(self)].sum())

    def compact(self, used: npt.NDArray[np.bool_]) -> IntArray:
        """Keep only the `used` rows (in order; the file rewritten atomically); returns the new
        number of each old row (-1: dropped). StorageError if the file cannot be written."""
        n = len(self)
        keep = np.flatnonzero(used[:n] & self._usable(n))
        new_of_old = np.full(n, -1, dtype=np.int64)
        new_of_old[keep] = np.arange(len(keep))
        digests = [d for d, _ in sorted(self._row.items(), key=lambda item: item[1])]
        kept_digests = [d for d in digests if used[self._row[d]]]
        if self.path is not None:

            def write(f: Any) -> None:
                f.write(_header(self.model, self.dim))
                for start in range(0, len(keep), READ_ROWS):
                    part = keep[start : start + READ_ROWS]
                    f.write(self._encode(kept_digests[start : start + len(part)],
                                         self._packed(part)))  # fmt: skip

            self._close()
            atomic_write_with(self.path, write)
            self._disk, self._tail, self._tail_digests = len(keep), self._tail[:0], []
            self._remap()
        else:
            self._tail = self._tail[keep]
            self._tail_digests = kept_digests
        self._row = {d: i for i, d in enumerate(kept_digests)}
        self._candidates = Candidates()
        self._candidates.update(self._bulk, len(self), 0)
        return new_of_old

    def _usable(self, n: int) -> npt.NDArray[np.bool_]:
        usable = np.zeros(n, dtype=bool)
        usable[list(self._row.values())] = True
        return usable

    def _packed(self, rows: IntArray) -> Int8Matrix:
        out = np.empty((len(rows), packed_width(self.dim)), dtype=np.int8)
        on_disk = rows < self._disk
        if on_disk.any():
            out[on_disk] = self._read(rows[on_disk])
        if not on_disk.all():
            out[~on_disk] = self._tail[rows[~on_disk] - self._disk]
        return out

    def _close(self) -> None:
        self._map = None
        if self._appender is not None:
            self._appender.close()
            self._appender = None

    def close(self) -> None:
        """Close the file (the rows not saved are lost: `save` first)."""
        self._close()

    @classmethod
    def load(cls, directory: Path, model: str) -> VectorLog | None:
        """The vectors of `model` kept in `directory`, or None if there are none usable (a file
        that is not one is removed, so that a new one can be started). The cache of an older
        version (`MessageVectors`, by hex digest) is carried over into a new file."""
        path = vectors_path(directory, model)
        try:
            return cls._load(path, model)
        except FileNotFoundError:
            return cls._carry_over(directory, model)
        except (OSError, ValueError, KeyError, TypeError, StorageError) as exc:
            log.warning("Starting the passage vectors %s afresh: %s", path.name, exc or "empty")
            with contextlib.suppress(OSError):
                failpoints.reach("delete", path)
                path.unlink()
            return None

    @classmethod
    def _carry_over(cls, directory: Path, model: str) -> VectorLog | None:
        old = MessageVectors.load(directory, model)
        if old is None:
            return None
        keys = [key for key in old.stored_keys() if key[0] == "chunk"]
        out = cls(vectors_path(directory, model), model, old.dim)
        try:
            digests = [bytes.fromhex(text)[:DIGEST_BYTES] for _, text in keys]
        except ValueError:
            return None
        out.add(digests, old.rows([old.row(key) for key in keys]))
        try:
            out.save()
            cache_path(directory, model).unlink()
        except (StorageError, OSError) as exc:
            log.warning("Could not carry the passage vectors over: %s", exc)
        return out

    @classmethod
    def _load(cls, path: Path, model: str) -> VectorLog | None:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | BINARY)
        with os.fdopen(fd, "rb") as f:
            header = f.readline(4096)
            raw = json.loads(header)
            if not isinstance(raw, dict):
                raise ValueError("not a passage vector file")
            if (raw.get("format"), raw.get("version")) != (FORMAT, VERSION):
                raise ValueError("not a passage vector file of this version")
            if raw.get("model") != model:
                raise ValueError("the vectors of another model")
            out = cls(path, model, int(raw["dim"]))
            if len(header) != out._start:
                raise ValueError("a damaged header")
            size = os.fstat(f.fileno()).st_size
            width = out._dtype.itemsize
            whole = (size - out._start) // width
            if out._start + whole * width != size:  # an append cut short: cut it off
                _truncate(path, out._start + whole * width)
            body = width - 4
            for start in range(0, whole, READ_ROWS):
                data = f.read(min(READ_ROWS, whole - start) * width)
                rows = np.frombuffer(data, dtype=out._dtype)
                crcs = rows["crc"].tolist()
                view = memoryview(data)
                for i in range(len(rows)):
                    if zlib.crc32(view[i * width : i * width + body]) == crcs[i]:
                        out._row[rows["digest"][i].tobytes()] = start + i
            out._disk = whole
        bad = whole - len(out._row)
        if bad:
            log.warning("%s: %d damaged rows are not used (embedded again)", path.name, bad)
        out._candidates.update(out._bulk, whole, 0)
        out._remap()
        return out


def _truncate(path: Path, size: int) -> None:
    with writing(path, "repair"):
        failpoints.reach("repair", path)
        fd = os.open(path, os.O_WRONLY | NOFOLLOW | BINARY)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)
