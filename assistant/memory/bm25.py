"""An incremental BM25 index with exactly the scores of `rank_bm25.BM25Okapi`.

`rank_bm25` rebuilds its whole index for a corpus and scores a query with a Python loop over
every document. Here each term keeps a posting list (document numbers and term frequencies in
`array.array`s that grow in place), and a query touches only the postings of its own terms,
with numpy doing the arithmetic. Adding a document appends to the postings of its terms;
removing one only marks it dead and lowers its terms' document frequencies, and the postings
are rebuilt once the dead documents outnumber the live ones, so both stay amortized O(terms
of the document). The one global quantity of BM25Okapi, the mean IDF over the vocabulary
that sets the floor for very common terms, is recomputed with numpy over the document
frequencies only when a query follows a change.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from assistant.memory.arrays import ensure_capacity

_MIN_REBUILD = 1024


class BM25Index:
    """BM25Okapi over documents identified by int keys, updated one document at a time.

    Not thread-safe: the stores that own an index serialize access with their lock.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self._reset()

    def _reset(self) -> None:
        self._term_ids: dict[str, int] = {}
        self._df = np.zeros(1024, dtype=np.int64)
        self._post_docs: list[array[int]] = []
        self._post_tf: list[array[int]] = []
        # Per document: key, length, alive; its distinct terms and their counts, flattened.
        self._doc_key = array("q")
        self._doc_len = np.zeros(1024, dtype=np.float64)
        self._doc_alive = np.zeros(1024, dtype=bool)
        self._doc_terms = array("i")
        self._doc_tfs = array("i")
        self._doc_start = array("q", [0])
        self._doc_of: dict[int, int] = {}
        self._total_len = 0
        self._mean_idf: float | None = None

    def __len__(self) -> int:
        return len(self._doc_of)

    def __contains__(self, key: object) -> bool:
        return key in self._doc_of

    def add(self, key: int, tokens: Sequence[str]) -> None:
        """Index a document under `key`, which must not be present yet."""
        if key in self._doc_of:
            raise KeyError(f"document {key} is already indexed")
        doc = len(self._doc_key)
        self._doc_len = ensure_capacity(self._doc_len, doc + 1)
        self._doc_alive = ensure_capacity(self._doc_alive, doc + 1)
        self._doc_key.append(key)
        self._doc_len[doc] = len(tokens)
        self._doc_alive[doc] = True
        self._doc_of[key] = doc
        self._total_len += len(tokens)
        for term, tf in Counter(tokens).items():
            tid = self._term_ids.get(term)
            if tid is None:
                tid = self._term_ids[term] = len(self._post_docs)
                self._post_docs.append(array("q"))
                self._post_tf.append(array("i"))
                self._df = ensure_capacity(self._df, tid + 1)
            self._post_docs[tid].append(doc)
            self._post_tf[tid].append(tf)
            self._df[tid] += 1
            self._doc_terms.append(tid)
            self._doc_tfs.append(tf)
        self._doc_start.append(len(self._doc_terms))
        self._mean_idf = None

    def remove(self, key: int) -> None:
        """Drop the document under `key`, if any."""
        doc = self._doc_of.pop(key, None)
        if doc is None:
            return
        self._doc_alive[doc] = False
        self._total_len -= int(self._doc_len[doc])
        terms = self._doc_terms[self._doc_start[doc] : self._doc_start[doc + 1]]
        self._df[np.frombuffer(terms, dtype=np.int32)] -= 1
        self._mean_idf = None
        dead = len(self._doc_key) - len(self._doc_of)
        if dead > max(len(self._doc_of), _MIN_REBUILD):
            self._rebuild()

    def _rebuild(self) -> None:
        """Rebuild the postings from the live documents only."""
        names = list(self._term_ids)
        live = [
            (
                int(self._doc_key[doc]),
                self._doc_terms[self._doc_start[doc] : self._doc_start[doc + 1]],
                self._doc_tfs[self._doc_start[doc] : self._doc_start[doc + 1]],
            )
            for doc in sorted(self._doc_of.values())
        ]
        self._reset()
        for key, terms, tfs in live:
            self.add(key, [names[t] for t, tf in zip(terms, tfs, strict=True) for _ in range(tf)])

    def idf(self, term: str) -> float:
        """The IDF of `term` as BM25Okapi has it (0 for an unknown term)."""
        tid = self._term_ids.get(term)
        if tid is None or self._df[tid] == 0:
            return 0.0
        n = len(self._doc_of)
        df = int(self._df[tid])
        value = math.log(n - df + 0.5) - math.log(df + 0.5)
        if value < 0:
            return self.epsilon * self._average_idf()
        return value

    def _average_idf(self) -> float:
        if self._mean_idf is None:
            df = self._df[: len(self._post_docs)]
            df = df[df > 0].astype(np.float64)
            n = len(self._doc_of)
            idfs = np.log(n - df + 0.5) - np.log(df + 0.5)
            self._mean_idf = float(idfs.sum() / len(idfs)) if len(idfs) else 0.0
        return self._mean_idf

    def scores(
        self, tokens: Sequence[str]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Keys and BM25 scores of the documents containing at least one of `tokens`.

        A token repeated in the query counts as often as it appears, as in BM25Okapi.
        """
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
        if not self._doc_of:
            return empty
        avgdl = self._total_len / len(self._doc_of)
        acc = np.zeros(len(self._doc_key), dtype=np.float64)
        touched = []
        k1, b = self.k1, self.b
        for term in tokens:
            tid = self._term_ids.get(term)
            if tid is None or self._df[tid] == 0:
                continue
            idf = self.idf(term)
            posted = np.frombuffer(self._post_docs[tid], dtype=np.int64)
            alive = self._doc_alive[posted]
            docs = posted[alive]
            tf = np.frombuffer(self._post_tf[tid], dtype=np.int32)[alive].astype(np.float64)
            norm = k1 * (1 - b + b * self._doc_len[docs] / avgdl)
            acc[docs] += idf * (tf * (k1 + 1) / (tf + norm))
            touched.append(docs)
        if not touched:
            return empty
        docs = np.unique(np.concatenate(touched))
        keys = np.frombuffer(self._doc_key, dtype=np.int64)[docs]
        return keys.copy(), acc[docs]

    def top(
        self, tokens: Sequence[str], k: int, *, require: Sequence[str] | None = None
    ) -> list[tuple[int, float]]:
        """The best `k` (key, score) pairs, best first.

        With `require`, only documents that contain at least one of those tokens qualify.
        """
        keys, scores = self.scores(tokens)
        if require is not None:
            allowed = self.keys_containing(require)
            mask = np.isin(keys, allowed)
            keys, scores = keys[mask], scores[mask]
        if k < len(keys):
            part = np.argpartition(-scores, k)[:k]
            keys, scores = keys[part], scores[part]
        order = np.argsort(-scores, kind="stable")
        return [(int(keys[i]), float(scores[i])) for i in order]

    def keys_containing(self, tokens: Sequence[str]) -> npt.NDArray[np.int64]:
        """Keys of the live documents that contain at least one of `tokens`."""
        found = []
        for term in set(tokens):
            tid = self._term_ids.get(term)
            if tid is None or self._df[tid] == 0:
                continue
            docs = np.frombuffer(self._post_docs[tid], dtype=np.int64)
            found.append(docs[self._doc_alive[docs]])
        if not found:
            return np.zeros(0, dtype=np.int64)
        docs = np.unique(np.concatenate(found))
        return np.frombuffer(self._doc_key, dtype=np.int64)[docs].copy()
