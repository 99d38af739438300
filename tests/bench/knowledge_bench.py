"""Benchmark of the knowledge folders: indexing a folder in the background, searching 100,000
chunks, following a change, and the start-up rescan.

Run as `python -m tests.bench.knowledge_bench` (`make bench`). A folder of 1,000 mixed files
(500 Markdown, 200 text, 100 Python, 200 PDFs of 2-6 pages; made once with fpdf2 under
build/bench/) is indexed by the real `KnowledgeService` with the built-in embedder, in a fresh
subprocess (so that its peak RSS is its own) whose GUI thread runs a Qt event loop with a 5 ms
timer: its longest gap, less the 5 ms, is the GUI's longest stall. The same subprocess then
changes one file and times until a search finds its new word (the watcher, the debounce, the
read and the index), and a second one times the start-up rescan of the unchanged folder.
Search is timed on 100,000 synthetic chunks with 384-d vectors supplied directly (the query's
embedding by the built-in model is timed apart).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "build" / "bench" / "knowledge-folder"
SEED = 24
STARTS = ("ka", "lo", "mi", "nu", "po", "ra", "si", "tu", "ve", "zo")
ENDS = "ban cor dil fen gat hum jor kel lim mor nap pil quo rin sal tem urk vol wex yam".split()
# 4,000 made-up words, drawn with Zipf-like weights as words of real text are.
WORDS = [a + b + c for a in STARTS for b in ENDS for c in ("", "a", "e", "i", "o", "u", "s",
                                                            "er", "ing", "ed", "ly", "al", "on",
                                                            "en", "ic", "ous", "ive", "ist",
                                                            "ment", "ness")]  # fmt: skip
CUMULATIVE = list(np.cumsum([1 / (rank + 1) ** 1.07 for rank in range(len(WORDS))]))
KINDS = {"md": 500, "txt": 200, "py": 100, "pdf": 200}
SEARCH_CHUNKS = 100_000
DIM = 384
QUERIES = 200
GOALS = {"stall_ms": 50, "rss_mb": 500, "search_p50_ms": 10, "change_s": 2, "rescan_s": 1}


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=CUMULATIVE, k=n))


def _sentence(rng: random.Random, n: int) -> str:
    return _words(rng, n).capitalize() + "."


def make_folder(folder: Path) -> None:
    """The 1,000 mixed files, made once (the PDFs take a while)."""
    from tests.files import make_pdf

    if (folder / "done").exists():
        return
    rng = random.Random(SEED)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(KINDS["md"]):
        sections = [f"## Part {s}\n\n" + "\n\n".join(_sentence(rng, 30) for _ in range(3))
                    for s in range(rng.randint(2, 5))]  # fmt: skip
        (folder / f"note-{n:03}.md").write_text(f"# Note {n}\n\n" + "\n\n".join(sections))
    for n in range(KINDS["txt"]):
        paragraphs = [_sentence(rng, 40) for _ in range(rng.randint(3, 12))]
        (folder / f"log-{n:03}.txt").write_text("\n\n".join(paragraphs))
    for n in range(KINDS["py"]):
        funcs = [f"def f_{n}_{i}(x):\n    '''{_sentence(rng, 12)}'''\n    return x * {i}\n"
                 for i in range(rng.randint(5, 30))]  # fmt: skip
        (folder / f"mod_{n:03}.py").write_text("\n\n".join(funcs))
    for n in range(KINDS["pdf"]):
        pages = [" ".join(_sentence(rng, 25) for _ in range(6)) for _ in range(rng.randint(2, 6))]
        make_pdf(folder / f"paper-{n:03}.pdf", pages)
    (folder / "done").write_text("")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_index(folder: Path) -> dict[str, float]:
    """In a fresh process: index `folder` in the background under a Qt event loop, then time a
    change. Returns the figures."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from assistant.knowledge import Knowledge, KnowledgeEvent
    from assistant.memory import LocalEmbedder
    from assistant.ui.knowledge.bridge import KnowledgeBridge

    app = QApplication([])
    data = Path(tempfile.mkdtemp(prefix="knowledge-bench-"))
    embedder = LocalEmbedder()
    embedder.embed(["warm up the model"])  # loading the model is not indexing
    knowledge = Knowledge(data, embedder)
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    bridge = KnowledgeBridge(knowledge)
    marks: dict[str, float] = {}
    stall = {"max": 0.0, "last": 0.0}

    def tick() -> None:
        now = time.perf_counter()
        if stall["last"]:
            stall["max"] = max(stall["max"], now - stall["last"] - 0.005)
        stall["last"] = now

    def on_event(event: KnowledgeEvent) -> None:
        now = time.perf_counter()
        if event.phase == "reading" and event.done == event.total:
            marks.setdefault("read", now)
        if event.phase == "idle" and "read" in marks:
            marks.setdefault("idle", now)
            app.quit()

    timer = QTimer(interval=5)
    timer.timeout.connect(tick)
    timer.start()
    bridge.changed.connect(on_event)
    start = time.perf_counter()
    bridge.start()
    app.exec()
    chunks = len(knowledge.index)
    files = sum(s.indexed for s in knowledge.states())
    out = {
        "files": files,
        "chunks": chunks,
        "read_s": marks["read"] - start,
        "embed_s": marks["idle"] - marks["read"],
        "stall_ms": stall["max"] * 1000,
        "rss_mb": rss_mb(),
    }
    target = folder / "note-000.md"
    original = target.read_text()
    try:
        target.write_text(original + "\n\nThe word zanzibarqux is new.\n")
        changed = time.perf_counter()
        while not knowledge.search("zanzibarqux"):
            app.processEvents()
            time.sleep(0.005)
        out["change_s"] = time.perf_counter() - changed
    finally:
        target.write_text(original)
    bridge.stop()
    knowledge.close()
    out["data_dir"] = str(data)  # type: ignore[assignment]
    return out


