"""The file index: chunks of files searched with the memory's hybrid engine.

The same pieces as conversation search (`memory.bm25`, `memory.message_vectors`,
`memory.ranking`): BM25 over word stems and, once chunks have vectors (`embed_pending`, in the
background), cosine similarity, fused. A chunk's vector is kept under the SHA-256 of its text,
so a file that changes keeps the vectors of the chunks it still has, and the same text in two
files is embedded once; vectors nothing uses are dropped when the cache is saved.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.knowledge.reading import Chunk, Place
from assistant.memory.bm25 import BM25Index
from assistant.memory.embedding import Embedder, embedding_batches, query_vector
from assistant.memory.message_vectors import MessageKey, MessageVectors
from assistant.memory.ranking import SearchConfig, fuse_rankings
from assistant.memory.snippets import make_snippet
from assistant.memory.text import is_informative, query_terms, terms, tokenize

log = logging.getLogger(__name__)

SNIPPET_CHARS = 240
SAVE_EVERY = 4096  # embedded chunks between cache saves while embedding


@dataclass(frozen=True)
class FileHit:
    """A chunk that matched a search: its file, place, text, a snippet and the score (0..1)."""

    path: str
    place: Place
    text: str
    snippet: str
    score: float

    def source(self) -> str:
        """The file's name and the place: "report.pdf p. 4"."""
        return cite(self.path, self.place)


def cite(path: str, place: Place) -> str:
    """A file's name and a place in it, as a chip says it: "report.pdf p. 4"."""
    label = place.label()
    return f"{Path(path).name} {label}" if label else Path(path).name


@dataclass(frozen=True)
class _Stored:
    path: str
    chunk: Chunk
    digest: str


def _vector_key(digest: str) -> MessageKey:
    return ("chunk", digest)


