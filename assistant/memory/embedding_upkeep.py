"""Embedding upkeep for the memory store: its embedder, and the vectors it keeps in the index.

Embedding calls a model (seconds, or a server), so it happens outside the store's lock; the
vectors are stored under it, and only if the item's text and the embedder are still those they
were computed for. The dense search's projection is fitted outside the lock too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assistant.errors import AssistantError, ProviderError
from assistant.memory.embedding import Embedder, embedding_batches
from assistant.memory.memory_index import MemoryIndex

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Embedded:
    """Vectors and the embedder that made them."""

    embedder: Embedder
    vectors: npt.NDArray[np.float32]


@dataclass(frozen=True)
class EmbeddingStatus:
    """How much of the active memory has vectors, and why search may be keyword-only."""

    model: str | None
    embedded: int
    total: int
    error: str | None = None

    @property
    def keyword_only(self) -> bool:
        """Whether searches currently use BM25 alone."""
        return self.model is None or self.error is not None or self.embedded == 0


class EmbeddingUpkeep:
    """The store's embedder, its last error, and the vectors it keeps up to date."""

    def __init__(
        self,
        index: MemoryIndex,
        lock: threading.RLock,
        embedder: Embedder | None,
        changed: Callable[[], None],
    ) -> None:
        """`changed` tells the store's subscribers ("embeddings")."""
        self._index = index
        self._lock = lock
        self._embedder = embedder
        self._changed = changed
        self._error: str | None = None
        self._refitting = False  # a projection is being fitted, outside the lock

    @property
    def model(self) -> str | None:
        """The embedder's name, if there is one."""
        return None if self._embedder is None else self._embedder.name

    def load(self) -> None:
        """Take the cached vectors of the embedder (at open, under the lock)."""
        if self._embedder is not None:
            self._index.load_vectors(self._embedder.name)

    def embed(self, texts: Sequence[str], *, strict: bool = False) -> Embedded | None:
        """Embed texts (call outside the lock); on failure remember the error and return None.

        With `strict`, the error is raised instead.
        """
        embedder = self._embedder
        if embedder is None or not texts:
            return None
        try:
            vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
            if vectors.ndim != 2 or len(vectors) != len(texts):
                raise ProviderError(
                    f"The embedding server returned vectors of shape {vectors.shape}."
                )
        except (AssistantError, ValueError) as exc:
            self._set_error(str(exc))
            if strict:
                raise
            log.warning("Embedding failed, using keyword search only: %s", exc)
            return None
        self._set_error(None)
        self._check_dimension(embedder, vectors.shape[1])
        return Embedded(embedder, vectors)

    def embed_if_searchable(self, text: str) -> npt.NDArray[np.float32] | None:
        """`text`'s vector if there are vectors to compare it with, else None."""
        with self._lock:
            embedder = self._embedder
            searchable = embedder is not None and self._index.has_vectors(embedder.name)
        embedded = self.embed([text]) if searchable else None
        return None if embedded is None else embedded.vectors[0]

    def given(self, text: str, vector: npt.ArrayLike | None) -> Embedded | None:
        """`text` embedded, or `vector` as its embedding if given."""
        if vector is None:
            return self.embed([text])
        if self._embedder is None:
            raise ValueError("a vector can only be given when the store has an embedder")
        return Embedded(self._embedder, np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def _check_dimension(self, embedder: Embedder, dim: int) -> None:
        """Drop cached vectors of this model if the server now returns another dimension."""
        with self._lock:
            stale = self._index.vectors
            if stale is None or stale.name != embedder.name or stale.dim == dim:
                return
            log.warning("Embedding model %s changed dimension; re-embedding all", stale.name)
            self._index.vectors = None
            self._index.vectors_dirty = False
        self._changed()

    def _set_error(self, error: str | None) -> None:
        if error != self._error:
            self._error = error
            self._changed()

    def store(self, embedded: Embedded, slots: Sequence[int]) -> bool:
        """Store vectors (under the lock); True if they replaced vectors of another dimension."""
        if embedded.embedder is not self._embedder:
            return False  # the embedder changed while these were computed
        return self._index.set_vectors(embedded.embedder.name, embedded.vectors, slots)

    def refit(self) -> None:
        """Fit the dense search's projection if it is due (see `VectorMatrix.refit_due`).

        Call without the lock held: it is taken only to snapshot and to adopt, so the GUI's
        reads never wait for a fit (up to a second at 100,000 vectors).
        """
        with self._lock:
            vectors = self._index.vectors
            exact_up_to = self._index.config.exact_up_to
            if vectors is None or self._refitting or not vectors.refit_due(exact_up_to):
                return
            self._refitting = True
            refit = vectors.begin_refit()
        fitted = None
        try:
            fitted = refit.compute()
        finally:
            with self._lock:
                self._refitting = False
                vectors.end_refit(refit, fitted)
                if fitted is not None and vectors is self._index.vectors:
                    self._index.vectors_dirty = True

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Switch embedders; vectors of another model are set aside and items re-embedded later."""
        with self._lock:
            self._embedder = embedder
            self._error = None
            index = self._index
            if index.vectors is not None and (
                embedder is None or index.vectors.name != embedder.name
            ):
                index.save_vectors()
                index.vectors = None
            if embedder is not None and index.vectors is None:
                index.load_vectors(embedder.name)
        self._changed()

    def status(self) -> EmbeddingStatus:
        """How many active items have vectors of the current embedder."""
        with self._lock:
            model = self._embedder.name if self._embedder is not None else None
            return EmbeddingStatus(
                model, self._index.embedded_count(), self._index.active_count(), self._error
            )

    def embed_missing(
        self, progress: Progress | None = None, cancel: Callable[[], bool] | None = None
    ) -> int:
        """Embed the active items that have no vector, in batches; returns how many were embedded.

        `progress(done, total)` is called after each batch; `cancel()` is checked between
        batches. Raises the embedder's error (a ProviderError) if a batch fails.
        """
        done = 0
        restart = True
        while restart:
            restart = False
            todo = self._missing()
            total = done + len(todo)
            if progress is not None:
                progress(done, total)
            for batch in embedding_batches(todo):
                if cancel is not None and cancel():
                    break
                embedded = self.embed([text for _, text in batch], strict=True)
                if embedded is None:  # the embedder was removed
                    return done
                with self._lock:
                    items = self._index.items
                    fresh = [i for i, (s, text) in enumerate(batch) if items[s].text == text]
                    restart = self.store(
                        Embedded(embedded.embedder, embedded.vectors[fresh]),
                        [batch[i][0] for i in fresh],
                    )
                self.refit()
                done += len(batch)
                if progress is not None:
                    progress(done, total)
                if restart:
                    break
        with self._lock:
            self._index.save_vectors()
        self._changed()
        return done

    def _missing(self) -> list[tuple[int, str]]:
        """(slot, text) of the active items without a vector of the current embedder."""
        with self._lock:
            if self._embedder is None:
                return []
            return self._index.missing_vectors(self._embedder.name)
