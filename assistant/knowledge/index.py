"""The file index: chunks of files searched with the memory's hybrid engine.

The same pieces as conversation search (`memory.bm25`, `memory.ranking`): BM25 over word stems
and, once chunks have vectors (`embed_pending`, in the background), cosine similarity, fused.
The chunks' texts are not held in memory: with a directory they are in its passage log
(`passage_log`, with their files' records) and read back for the hits a search returns;
without one (a conversation's attachments) they are held here. A chunk's vector is kept under
a digest of its text (`vector_log`), so a file that changes keeps the vectors of the chunks it
still has, and the same text in two files is embedded once.

Changes are written by one writer at a time (`_writing`), to disk outside the lock that searches
take (`_lock`), which is held only to apply what was written.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.errors import StorageError
from assistant.knowledge.passage_log import LOG_NAME, PassageLog
from assistant.knowledge.reading import Chunk, Place
from assistant.knowledge.records import FileRecord
from assistant.knowledge.vector_log import DIGEST_BYTES, VectorLog, vectors_path
from assistant.memory.arrays import ensure_capacity
from assistant.memory.bm25 import BM25Index
from assistant.memory.embedding import Embedder, embedding_batches, query_vector
from assistant.memory.ranking import SearchConfig, fuse_rankings
from assistant.memory.snippets import make_snippet
from assistant.memory.text import is_informative, query_terms, terms, tokenize

log = logging.getLogger(__name__)

SNIPPET_CHARS = 240
SAVE_EVERY = 4096  # embedded chunks between saves of the vectors while embedding
COMPACT_VECTORS_FROM = 1024  # unused vector rows before they are dropped from the file


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


def digest(text: str) -> bytes:
    """The key of a text's vector."""
    return hashlib.sha256(text.encode()).digest()[:DIGEST_BYTES]


