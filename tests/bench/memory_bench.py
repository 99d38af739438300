"""Benchmark of the semantic memory engine against a naive BM25Okapi-and-loop baseline.

Run as `python -m tests.bench.memory_bench` (`make bench`). Each approach and size runs in its
own subprocess (`--one engine 100000 --json`), so that its peak RSS is its own; the parent
prints one Markdown table, the engine's speed-ups over the naive approach, and the goals.

The data is synthetic and reproducible: N memories of 10-40 words drawn from a Zipf-like
vocabulary of 20,000 made-up lowercase words, each with a 1536-d unit vector near one of 256
topic centres (same-topic vectors have a cosine of about 0.4, as related texts do with real
embedders). Queries have 3-8 words, about half common (Zipf) and half rare (uniform over the
vocabulary), and a fresh vector from the same distribution, so both rankings of a hybrid
search are full. No model is timed: vectors are passed in and the embedder refuses to embed.

Above a few thousand vectors the engine's dense search is two-stage (a projection picks
candidates, which are rescored exactly), so each engine row also reports how much of the exact
top 10 (the same searches with `exact_up_to` beyond N) its top 10 holds.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from rank_bm25 import BM25Okapi

from assistant.memory.ranking import SearchConfig
from assistant.memory.semantic import SemanticMemory
from assistant.memory.text import STOP_WORDS, tokenize

FloatMatrix = npt.NDArray[np.float32]

SEED = 20_240_611
DIM = 1536
VOCABULARY = 20_000
ZIPF_EXPONENT = 1.07
TOPICS = 256
TOPIC_WEIGHT = 0.63  # share of the topic centre in a vector: same-topic cosine ~ 0.63**2
MIN_WORDS, MAX_WORDS = 10, 40
MIN_QUERY_WORDS, MAX_QUERY_WORDS = 3, 8
BATCH = 1000  # memories generated at a time
K = 10
RRF_K = 60
QUERIES = 200
WARMUP = 5
NAIVE_QUERIES = 20
NAIVE_ADD_SAMPLE = 200
DEFAULT_SIZES = "1000,10000,100000"
DEFAULT_NAIVE_SIZES = "1000,10000"
GOALS = "at 10k search >= 20x and add >= 100x naive; at 100k p50 <= 30 ms, add <= 2 ms, open <= 2 s"
APPROACHES = ("engine", "naive")
ROOT = Path(__file__).resolve().parents[2]

_started = time.perf_counter()


def say(message: str) -> None:
    """Progress on stderr, with the seconds since this process started."""
    print(f"[{time.perf_counter() - _started:7.1f}s] {message}", file=sys.stderr, flush=True)


# -- data ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A search: its words and its vector."""

    text: str
    vector: FloatMatrix


def unit_rows(rows: FloatMatrix) -> FloatMatrix:
    """`rows` scaled to unit length."""
    normalized: FloatMatrix = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return normalized


