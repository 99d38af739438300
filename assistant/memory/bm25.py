"""An incremental BM25 index with exactly the scores of `rank_bm25.BM25Okapi`.

`rank_bm25` rebuilds its whole index for a corpus and scores a query with a Python loop over
every document. Here each term keeps a posting list (document numbers and term frequencies in
`array.array`s that grow in place), and a query touches only the postings of its own terms,
with numpy doing the arithmetic. Adding a document appends to the postings of its terms;
removing one only marks it dead and lowers its terms' document frequencies, and the postings
are rebuilt once the dead documents outnumber the live ones, so both stay amortized O(terms
of the document). The one global quantity of BM25Okapi, the mean IDF over the vocabulary
that sets the floor for very common terms, is recomputed with numpy over the document
frequencies only when a query follows a change. A whole corpus is indexed in bulk with numpy
sorts, and an index can be saved as a few flat arrays (`Snapshot`) and loaded back.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assistant.memory.arrays import ensure_capacity
from assistant.memory.text import STOP_WORDS

_MIN_REBUILD = 1024
# Postings and per-document entries are 4-byte integers (document numbers and term ids
# signed, frequencies unsigned): half the memory of 8-byte ones (97 MB instead of 194 for
# 100,000 passages of the knowledge folders); keys and offsets keep 8 bytes.
_ID, _TF = "i", "I"
_DTYPES = {"q": np.int64, _ID: np.int32, _TF: np.uint32}
assert array(_ID).itemsize == array(_TF).itemsize == 4, "C int is not 32 bits here"
COMMON_FROM = 20  # documents in an index before a word in most of them counts as common
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Snapshot:
    """The live documents of an index as flat arrays (document-major)."""

    terms: list[str]  # term id -> term
    keys: IntArray  # per document
    lengths: IntArray  # per document: number of tokens
    starts: IntArray  # per document + 1: where its entries begin in `doc_terms`
    doc_terms: IntArray  # per entry: a distinct term of the document
    doc_tfs: IntArray  # per entry: how often it occurs
    post_docs: IntArray  # the same entries term-major: document numbers (0..n-1)...
    post_tfs: IntArray  # ...and frequencies

    def columns(self) -> dict[str, IntArray]:
        """The arrays by the names a cache file stores them under (`terms` apart)."""
        return {f"bm25_{name}": getattr(self, field) for name, field in _COLUMNS.items()}

    @classmethod
    def from_columns(cls, terms: list[str], columns: Mapping[str, IntArray]) -> Snapshot:
        """The snapshot stored by `columns()` (the arrays of a cache file) and its terms."""
        return cls(terms, **{field: columns[f"bm25_{name}"] for name, field in _COLUMNS.items()})


# A snapshot's arrays by their names in cache files, which are older than the field names.
_COLUMNS = {
    "keys": "keys",
    "lengths": "lengths",
    "starts": "starts",
    "terms": "doc_terms",
    "tfs": "doc_tfs",
    "post_docs": "post_docs",
    "post_tfs": "post_tfs",
}


def _snapshot(
    *,
    terms: list[str],
    keys: IntArray,
    lengths: IntArray,
    starts: IntArray,
    doc_terms: IntArray,
    doc_tfs: IntArray,
) -> Snapshot:
    """A snapshot from document-major entries, with the term-major postings derived."""
    order = np.argsort(doc_terms, kind="stable")  # term-major, documents ascending
    docs = np.repeat(np.arange(len(keys), dtype=np.int64), np.diff(starts))
    return Snapshot(terms, keys, lengths, starts, doc_terms, doc_tfs, docs[order], doc_tfs[order])


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
        self._doc_terms = array(_ID)
        self._doc_tfs = array(_TF)
        self._doc_start = array("q", [0])
        self._doc_of: dict[int, int] = {}
        self._total_len = 0
        self._mean_idf: float | None = None
        self._sorted_terms: list[str] = []  # the vocabulary sorted, for prefix lookups

    def __len__(self) -> int:
        return len(self._doc_of)

    def __contains__(self, key: object) -> bool:
        return key in self._doc_of

    # -- changes -------------------------------------------------------------------------------

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
                self._post_docs.append(array(_ID))
                self._post_tf.append(array(_TF))
                self._df = ensure_capacity(self._df, tid + 1)
            self._post_docs[tid].append(doc)
            self._post_tf[tid].append(tf)
            self._df[tid] += 1
            self._doc_terms.append(tid)
            self._doc_tfs.append(tf)
        self._doc_start.append(len(self._doc_terms))
        self._mean_idf = None

    def add_many(self, keys: Sequence[int], token_lists: Sequence[Sequence[str]]) -> None:
        """Index many documents; into an empty index this is done in bulk with numpy."""
        if len(self._doc_of):
            for key, tokens in zip(keys, token_lists, strict=True):
                self.add(key, tokens)
            return
        vocab: dict[str, int] = {}
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
        flat: list[int] = []
        for tokens in token_lists:
            flat.extend(vocab.setdefault(t, len(vocab)) for t in tokens)
        docs = np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths)
        pairs = docs * max(len(vocab), 1) + np.array(flat, dtype=np.int64)
        pairs.sort()  # by document, then term
        first = np.ones(len(pairs), dtype=bool)
        first[1:] = pairs[1:] != pairs[:-1]
        starts = np.flatnonzero(first)
        counts = np.diff(np.append(starts, len(pairs)))
        unique = pairs[starts]
        per_doc = np.bincount(unique // max(len(vocab), 1), minlength=len(token_lists))
        self._load(
            _snapshot(
                terms=list(vocab),
                keys=np.asarray(keys, dtype=np.int64),
                lengths=lengths,
                starts=np.concatenate(([0], np.cumsum(per_doc))).astype(np.int64),
                doc_terms=unique % max(len(vocab), 1),
                doc_tfs=counts.astype(np.int64),
            )
        )

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
            self._load(self.snapshot())

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The live documents as flat arrays, for saving or rebuilding."""
        n = len(self._doc_key)
        live = np.flatnonzero(self._doc_alive[:n])
        starts = np.frombuffer(self._doc_start, dtype=np.int64)
        sizes = starts[live + 1] - starts[live]
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        entries = np.repeat(starts[live] - offsets[:-1], sizes) + np.arange(offsets[-1])
        # Only the terms live documents use: the words of a removed (forgotten) text go too.
        used, doc_terms = np.unique(
            np.frombuffer(self._doc_terms, dtype=np.int32)[entries], return_inverse=True
        )
        all_terms = list(self._term_ids)
        return _snapshot(
            terms=[all_terms[t] for t in used.tolist()],
            keys=np.frombuffer(self._doc_key, dtype=np.int64)[live].copy(),
            lengths=self._doc_len[live].astype(np.int64),
            starts=offsets.astype(np.int64),
            doc_terms=doc_terms.astype(np.int64),
            doc_tfs=np.frombuffer(self._doc_tfs, dtype=np.uint32)[entries].astype(np.int64),
        )

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot, k1: float = 1.5, b: float = 0.75) -> BM25Index:
        """An index holding the documents of `snapshot`."""
        index = cls(k1, b)
        index._load(snapshot)
        return index

    def _load(self, s: Snapshot) -> None:
        """Replace the contents with the documents of `s`, building the postings with numpy."""
        self._reset()
        n, n_terms = len(s.keys), len(s.terms)
        self._term_ids = {term: i for i, term in enumerate(s.terms)}
        self._df = ensure_capacity(np.bincount(s.doc_terms, minlength=n_terms), 1024)
        self._doc_key = _int_array(s.keys)
        self._doc_len = ensure_capacity(s.lengths.astype(np.float64), 1024)
        self._doc_alive = ensure_capacity(np.ones(n, dtype=bool), 1024)
        self._doc_terms = _int_array(s.doc_terms, _ID)
        self._doc_tfs = _int_array(s.doc_tfs, _TF)
        self._doc_start = _int_array(s.starts)
        self._doc_of = dict(zip(s.keys.tolist(), range(n), strict=True))
        self._total_len = int(s.lengths.sum())
        docs = s.post_docs.astype(np.int32).tobytes()
        tfs = s.post_tfs.astype(np.uint32).tobytes()
        bounds = np.concatenate(([0], np.cumsum(self._df[:n_terms]))) * 4
        for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            posted, counted = array(_ID), array(_TF)
            posted.frombytes(docs[start:end])
            counted.frombytes(tfs[start:end])
            self._post_docs.append(posted)
            self._post_tf.append(counted)

    # -- scoring -------------------------------------------------------------------------------

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

    def frequency(self, term: str) -> int:
        """How many documents hold `term`."""
        tid = self._term_ids.get(term)
        return 0 if tid is None else int(self._df[tid])

    def is_common(self, term: str) -> bool:
        """Whether `term` is in more than half of the documents (where BM25Okapi's IDF is below
        0), in an index of at least `COMMON_FROM` documents.

        Such a word ("user" in "The user ...") says little about which document is meant. In a
        small index every document is in view anyway, and a half is only a few documents.
        """
        tid = self._term_ids.get(term)
        n = len(self._doc_of)
        return tid is not None and n >= COMMON_FROM and 2 * int(self._df[tid]) > n

    def with_prefix(self, prefix: str, limit: int = 8) -> list[str]:
        """Up to `limit` terms of the live documents that start with `prefix`, most frequent first.

        For search as you type: "siste" finds the term "sister". Stop words are left out.
        """
        if len(self._sorted_terms) != len(self._term_ids):
            self._sorted_terms = sorted(self._term_ids)
        start = bisect.bisect_left(self._sorted_terms, prefix)
        found: list[str] = []
        for term in self._sorted_terms[start:]:
            if not term.startswith(prefix):
                break
            if term not in STOP_WORDS and self._df[self._term_ids[term]] > 0:
                found.append(term)
        found.sort(key=lambda t: -int(self._df[self._term_ids[t]]))
        return found[:limit]

    def _postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint32]] | None:
        """Live documents containing `term` and the term's frequency in each."""
        tid = self._term_ids.get(term)
        if tid is None or self._df[tid] == 0:
            return None
        posted = np.frombuffer(self._post_docs[tid], dtype=np.int32)
        tfs = np.frombuffer(self._post_tf[tid], dtype=np.uint32)
        if len(self._doc_of) == len(self._doc_key):  # no dead documents to skip
            return posted, tfs
        alive = self._doc_alive[posted]
        return posted[alive], tfs[alive]

    def _accumulate(
        self, tokens: Sequence[str], require: Sequence[str] | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        """Per document number: the BM25 score, and whether it qualifies.

        A document qualifies if it contains any of `tokens` and, with `require`, any of those
        that are not common (see `is_common`), or of all of them if every one is common.
        """
        n_docs = len(self._doc_key)
        acc = np.zeros(n_docs, dtype=np.float64)
        hit = np.zeros(n_docs, dtype=bool)
        if not self._doc_of:
            return acc, hit
        avgdl = self._total_len / len(self._doc_of)
        k1, b = self.k1, self.b
        for term in tokens:  # a repeated token counts as often as it appears, as in BM25Okapi
            found = self._postings(term)
            if found is None:
                continue
            docs, tfs = found
            tf = tfs.astype(np.float64)
            norm = k1 * (1 - b + b * self._doc_len[docs] / avgdl)
            acc[docs] += self.idf(term) * (tf * (k1 + 1) / (tf + norm))
            hit[docs] = True
        if require is not None:
            hit &= self._containing(self.deciding(require))
        return acc, hit

    def deciding(self, require: Sequence[str]) -> list[str]:
        """Those of `require` a document must contain one of to qualify: the ones that are not
        common (see `is_common`), or all if every one is."""
        rare = [t for t in require if self._postings(t) is not None and not self.is_common(t)]
        return rare or list(require)

    def score_documents(
        self,
        tokens: Sequence[str],
        documents: Sequence[Sequence[str]],
        *,
        require: Sequence[str] | None = None,
    ) -> list[float | None]:
        """The BM25 score of each of these term lists as a document of this index would have
        it (its IDFs and mean length): what an indexed document scores with other words.
        None for one that would not qualify (see `top`) with `require`."""
        deciding = set(self.deciding(require)) if require is not None else None
        idf = {term: self.idf(term) for term in set(tokens)}
        avgdl = self._total_len / len(self._doc_of) if self._total_len else 1.0
        k1, b = self.k1, self.b
        out: list[float | None] = []
        for document in documents:
            counts = Counter(document)
            norm = k1 * (1 - b + b * len(document) / avgdl)
            # Repeated tokens count as in `_accumulate`; with no indexed word every IDF is 0.
            score = sum(idf[t] * counts[t] * (k1 + 1) / (counts[t] + norm) for t in tokens)
            qualifies = deciding is None or any(term in counts for term in deciding)
            out.append(score if qualifies else None)
        return out

    def _containing(self, tokens: Sequence[str]) -> npt.NDArray[np.bool_]:
        mask = np.zeros(len(self._doc_key), dtype=bool)
        for term in set(tokens):
            found = self._postings(term)
            if found is not None:
                mask[found[0]] = True
        return mask

    def scores(self, tokens: Sequence[str]) -> tuple[IntArray, npt.NDArray[np.float64]]:
        """Keys and BM25 scores of the documents containing at least one of `tokens`."""
        acc, hit = self._accumulate(tokens)
        docs = np.flatnonzero(hit)
        return np.frombuffer(self._doc_key, dtype=np.int64)[docs].copy(), acc[docs]

    def top(
        self,
        tokens: Sequence[str],
        k: int,
        *,
        require: Sequence[str] | None = None,
        allowed: npt.NDArray[np.bool_] | None = None,
    ) -> list[tuple[int, float]]:
        """The best `k` (key, score) pairs, best first; equal scores in key order.

        With `require`, only documents that contain at least one of those tokens qualify (one
        that is not common, if any is not); with `allowed` (a flag per key), only those whose
        key it flags.
        """
        if k <= 0:
            return []
        acc, hit = self._accumulate(tokens, require)
        docs = np.flatnonzero(hit)
        if allowed is not None:
            keys = np.frombuffer(self._doc_key, dtype=np.int64)[docs]
            inside = keys < len(allowed)
            docs = docs[inside][allowed[keys[inside]]]
        scores = acc[docs]
        if k < len(docs):
            part = np.argpartition(-scores, k - 1)[:k]
            docs, scores = docs[part], scores[part]
        keys = np.frombuffer(self._doc_key, dtype=np.int64)[docs]
        order = np.lexsort((keys, -scores))
        return [(int(keys[i]), float(scores[i])) for i in order]


def _int_array(values: npt.NDArray[np.int64], typecode: str = "q") -> array[int]:
    out = array(typecode)
    out.frombytes(values.astype(_DTYPES[typecode]).tobytes())
    return out