class FileIndex:
    """Chunks of files by path; thread-safe. In `directory` (None: in memory, for a
    conversation's attachments), the passage log and the vectors."""

    def __init__(
        self,
        directory: Path | None,
        embedder: Embedder | None,
        config: SearchConfig | None = None,
    ) -> None:
        self.directory = directory
        self.config = config or SearchConfig()
        self._lock = threading.RLock()  # searches, and applying changes
        self._writing = threading.RLock()  # one writer at a time
        self._embedder = embedder
        self._log = PassageLog(directory / LOG_NAME) if directory is not None else None
        self._bm25 = BM25Index(self.config.bm25_k1, self.config.bm25_b)
        self._keys_of: dict[str, range] = {}  # path -> its chunks' keys, in order
        self._firsts: list[int] = []  # the first key of each path's range, ascending...
        self._first_paths: list[str] = []  # ...and that path
        self._held: dict[str, list[Chunk]] = {}  # chunks held in memory, not in the log
        self._next_key = 0
        # Per key: its text's digest, its vector row (-1: none), whether it is indexed.
        self._digests = np.zeros((0, DIGEST_BYTES), dtype=np.uint8)
        self._row_of_key = np.zeros(0, dtype=np.int64)
        self._live = np.zeros(0, dtype=bool)
        self._vectors: VectorLog | None = None
        self._vectors_loaded = False
        # Vector row -> the newest chunk with that text (-1: none); kept in step as chunks and
        # vectors come and go (None: to be mapped again, with `_row_of_key`, when next needed).
        self._key_of_row: npt.NDArray[np.int64] | None = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._bm25)

    @property
    def warnings(self) -> list[str]:
        """What was wrong with the passage log when it was opened."""
        return list(self._log.warnings) if self._log is not None else []

    def paths(self) -> list[str]:
        """The files that have chunks here."""
        with self._lock:
            return list(self._keys_of)

    def chunks_of(self, path: str) -> list[Chunk]:
        """A file's chunks, in order ([] if they cannot be read)."""
        with self._lock:
            if path in self._held:
                return list(self._held[path])
            if path not in self._keys_of or self._log is None:
                return []
            try:
                return self._log.chunks(path)
            except StorageError as exc:
                log.warning("%s", exc)
                return []

    def load(self) -> Iterator[FileRecord]:
        """Index what the passage log holds; each file's record (call once, before changes)."""
        if self._log is None:
            return
        for record, chunks in self._log.open():
            with self._lock:
                self._index(record.path, chunks)
            yield record

    def put(self, path: str, chunks: Sequence[Chunk], record: FileRecord | None = None) -> None:
        """Index these chunks of `path` instead of those it had, with the file's `record` in
        the passage log (one that only names the file, without). If the log cannot be written,
        the chunks are held in memory for this run (the file has no record at the next)."""
        chunks = list(chunks)
        record = record or FileRecord(path, 0, 0, chunks=len(chunks))
        with self._writing:
            entry = None
            if self._log is not None and self._log.usable:
                try:
                    entry = self._log.append(record, chunks)
                except StorageError as exc:
                    log.warning("%s", exc)
            with self._lock:
                self._index(path, chunks)
                if self._log is not None and (entry is not None or self._log.has(path)):
                    self._log.commit(path, entry)
                if entry is None:
                    self._held[path] = chunks
            self._compact_log()

    def drop(self, path: str) -> None:
        """Forget the chunks (and record) of `path`."""
        with self._writing:
            if self._log is not None and self._log.has(path):
                try:
                    self._log.append_gone(path)
                except StorageError as exc:  # it comes back at the next start, and goes
                    log.warning("%s", exc)
            with self._lock:
                self._drop(path)
                if self._log is not None and self._log.has(path):
                    self._log.commit(path, None)
            self._compact_log()

    def _index(self, path: str, chunks: Sequence[Chunk]) -> None:
        """Put `chunks` of `path` in the index, instead of its old ones (under the lock)."""
        digests = [digest(c.text) for c in chunks]
        tokens = [terms(c.text + " " + " ".join(c.place.heading)) for c in chunks]
        self._drop(path)
        first = self._next_key
        keys = range(first, first + len(chunks))
        self._next_key += len(chunks)
        self._digests = ensure_capacity(self._digests, self._next_key)
        self._row_of_key = ensure_capacity(self._row_of_key, self._next_key)
        self._live = ensure_capacity(self._live, self._next_key)
        if chunks:
            self._digests[first : self._next_key] = np.frombuffer(
                b"".join(digests), dtype=np.uint8
            ).reshape(-1, DIGEST_BYTES)
        self._live[first : self._next_key] = True
        vectors = self._vectors
        for key, text_digest, words in zip(keys, digests, tokens, strict=True):
            self._bm25.add(key, words)
            row = vectors.row(text_digest) if vectors is not None else -1
            self._row_of_key[key] = row
            if row >= 0 and self._key_of_row is not None:
                self._point(row, key)
        self._keys_of[path] = keys
        if chunks:
            self._firsts.append(first)
            self._first_paths.append(path)

    def _drop(self, path: str) -> None:
        keys = self._keys_of.pop(path, None)
        self._held.pop(path, None)
        if not keys:
            return
        at = bisect.bisect_left(self._firsts, keys.start)
        del self._firsts[at], self._first_paths[at]
        for key in keys:
            self._bm25.remove(key)
        span = slice(keys.start, keys.stop)
        self._live[span] = False
        rows = self._row_of_key[span]
        rows = np.unique(rows[rows >= 0])
        self._row_of_key[span] = -1
        if self._key_of_row is None or not len(rows):
            return
        pointed = self._key_of_row[rows]
        rows = rows[(pointed >= keys.start) & (pointed < keys.stop)]  # at a dropped chunk
        self._key_of_row[rows] = -1
        if len(rows):  # the same text in another file: its newest chunk
            n = self._next_key
            others = np.flatnonzero(self._live[:n] & np.isin(self._row_of_key[:n], rows))
            np.maximum.at(self._key_of_row, self._row_of_key[others], others)

    def _point(self, row: int, key: int) -> None:
        """Row `row` is the vector of chunk `key`, the newest with its text."""
        assert self._key_of_row is not None
        if row >= len(self._key_of_row):
            grown = np.full(max(row + 1, 2 * len(self._key_of_row)), -1, dtype=np.int64)
            grown[: len(self._key_of_row)] = self._key_of_row
            self._key_of_row = grown
        self._key_of_row[row] = max(key, int(self._key_of_row[row]))

    def _place_of(self, key: int) -> tuple[str, int]:
        """The path of chunk `key` and its number in the file."""
        at = bisect.bisect_right(self._firsts, key) - 1
        return self._first_paths[at], key - self._firsts[at]

    def _chunk(self, key: int) -> tuple[str, Chunk]:
        """Chunk `key` and its path (StorageError if its text cannot be read)."""
        path, n = self._place_of(key)
        held = self._held.get(path)
        if held is not None:
            return path, held[n]
        assert self._log is not None
        return path, self._log.chunk(path, n)

    def _compact_log(self) -> None:
        """Compact the passage log if it is due (the copy made outside the lock)."""
        if self._log is None or not self._log.compaction_due():
            return
        try:
            moved = self._log.compacted()
        except StorageError as exc:
            log.warning("Could not compact the passage log: %s", exc)
            return
        with self._lock:
            self._log.commit_compaction(moved)

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
                try:
                    path, chunk = self._chunk(fused.order[i])
                except StorageError as exc:  # the log changed under us: not this hit
                    log.warning("%s", exc)
                    continue
                snippet = make_snippet(chunk.text, words, SNIPPET_CHARS)
                score = float(fused.relevance[i])
                hits.append(FileHit(path, chunk.place, chunk.text, snippet, score))
            return hits

    # -- vectors -------------------------------------------------------------------------------

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Search by meaning with this embedder's vectors from now on (None: keywords only)."""
        with self._writing:
            current = self._embedder
            if embedder is not None and current is not None and embedder.name == current.name:
                self._embedder = embedder
                return
            self.save()
            with self._lock:
                if self._vectors is not None:
                    self._vectors.close()
                self._embedder = embedder
                self._vectors, self._vectors_loaded, self._key_of_row = None, False, None

    def _current_vectors(self) -> VectorLog | None:
        """The vectors of the current embedder, loaded when first needed (under the lock)."""
        if self._embedder is None:
            return None
        if not self._vectors_loaded:
            if self.directory is not None:
                self._vectors = VectorLog.load(self.directory, self._embedder.name)
            self._vectors_loaded = True
            self._key_of_row = None
        return self._vectors

    def _mapped(self, vectors: VectorLog) -> npt.NDArray[np.int64]:
        """The map of vector rows to chunks, and each chunk's row, made afresh if they are not
        kept in step (after the vectors were loaded or replaced)."""
        if self._key_of_row is None:
            n = self._next_key
            keys = np.flatnonzero(self._live[:n])
            self._row_of_key[:n] = -1
            self._row_of_key[keys] = [vectors.row(self._digests[k].tobytes()) for k in keys]
            self._key_of_row = np.full(max(len(vectors), 1024), -1, dtype=np.int64)
            found = keys[self._row_of_key[keys] >= 0]
            np.maximum.at(self._key_of_row, self._row_of_key[found], found)
        if len(self._key_of_row) < len(vectors):  # rows of texts no chunk has now
            grown = np.full(len(vectors), -1, dtype=np.int64)
            grown[: len(self._key_of_row)] = self._key_of_row
            self._key_of_row = grown
        return self._key_of_row

    def pending_embeddings(self) -> int:
        """How many distinct chunk texts have no vector of the current embedder."""
        with self._lock:
            return len(self._unembedded())

    def _unembedded(self) -> dict[bytes, list[int]]:
        """The digests of the texts without a vector, with their chunks' keys (under the lock)."""
        if self._embedder is None:
            return {}
        vectors = self._current_vectors()
        if vectors is not None:
            self._mapped(vectors)
        n = self._next_key
        todo: dict[bytes, list[int]] = {}
        for key in np.flatnonzero(self._live[:n] & (self._row_of_key[:n] < 0)).tolist():
            todo.setdefault(self._digests[key].tobytes(), []).append(key)
        return todo

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
            todo = list(self._unembedded().items())
        done = 0
        for batch in embedding_batches(todo):
            if embedder is None or (cancel is not None and cancel()):
                break
            if progress is not None:
                progress(done, len(todo))
            with self._lock:  # the texts, read now (a chunk dropped meanwhile is left out)
                texts = self._texts([keys for _, keys in batch])
            kept = [item for item, text in zip(batch, texts, strict=True) if text is not None]
            if kept:
                found = embedder.embed([t for t in texts if t is not None])
                self._add_vectors(embedder, kept, np.asarray(found, dtype=np.float32))
            done += len(kept)
        if progress is not None:
            progress(done, done)
        return done

    def _texts(self, keys: Sequence[list[int]]) -> list[str | None]:
        """The text of the first live chunk of each list (None if none, or unreadable)."""
        out: list[str | None] = []
        for some in keys:
            live = [k for k in some if self._live[k]]
            try:
                out.append(self._chunk(live[0])[1].text if live else None)
            except StorageError as exc:
                log.warning("%s", exc)
                out.append(None)
        return out

    def _add_vectors(
        self,
        embedder: Embedder,
        batch: Sequence[tuple[bytes, list[int]]],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        with self._writing, self._lock:
            if embedder is not self._embedder:
                return
            if self._vectors is None:
                path = self.directory and vectors_path(self.directory, embedder.name)
                self._vectors = VectorLog(path, embedder.name, vectors.shape[1])
                self._key_of_row = None
            self._vectors.add([d for d, _ in batch], vectors)
            self._mapped(self._vectors)
            for text_digest, keys in batch:
                row = self._vectors.row(text_digest)
                for key in keys:
                    if self._live[key] and self._row_of_key[key] < 0:
                        self._row_of_key[key] = row
                        self._point(row, key)
            if self._vectors.unsaved >= SAVE_EVERY:
                self._save()

    def save(self) -> None:
        """Append the vectors not saved yet; rewrite the file without the vectors no chunk
        uses once they outnumber the others."""
        with self._writing, self._lock:
            self._save()

    def _save(self) -> None:
        vectors = self._vectors
        if vectors is None or self.directory is None:
            return
        try:
            vectors.save()
            key_of_row = self._mapped(vectors)
            used = np.zeros(len(vectors), dtype=bool)
            used[: len(key_of_row)] = key_of_row[: len(vectors)] >= 0
            if vectors.garbage(used) > max(COMPACT_VECTORS_FROM, len(vectors) // 2):
                new_of_old = vectors.compact(used)
                n = self._next_key
                had = self._row_of_key[:n]
                self._row_of_key[:n] = np.where(had >= 0, new_of_old[np.maximum(had, 0)], -1)
                self._key_of_row = None
        except StorageError as exc:
            log.warning("Could not save the passage vectors: %s", exc)

    def _query_vector(self, query: str) -> npt.NDArray[np.float32] | None:
        with self._lock:
            embedder = self._embedder
            vectors = self._current_vectors()
            if embedder is None or vectors is None or not len(vectors):
                return None
            dim = vectors.dim
        return query_vector(embedder, query, dim)

    def _dense_top(self, qvec: npt.NDArray[np.float32], depth: int) -> list[tuple[int, float]]:
        """The best `depth` (chunk key, cosine) at or above `min_similarity`, best first."""
        vectors = self._current_vectors()
        if vectors is None or vectors.dim != len(qvec) or not len(vectors):
            return []
        key_of_row = self._mapped(vectors)
        cfg = self.config
        wanted = max(depth, cfg.rescore_factor * depth, int(cfg.rescore_fraction * len(vectors)))
        rows, sims = vectors.nearest(qvec, wanted)
        keys = key_of_row[rows]
        keep = (keys >= 0) & (sims >= np.float32(cfg.min_similarity))
        keys, score = keys[keep], sims[keep].astype(np.float64)
        order = np.lexsort((keys, -score))[:depth]
        return [(int(keys[i]), float(score[i])) for i in order]

    def close(self) -> None:
        """Save the vectors and close the files."""
        with self._writing, self._lock:
            self._save()
            if self._vectors is not None:
                self._vectors.close()
            if self._log is not None:
                self._log.close()