class Corpus:
    """Reproducible memories and queries; item i is the same whatever N is."""

    def __init__(self, seed: int = SEED) -> None:
        self.seed = seed
        self.words = _vocabulary(np.random.default_rng([seed, 0]), VOCABULARY)
        weights = np.arange(1, VOCABULARY + 1, dtype=np.float64) ** -ZIPF_EXPONENT
        self._cdf = np.cumsum(weights) / weights.sum()
        centres = np.random.default_rng([seed, 1]).standard_normal((TOPICS, DIM), dtype=np.float32)
        self._centres = unit_rows(centres)

    def _zipf(self, rng: np.random.Generator, count: int) -> npt.NDArray[np.int64]:
        ranks = np.searchsorted(self._cdf, rng.random(count))
        return np.minimum(ranks, VOCABULARY - 1).astype(np.int64)

    def _texts(self, ids: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]) -> list[str]:
        words = [self.words[i] for i in ids.tolist()]
        ends = np.cumsum(lengths).tolist()
        return [
            " ".join(words[end - length : end])
            for end, length in zip(ends, lengths.tolist(), strict=True)
        ]

    def _vectors(self, rng: np.random.Generator, count: int) -> FloatMatrix:
        topics = rng.integers(0, TOPICS, count)
        noise = unit_rows(rng.standard_normal((count, DIM), dtype=np.float32))
        rest = np.float32(np.sqrt(1 - TOPIC_WEIGHT**2))
        return unit_rows(np.float32(TOPIC_WEIGHT) * self._centres[topics] + rest * noise)

    def batch(self, index: int) -> tuple[list[str], list[float], FloatMatrix]:
        """Texts, importances and vectors of memories `index * BATCH` onwards."""
        rng = np.random.default_rng([self.seed, 2, index])
        lengths = rng.integers(MIN_WORDS, MAX_WORDS + 1, BATCH)
        texts = self._texts(self._zipf(rng, int(lengths.sum())), lengths)
        importances = np.round(rng.random(BATCH), 2).tolist()
        return texts, importances, self._vectors(rng, BATCH)

    def memories(self, n: int, start: int = 0) -> Iterator[tuple[str, float, FloatMatrix]]:
        """(text, importance, vector) of memories `start` to `n - 1`."""
        for index in range(start // BATCH, (n + BATCH - 1) // BATCH):
            texts, importances, vectors = self.batch(index)
            for row in range(BATCH):
                if start <= index * BATCH + row < n:
                    yield texts[row], importances[row], vectors[row]

    def queries(self, count: int) -> list[Query]:
        """`count` queries mixing common and rare words, with vectors near some topic."""
        rng = np.random.default_rng([self.seed, 3])
        lengths = rng.integers(MIN_QUERY_WORDS, MAX_QUERY_WORDS + 1, count)
        total = int(lengths.sum())
        rare = rng.integers(0, VOCABULARY, total)
        ids = np.where(rng.random(total) < 0.5, rare, self._zipf(rng, total))
        texts = self._texts(ids, lengths)
        return [Query(t, v) for t, v in zip(texts, self._vectors(rng, count), strict=True)]


def _vocabulary(rng: np.random.Generator, size: int) -> list[str]:
    """`size` distinct made-up words of 3-10 letters, none a stop word; most common first."""
    letters = np.array(list(string.ascii_lowercase))
    words: dict[str, None] = {}
    while len(words) < size:
        word = "".join(rng.choice(letters, int(rng.integers(3, 11))).tolist())
        if word not in STOP_WORDS:
            words.setdefault(word)
    return list(words)


class BenchEmbedder:
    """An `Embedder` that only names the vector space: every vector is supplied."""

    name = "bench-1536"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Refuse: a benchmark that embedded would be timing the wrong thing."""
        raise RuntimeError(f"the benchmark never embeds (asked for {len(texts)} texts)")


# -- measuring -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One row of the table."""

    approach: str
    n: int
    add_ms: float
    adds_timed: int
    search_p50_ms: float
    search_p95_ms: float
    queries_timed: int
    open_s: float | None
    file_mb: float | None
    peak_rss_mb: float
    seconds: float
    agreement_pct: float | None = None  # share of the exact top K found, over all queries
    history_s: float | None = None  # the first history asked for after opening (reads the log)


def peak_rss_mb() -> float:
    """The peak resident set size of this process so far."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes vs KiB


def directory_mb(directory: Path) -> float:
    """Total size of the files in `directory`."""
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 2**20


def time_searches(search: Callable[[Query], int], queries: Sequence[Query]) -> list[float]:
    """Milliseconds per query; fails if no query found anything."""
    times, found = [], 0
    for query in queries:
        start = time.perf_counter()
        found += search(query)
        times.append((time.perf_counter() - start) * 1000)
    if not found:
        raise RuntimeError("no query found anything: the benchmark data is broken")
    return times


def run_engine(n: int, corpus: Corpus) -> Result:
    """Add N memories one by one, reopen the store from disk, then search it."""
    began = time.perf_counter()
    queries = corpus.queries(WARMUP + QUERIES)
    embedder = BenchEmbedder()
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        directory = Path(tmp)
        mem = SemanticMemory.open(directory, embedder)
        add_s = 0.0
        for i, (text, importance, vector) in enumerate(corpus.memories(n), start=1):
            start = time.perf_counter()
            mem.add(text, "fact", importance, vector=vector)
            add_s += time.perf_counter() - start
            if i % 20_000 == 0:
                say(f"engine {n}: added {i}")
        say(f"engine {n}: added {n}, closing (writes the vector cache)")
        mem.close()
        del mem
        gc.collect()
        file_mb = directory_mb(directory)

        start = time.perf_counter()
        mem = SemanticMemory.open(directory, embedder)
        open_s = time.perf_counter() - start
        status = mem.embedding_status()
        if status.total != n or status.embedded != n:
            raise RuntimeError(f"reopened store is incomplete: {status}")
        say(f"engine {n}: opened in {open_s:.2f} s, searching")

        def search(query: Query) -> int:
            return len(mem.search(query.text, k=K, query_vector=query.vector))

        time_searches(search, queries[:WARMUP])
        times = time_searches(search, queries[WARMUP:])
        say(f"engine {n}: comparing with exact searches")
        agreement = top_k_agreement(mem, queries[WARMUP:], n)
        start = time.perf_counter()
        if len(mem.history(mem.all()[0].id)) != 1:
            raise RuntimeError("a memory just added has one event")
        history_s = time.perf_counter() - start
        mem.close()
    p50, p95 = np.percentile(times, [50, 95]).tolist()
    return Result(
        "engine",
        n,
        add_ms=add_s * 1000 / n,
        adds_timed=n,
        search_p50_ms=p50,
        search_p95_ms=p95,
        queries_timed=len(times),
        open_s=open_s,
        file_mb=file_mb,
        peak_rss_mb=peak_rss_mb(),
        seconds=time.perf_counter() - began,
        agreement_pct=agreement,
        history_s=history_s,
    )


def top_k_agreement(mem: SemanticMemory, queries: Sequence[Query], n: int) -> float:
    """Percentage of the exact top K (dense search scanning all N vectors) in the top K."""
    exact = dataclasses.replace(mem.config, exact_up_to=n)
    found = wanted = 0
    for query in queries:
        got = mem.search(query.text, k=K, query_vector=query.vector)
        want = mem.search(query.text, k=K, query_vector=query.vector, config=exact)
        found += len({h.item.id for h in got} & {h.item.id for h in want})
        wanted += len(want)
    return 100 * found / wanted if wanted else 100.0


class NaiveMemory:
    """The obvious implementation: rebuild BM25Okapi on every add, loop over every vector."""

    def __init__(self, log_path: Path) -> None:
        self.texts: list[str] = []
        self.tokens: list[list[str]] = []
        self.vectors: list[FloatMatrix] = []
        self.bm25: BM25Okapi | None = None
        self._log = log_path.open("ab")

    def load(self, memories: Iterator[tuple[str, float, FloatMatrix]]) -> None:
        """Take memories in bulk (untimed set-up), logged with a single fsync."""
        lines = []
        for text, _, vector in memories:
            self.texts.append(text)
            self.tokens.append(tokenize(text))
            self.vectors.append(vector)
            lines.append(json.dumps({"text": text}) + "\n")
        self._log.write("".join(lines).encode())
        self._log.flush()
        os.fsync(self._log.fileno())

    def add(self, text: str, vector: FloatMatrix) -> None:
        """Append the memory, rebuild the index and log it durably."""
        self.texts.append(text)
        self.tokens.append(tokenize(text))
        self.vectors.append(vector)
        self.bm25 = BM25Okapi(self.tokens)
        self._log.write((json.dumps({"text": text}) + "\n").encode())
        self._log.flush()
        os.fsync(self._log.fileno())

    def search(self, query: str, query_vector: FloatMatrix, k: int) -> list[int]:
        """Indexes of the best `k` memories by RRF over the full BM25 and cosine rankings."""
        if self.bm25 is None:
            return []
        q = query_vector / np.linalg.norm(query_vector)
        keyword = self.bm25.get_scores(tokenize(query)).tolist()
        meaning = [float(np.dot(v, q)) for v in self.vectors]
        fused: dict[int, float] = {}
        for scores in (keyword, meaning):
            ranking = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
            for rank, i in enumerate(ranking, start=1):
                fused[i] = fused.get(i, 0.0) + 1 / (RRF_K + rank)
        return sorted(fused, key=fused.__getitem__, reverse=True)[:k]

    def close(self) -> None:
        """Close the log."""
        self._log.close()


def run_naive(n: int, corpus: Corpus) -> Result:
    """Load N - 200 memories untimed, time the last 200 adds, then search."""
    began = time.perf_counter()
    queries = corpus.queries(WARMUP + QUERIES)[: WARMUP + NAIVE_QUERIES]
    sample = min(NAIVE_ADD_SAMPLE, n)
    with tempfile.TemporaryDirectory(prefix="memory-bench-naive-") as tmp:
        mem = NaiveMemory(Path(tmp) / "naive.jsonl")
        mem.load(corpus.memories(n - sample))
        say(f"naive {n}: loaded {n - sample}, timing {sample} adds")
        add_s = 0.0
        for text, _, vector in corpus.memories(n, start=n - sample):
            start = time.perf_counter()
            mem.add(text, vector)
            add_s += time.perf_counter() - start
        say(f"naive {n}: searching")

        def search(query: Query) -> int:
            return len(mem.search(query.text, query.vector, K))

        time_searches(search, queries[:WARMUP])
        times = time_searches(search, queries[WARMUP:])
        mem.close()
    p50, p95 = np.percentile(times, [50, 95]).tolist()
    return Result(
        "naive",
        n,
        add_ms=add_s * 1000 / sample,
        adds_timed=sample,
        search_p50_ms=p50,
        search_p95_ms=p95,
        queries_timed=len(times),
        open_s=None,
        file_mb=None,
        peak_rss_mb=peak_rss_mb(),
        seconds=time.perf_counter() - began,
    )


def run_in_subprocess(approach: str, n: int) -> Result:
    """Run one row in a fresh interpreter, so that its peak RSS is its own."""
    command = [sys.executable, "-m", "tests.bench.memory_bench", "--one", approach, str(n)]
    done = subprocess.run(
        [*command, "--json"], cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed with exit code {done.returncode}")
    return Result(**json.loads(done.stdout.strip().splitlines()[-1]))


# -- reporting -----------------------------------------------------------------------------------


def number(value: float | None) -> str:
    """About three significant digits, with thousands separators; a dash for nothing."""
    if value is None:
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def table(results: Sequence[Result]) -> str:
    """The results as one Markdown table, by N then approach, with its footnote."""
    header = (
        "approach",
        "N",
        "add ms each",
        "search p50 ms",
        "search p95 ms",
        "open s",
        "file MB",
        "peak RSS MB",
        f"top-{K} agreement %",
        "first history s",
    )
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for r in sorted(results, key=lambda r: (r.n, APPROACHES.index(r.approach))):
        name = "naive¹" if r.approach == "naive" else r.approach
        cells = (
            name,
            f"{r.n:,}",
            number(r.add_ms),
            number(r.search_p50_ms),
            number(r.search_p95_ms),
            number(r.open_s),
            number(r.file_mb),
            number(r.peak_rss_mb),
            "—" if r.agreement_pct is None else f"{r.agreement_pct:.1f}",
            number(r.history_s),
        )
        lines.append("| " + " | ".join(cells) + " |")
    engine = next((r for r in results if r.approach == "engine"), None)
    naive = next((r for r in results if r.approach == "naive"), None)
    notes = []
    if engine is not None:
        notes.append(
            f"Engine: mean of all N adds (each an fsynced append); "
            f"{engine.queries_timed} hybrid queries (k={K}) after {WARMUP} warm-ups, "
            "on the store reopened from disk; open = `SemanticMemory.open` "
            "(log, BM25 rebuild, vector cache); file = log + vector cache (+ projection); "
            f"agreement = share of the top {K} of the same queries with an exact dense search "
            f"(over {SearchConfig().exact_up_to:,} vectors the engine rescores only the "
            "candidates a projection picks)."
        )
    if naive is not None:
        notes.append(
            f"¹ Naive: BM25Okapi rebuilt on each add + fsynced line; add = mean of the last "
            f"{NAIVE_ADD_SAMPLE} adds (the first N - {NAIVE_ADD_SAMPLE} loaded untimed), i.e. "
            f"the cost at size ≈ N (about twice the mean over N adds from empty); search = "
            f"{naive.queries_timed} queries, RRF over the full rankings. Each row ran in its "
            "own process."
        )
    return "\n".join(lines) + "\n\n" + "\n".join(notes)


def speedups(results: Sequence[Result]) -> str:
    """The engine's speed-ups over naive at each size where both ran."""
    by_key = {(r.approach, r.n): r for r in results}
    parts = []
    for n in sorted(n for approach, n in by_key if approach == "naive"):
        engine, naive = by_key.get(("engine", n)), by_key[("naive", n)]
        if engine is not None:
            search = naive.search_p50_ms / engine.search_p50_ms
            add = naive.add_ms / engine.add_ms
            parts.append(f"N={n:,}: search p50 {search:,.0f}x, add {add:,.0f}x")
    return "Engine over naive: " + "; ".join(parts) + "." if parts else ""


def goals(results: Sequence[Result]) -> str:
    """The goals, each with what this run got."""
    by_key = {(r.approach, r.n): r for r in results}
    checks = []
    engine, naive = by_key.get(("engine", 10_000)), by_key.get(("naive", 10_000))
    if engine is not None and naive is not None:
        search, add = naive.search_p50_ms / engine.search_p50_ms, naive.add_ms / engine.add_ms
        checks.append(("10k search >= 20x naive", search >= 20, f"{search:,.0f}x"))
        checks.append(("10k add >= 100x naive", add >= 100, f"{add:,.0f}x"))
    big = by_key.get(("engine", 100_000))
    if big is not None:
        checks.append(("100k p50 <= 30 ms", big.search_p50_ms <= 30, f"{big.search_p50_ms:.1f}"))
        checks.append(("100k add <= 2 ms", big.add_ms <= 2, f"{big.add_ms:.2f}"))
        open_s = big.open_s or 0.0
        checks.append(("100k open <= 2 s", open_s <= 2, f"{open_s:.2f}"))
    marks = [f"{name}: {got} {'met' if ok else 'MISSED'}" for name, ok, got in checks]
    return "Goals: " + "; ".join(marks) + "." if marks else ""


def report(results: Sequence[Result]) -> str:
    """Table, footnotes, speed-ups and goals."""
    tail = [line for line in (speedups(results), goals(results)) if line]
    return table(results) + ("\n\n" + "\n".join(tail) if tail else "") + "\n"


# -- command line --------------------------------------------------------------------------------


def sizes(value: str) -> list[int]:
    """A comma-separated list of sizes, such as `1000,10000`."""
    try:
        found = [int(part.replace("_", "")) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of sizes: {value!r}") from None
    if any(n < 1 for n in found):
        raise argparse.ArgumentTypeError(f"sizes must be positive: {value!r}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m tests.bench.memory_bench", description=GOALS)
    parser.add_argument("--sizes", type=sizes, default=sizes(DEFAULT_SIZES), help="engine sizes")
    parser.add_argument(
        "--naive-sizes", type=sizes, default=sizes(DEFAULT_NAIVE_SIZES), help="naive sizes"
    )
    parser.add_argument("--out", type=Path, help="also write the report as Markdown here")
    parser.add_argument(
        "--one", nargs=2, metavar=("APPROACH", "N"), help="run one row in this process"
    )
    parser.add_argument("--json", action="store_true", help="with --one: print the row as JSON")
    args = parser.parse_args(argv)

    if args.one is not None:
        approach, n = args.one[0], sizes(args.one[1])[0]
        if approach not in APPROACHES:
            parser.error(f"--one: approach must be one of {', '.join(APPROACHES)}")
        result = (run_engine if approach == "engine" else run_naive)(n, Corpus())
        say(f"{approach} {n}: done in {result.seconds:.1f} s")
        print(json.dumps(asdict(result)) if args.json else report([result]), flush=True)
        return 0

    runs = sorted(
        [("engine", n) for n in args.sizes] + [("naive", n) for n in args.naive_sizes],
        key=lambda run: (run[1], APPROACHES.index(run[0])),
    )
    results = [run_in_subprocess(approach, n) for approach, n in runs]
    text = report(results)
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    say(f"bench done in {time.perf_counter() - _started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
