"""The embeddings of conversation messages: one row per (conversation, message), and its cache.

Messages never change once written (an edit is a new sibling), so a message's vector is kept
under its ids for good. The cache `conversations/vectors-<model>.npz` (float16 rows, ids,
model and dimension) is a derived file: written atomically, ignored when unreadable or of
another model, and saved as embedding goes on, so a stopped run resumes where it was.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.fileio import atomic_write_bytes
from assistant.memory.arrays import ensure_capacity

log = logging.getLogger(__name__)

CACHE_VERSION = 1
MessageKey = tuple[str, str]  # conversation id, message id


def cache_path(directory: Path, model: str) -> Path:
    """Where the vectors of `model` are cached in the conversations directory."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
    return directory / f"vectors-{safe}.npz"


class MessageVectors:
    """Unit vectors of one model, by message; not thread-safe (the store holds its lock)."""

    def __init__(self, model: str, dim: int) -> None:
        self.model = model
        self.dim = dim
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self._row: dict[MessageKey, int] = {}
        self._saved = 0  # rows in the cache file

    def __len__(self) -> int:
        return len(self._row)

    def row(self, key: MessageKey) -> int:
        """The row of a message's vector, or -1."""
        return self._row.get(key, -1)

    def add(self, keys: list[MessageKey], vectors: npt.NDArray[np.float32]) -> None:
        """Store unit rows for messages (ValueError for the wrong shape or non-finite rows)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(keys), self.dim) or not np.isfinite(vectors).all():
            raise ValueError(f"expected {len(keys)} finite rows of {self.dim} values")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.maximum(norms, 1e-12)
        start = len(self._row)
        self.matrix = ensure_capacity(self.matrix, start + len(keys))
        for i, key in enumerate(keys):
            row = self._row.setdefault(key, start)
            self.matrix[row] = vectors[i]
            start += row == start

    def similarities(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The cosine of every stored row with a unit `query`, by row."""
        out: npt.NDArray[np.float32] = self.matrix[: len(self._row)] @ query
        return out

    @property
    def unsaved(self) -> int:
        """Rows added since the cache was last written or read."""
        return len(self._row) - self._saved

    def save(self, directory: Path) -> None:
        """Write the cache (float16 rows) atomically; a failure is logged, nothing is lost."""
        keys = list(self._row)
        buffer = io.BytesIO()
        np.savez(
            buffer,
            version=np.array(CACHE_VERSION),
            model=np.array(self.model),
            conversations=np.array([c for c, _ in keys], dtype=str),
            messages=np.array([m for _, m in keys], dtype=str),
            vectors=self.matrix[: len(keys)].astype(np.float16),
        )
        try:
            atomic_write_bytes(cache_path(directory, self.model), buffer.getvalue())
        except OSError as exc:
            log.warning("Could not save the message vectors: %s", exc)
            return
        self._saved = len(keys)

    @classmethod
    def load(cls, directory: Path, model: str) -> MessageVectors | None:
        """The cached vectors of `model`, or None if there are none usable."""
        path = cache_path(directory, model)
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["version"]) != CACHE_VERSION or str(data["model"]) != model:
                    return None
                vectors = data["vectors"].astype(np.float32)
                conversations = data["conversations"].tolist()
                messages = data["messages"].tolist()
        except FileNotFoundError:
            return None
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            log.warning("Ignoring the message vector cache %s: %s", path.name, exc)
            return None
        if vectors.ndim != 2 or not len(vectors) == len(messages) == len(conversations):
            return None
        out = cls(model, vectors.shape[1])
        out.matrix = vectors
        out._row = {key: i for i, key in enumerate(zip(conversations, messages, strict=True))}
        out._saved = len(out._row)
        return out