class FileIndex:
    """Chunks of files by path; thread-safe. Vectors are cached in `directory` (None: never
    saved, for a conversation's attachments)."""

    def __init__(
        self,
        directory: Path | None,
        embedder: Embedder | None,
        config: SearchConfig | None = None,
    ) -> None:
        self.directory = directory
        self.config = config or SearchConfig()
        self._lock = threading.RLock()
        self._embedder = embedder
        self._bm25 = BM25Index(self.config.bm25_k1, self.config.bm25_b)
        self._chunks: dict[int, _Stored] = {}
        self._keys_of: dict[str, list[int]] = {}
        self._keys_of_text: dict[str, list[int]] = {}  # digest -> its chunks' keys, oldest first
        self._next_key = 0
        self._vectors: MessageVectors | None = None
        self._vectors_loaded = False
        # Vector row -> the newest chunk with that text (-1: none); kept in step as chunks and
        # vectors come and go (None: to be mapped again, after the vectors were replaced).
        self._key_of_row: npt.NDArray[np.int64] | None = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._chunks)

    def paths(self) -> list[str]:
        """The files that have chunks here."""
        with self._lock:
            return list(self._keys_of)

    def chunks_of(self, path: str) -> list[Chunk]:
        """A file's chunks, in order."""
        with self._lock:
            return [self._chunks[key].chunk for key in self._keys_of.get(path, [])]

    def put(self, path: str, chunks: Sequence[Chunk]) -> None:
        """Index these chunks of `path` instead of those it had."""
        digests = [hashlib.sha256(c.text.encode()).hexdigest()[:32] for c in chunks]
        tokens = [terms(c.text + " " + " ".join(c.place.heading)) for c in chunks]
        with self._lock:
            self._drop(path)
            keys = list(range(self._next_key, self._next_key + len(chunks)))
            self._next_key += len(chunks)
            for key, chunk, digest, words in zip(keys, chunks, digests, tokens, strict=True):
                self._bm25.add(key, words)
                self._chunks[key] = _Stored(path, chunk, digest)
                self._keys_of_text.setdefault(digest, []).append(key)
            self._keys_of[path] = keys
            self._point(digests)

    def drop(self, path: str) -> None:
        """Forget the chunks of `path`."""
        with self._lock:
            self._drop(path)

    def _drop(self, path: str) -> None:
        digests = []
        for key in self._keys_of.pop(path, []):
            self._bm25.remove(key)
            digest = self._chunks.pop(key).digest
            same = self._keys_of_text[digest]
            same.remove(key)
            if not same:
                del self._keys_of_text[digest]
            digests.append(digest)
        self._point(digests)

    def search(self, query: str, k: int = 5) -> list[FileHit]:
        """The `k` chunks that best match `query`, best first (hybrid, as memory search)."""
        tokens, required = query_terms(query)
        if not required or k <= 0:
            return []
        qvec = self._query_vector(query)
        cfg = self.config
        depth = max(cfg.depth, k)
        words = [w for w in tokenize(query) if is_informative(w)]
        with self._lock:
            lexical = self._bm25.top(tokens, depth, require=required)
            dense = self._dense_top(qvec, depth) if qvec is not None else []
            if not lexical and not dense:
                return []
            fused = fuse_rankings(lexical, dense, cfg)
            hits = []
            for i in np.argsort(-fused.relevance, kind="stable")[:k].tolist():
                stored = self._chunks[fused.order[i]]
                text = stored.chunk.text
                snippet = make_snippet(text, words, SNIPPET_CHARS)
                score = float(fused.relevance[i])
                hits.append(FileHit(stored.path, stored.chunk.place, text, snippet, score))
            return hits

    # -- vectors -------------------------------------------------------------------------------

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Search by meaning with this embedder's vectors from now on (None: keywords only)."""
        with self._lock:
            current = self._embedder
            if embedder is not None and current is not None and embedder.name == current.name:
                self._embedder = embedder
                return
            self.save()
            self._embedder = embedder
            self._vectors, self._vectors_loaded, self._key_of_row = None, False, None

    def _current_vectors(self) -> MessageVectors | None:
        if self._embedder is None:
            return None
        if not self._vectors_loaded:
            if self.directory is not None:
                self._vectors = MessageVectors.load(self.directory, self._embedder.name)
            self._vectors_loaded = True
            self._key_of_row = None
        return self._vectors

    def pending_embeddings(self) -> int:
        """How many distinct chunk texts have no vector of the current embedder."""
        with self._lock:
            return len(self._unembedded())

    def _unembedded(self) -> list[tuple[str, str]]:
        """(digest, text) of the chunks without a vector, each text once."""
        if self._embedder is None:
            return []
        vectors = self._current_vectors()
        todo: dict[str, str] = {}
        for stored in self._chunks.values():
            if vectors is None or vectors.row(_vector_key(stored.digest)) < 0:
                todo.setdefault(stored.digest, stored.chunk.text)
        return list(todo.items())

    def embed_pending(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> int:
        """Embed the chunks that have no vector, in batches; returns how many texts.

        `progress(done, total)` follows each batch, `cancel()` is checked between batches.
        Raises the embedder's error (a ProviderError) if a batch fails.
        """
        with self._lock:
            embedder = self._embedder
            todo = self._unembedded()
        done = 0
        for batch in embedding_batches(todo):
            if embedder is None or (cancel is not None and cancel()):
                break
            if progress is not None:
                progress(done, len(todo))
            vectors = np.asarray(embedder.embed([text for _, text in batch]), dtype=np.float32)
            with self._lock:
                if embedder is not self._embedder:
                    break
                if self._vectors is None:
                    self._vectors = MessageVectors(embedder.name, vectors.shape[1])
                    self._key_of_row = None
                self._vectors.add([_vector_key(d) for d, _ in batch], vectors)
                self._point([d for d, _ in batch])
                if self._vectors.unsaved >= SAVE_EVERY:
                    self.save()
            done += len(batch)
        if progress is not None:
            progress(done, done)
        return done

    def save(self) -> None:
        """Write the vector cache if it has changed, without the vectors nothing uses."""
        with self._lock:
            vectors = self._vectors
            if vectors is None or self.directory is None:
                return
            if not vectors.unsaved and len(self._keys_of_text) == len(vectors):
                return
            if len(self._keys_of_text) < len(vectors):
                kept = sorted((row, key) for key, row in self._vector_rows(vectors) if row >= 0)
                self._vectors = vectors.subset([key for _, key in kept])
                if self._key_of_row is not None:  # the rows keep their order
                    self._key_of_row = self._key_of_row[[row for row, _ in kept]]
                vectors = self._vectors
            vectors.save(self.directory)

    def _vector_rows(self, vectors: MessageVectors) -> list[tuple[MessageKey, int]]:
        """The vector key and row (-1: none) of each text indexed."""
        keys = [_vector_key(digest) for digest in self._keys_of_text]
        return [(key, vectors.row(key)) for key in keys]

    def _query_vector(self, query: str) -> npt.NDArray[np.float32] | None:
        with self._lock:
            embedder = self._embedder
            vectors = self._current_vectors()
            if embedder is None or vectors is None or not len(vectors):
                return None
        return query_vector(embedder, query, vectors.dim)

    def _dense_top(self, qvec: npt.NDArray[np.float32], depth: int) -> list[tuple[int, float]]:
        """The best `depth` (chunk key, cosine) at or above `min_similarity`, best first."""
        vectors = self._current_vectors()
        if vectors is None or vectors.dim != len(qvec) or not len(vectors):
            return []
        key_of_row = self._rows_to_keys(vectors)
        cfg = self.config
        wanted = max(depth, cfg.rescore_factor * depth, int(cfg.rescore_fraction * len(vectors)))
        rows, sims = vectors.nearest(qvec, wanted)
        keys = key_of_row[rows]
        keep = (keys >= 0) & (sims >= np.float32(cfg.min_similarity))
        keys, score = keys[keep], sims[keep].astype(np.float64)
        order = np.lexsort((keys, -score))[:depth]
        return [(int(keys[i]), float(score[i])) for i in order]

    def _rows_to_keys(self, vectors: MessageVectors) -> npt.NDArray[np.int64]:
        if self._key_of_row is None or len(self._key_of_row) < len(vectors):
            self._key_of_row = np.full(len(vectors), -1, dtype=np.int64)
            self._point(list(self._keys_of_text))
        return self._key_of_row

    def _point(self, digests: Sequence[str]) -> None:
        """Map the vector rows of these texts to their newest chunks (-1: none left), if the
        rows are mapped (else they are mapped whole when next searched)."""
        vectors = self._vectors
        if self._key_of_row is None or vectors is None:
            return
        for digest in digests:
            row = vectors.row(_vector_key(digest))
            if row < 0:
                continue
            if row >= len(self._key_of_row):
                grown = np.full(max(row + 1, 2 * len(self._key_of_row)), -1, dtype=np.int64)
                grown[: len(self._key_of_row)] = self._key_of_row
                self._key_of_row = grown
            keys = self._keys_of_text.get(digest)
            self._key_of_row[row] = keys[-1] if keys else -1