def run_rescan(folder: Path, data: Path) -> dict[str, float]:
    """In a fresh process: open the index made by `run_index` and rescan the unchanged folder."""
    from assistant.knowledge import Knowledge

    knowledge = Knowledge(data, None)
    start = time.perf_counter()
    knowledge.load()
    loaded = time.perf_counter()
    read = knowledge.sync()
    done = time.perf_counter()
    assert read <= 1, read  # note-000.md was written back
    return {"load_s": loaded - start, "rescan_s": done - loaded, "rss_mb": rss_mb()}


class _Vectors:
    """An embedder of random unit vectors (chunks and queries alike): no model is timed."""

    name = "bench-random"
    dim = DIM

    def __init__(self) -> None:
        self._rng = np.random.default_rng(SEED)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._rng.standard_normal((len(texts), DIM)).astype(np.float32)


def run_search() -> dict[str, float]:
    """Search p50 and p95 over 100,000 chunks, and the built-in model's query embedding."""
    from assistant.knowledge import Chunk, FileIndex, Place
    from assistant.memory import LocalEmbedder

    rng = random.Random(SEED)
    index = FileIndex(None, _Vectors())
    per_file = 100
    for f in range(SEARCH_CHUNKS // per_file):
        chunks = [Chunk(" ".join(_sentence(rng, 20) for _ in range(5)), Place(page=p + 1))
                  for p in range(per_file)]  # fmt: skip
        index.put(f"/bench/file-{f}.pdf", chunks)
    index.embed_pending()
    queries = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))) for _ in range(QUERIES)
    ]
    for query in queries[:5]:
        index.search(query, 5)
    times = []
    for query in queries:
        start = time.perf_counter()
        index.search(query, 5)
        times.append(time.perf_counter() - start)
    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    embeds = []
    for query in queries[:50]:
        start = time.perf_counter()
        embedder.embed([query])
        embeds.append(time.perf_counter() - start)
    return {
        "search_p50_ms": statistics.median(times) * 1000,
        "search_p95_ms": sorted(times)[int(len(times) * 0.95)] * 1000,
        "query_embed_p50_ms": statistics.median(embeds) * 1000,
        "rss_mb": rss_mb(),
    }


def _child(*args: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-m", "tests.bench.knowledge_bench", *args],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    if result.returncode:
        raise SystemExit(f"knowledge_bench {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", choices=["index", "rescan", "search"])
    parser.add_argument("--data")
    args = parser.parse_args(argv)
    if args.phase == "index":
        print(json.dumps(run_index(FOLDER)))
        return 0
    if args.phase == "rescan":
        print(json.dumps(run_rescan(FOLDER, Path(args.data))))
        return 0
    if args.phase == "search":
        print(json.dumps(run_search()))
        return 0
    make_folder(FOLDER)
    index = _child("--phase", "index")
    rescan = _child("--phase", "rescan", "--data", str(index["data_dir"]))
    search = _child("--phase", "search")
    files, chunks = index["files"], index["chunks"]
    print("Knowledge folders: 1,000 files (500 Markdown, 200 text, 100 Python, 200 PDFs)\n")
    print("| measure | value | goal |")
    print("|---|---:|---:|")
    rows = [
        ("files indexed (read, chunked, BM25)", f"{files:,.0f} files, {chunks:,.0f} chunks", ""),
        ("reading: files/s", f"{files / index['read_s']:,.0f}", ""),
        ("reading: chunks/s", f"{chunks / index['read_s']:,.0f}", ""),
        ("built-in embedder: chunks/s", f"{chunks / index['embed_s']:,.1f}", ""),
        ("whole folder searchable by meaning, s", f"{index['read_s'] + index['embed_s']:,.1f}", ""),
        ("peak RSS while indexing, MB", f"{index['rss_mb']:,.0f}", f"<= {GOALS['rss_mb']}"),
        ("GUI thread's longest stall, ms", f"{index['stall_ms']:,.1f}", f"<= {GOALS['stall_ms']}"),
        (
            "a changed file found by search, s",
            f"{index['change_s']:,.2f}",
            f"<= {GOALS['change_s']}",
        ),
        ("start-up: index loaded from records, s", f"{rescan['load_s']:,.2f}", ""),
        (
            "start-up rescan of the unchanged folder, s",
            f"{rescan['rescan_s']:,.3f}",
            f"< {GOALS['rescan_s']}",
        ),
        (
            "search over 100,000 chunks, p50 ms",
            f"{search['search_p50_ms']:,.2f}",
            f"<= {GOALS['search_p50_ms']}",
        ),
        ("search over 100,000 chunks, p95 ms", f"{search['search_p95_ms']:,.2f}", ""),
        (
            "query embedding by the built-in model, p50 ms",
            f"{search['query_embed_p50_ms']:,.1f}",
            "",
        ),
    ]
    for name, value, goal in rows:
        print(f"| {name} | {value} | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
