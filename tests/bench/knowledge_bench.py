"""Benchmark of the knowledge folders: indexing a folder in the background, a change followed,
the start-up rescan, and searching 100,000 chunks.

Run as `python -m tests.bench.knowledge_bench` (`make bench`); `--files 100 --chunks 10000`
runs it small. A folder of `--files` mixed files (half Markdown, a fifth text, a tenth Python, a
fifth PDFs of 2-6 pages made with fpdf2; English-like text: made-up words and common English
words in Zipf proportions) is made once under build/bench/. Each phase runs in a fresh process,
so that its peak RSS is its own:

- index: the app itself (`Workspace` and `MainWindow`, offscreen, the built-in embedder; the
  window's knowledge service reads the folder and embeds its chunks as at first start) while a
  5 ms `QTimer` on the GUI thread records the gaps between its ticks, as `ui_bench` does for
  turns: the longest gap is the GUI's longest stall. Then one file is changed (and changed back)
  and timed until the service has read and embedded it again (the real watcher).
- rescan: the index just made, opened as at start-up: records loaded, the unchanged folder
  rescanned (a stat a file; the number of files read is checked to be 0), vectors loaded.
- search: 100,000 synthetic chunks with 384-d vectors supplied directly (no model is timed),
  queried with questions of common and rarer words; the built-in model's query embedding is
  timed apart. Then 20 files of 100 chunks are changed, each written (its passages and vectors)
  and searched at once: the bytes written per change (`wchar` of /proc/self/io) and the first
  search after it. Also run with one core kept busy by a loop (a laptop doing something else).
- reopen: the 100,000 chunks just written, opened as at start-up in a fresh process: the index
  loaded from its files, searched, and its memory (RSS, and of it the private part: RssAnon).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[2]
SEED = 24
STARTS = ("ka", "lo", "mi", "nu", "po", "ra", "si", "tu", "ve", "zo")
ENDS = "ban cor dil fen gat hum jor kel lim mor nap pil quo rin sal tem urk vol wex yam".split()
SUFFIXES = ("", "a", "e", "i", "o", "u", "s", "er", "ing", "ed", "ly", "al", "on", "en", "ic",
            "ous", "ive", "ist", "ment", "ness")  # fmt: skip
# The most frequent words of English first, then 4,000 made-up ones: drawn with Zipf-like
# weights as words of real text are, so "the" is in nearly every chunk.
COMMON = """the of and to a in is that for it as with was on be by this are or at from have not
but which an they you all were we there can more one has been will their""".split()
WORDS = [*COMMON, *(a + b + c for a in STARTS for b in ENDS for c in SUFFIXES)]
CUMULATIVE = list(np.cumsum([1 / (rank + 1) ** 1.07 for rank in range(len(WORDS))]))
QUESTIONS = ("what is the {} of the {}", "how does {} work with {}", "{} {}",
             "where did the {} {} come from", "{} and {} in the {}")  # fmt: skip
SHARES = {"md": 0.5, "txt": 0.2, "py": 0.1}  # the rest are PDFs
FILES = 1000
SEARCH_CHUNKS = 100_000
DIM = 384
QUERIES = 200
CHANGED_WORD = "zanzibarqux"
HANG_S = 3600  # a phase that takes longer has hung
GOALS = {"stall_ms": 50, "rss_mb": 500, "search_p50_ms": 10, "change_s": 2, "rescan_s": 1}


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=CUMULATIVE, k=n))


def _sentence(rng: random.Random, n: int) -> str:
    return _words(rng, n).capitalize() + "."


def kinds(files: int) -> dict[str, int]:
    """How many files of each kind a folder of `files` has."""
    counts = {kind: int(files * share) for kind, share in SHARES.items()}
    counts["pdf"] = files - sum(counts.values())
    return counts


def folder_for(files: int) -> Path:
    """Where the folder of `files` files is made."""
    return ROOT / "build" / "bench" / f"knowledge-{files}"


def make_folder(files: int) -> Path:
    """The mixed files, made once (the PDFs take a while)."""
    from tests.files import make_pdf

    folder = folder_for(files)
    if (folder / "done").exists():
        return folder
    counts = kinds(files)
    rng = random.Random(SEED)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(counts["md"]):
        sections = [f"## Part {s}\n\n" + "\n\n".join(_sentence(rng, 30) for _ in range(3))
                    for s in range(rng.randint(2, 5))]  # fmt: skip
        (folder / f"note-{n:04}.md").write_text(f"# Note {n}\n\n" + "\n\n".join(sections))
    for n in range(counts["txt"]):
        paragraphs = [_sentence(rng, 40) for _ in range(rng.randint(3, 12))]
        (folder / f"log-{n:04}.txt").write_text("\n\n".join(paragraphs))
    for n in range(counts["py"]):
        funcs = [f"def f_{n}_{i}(x):\n    '''{_sentence(rng, 12)}'''\n    return x * {i}\n"
                 for i in range(rng.randint(5, 30))]  # fmt: skip
        (folder / f"mod_{n:04}.py").write_text("\n\n".join(funcs))
    for n in range(counts["pdf"]):
        pages = [" ".join(_sentence(rng, 25) for _ in range(6)) for _ in range(rng.randint(2, 6))]
        make_pdf(folder / f"paper-{n:04}.pdf", pages)
    (folder / "done").write_text("")
    return folder


def peak_mb() -> float:
    """This process's peak RSS so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_mb() -> float:
    """This process's RSS now."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def anon_mb() -> float:
    """This process's private (anonymous) resident memory now: RSS less mapped files."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return 0.0


def written_bytes() -> int:
    """Bytes this process has passed to write() so far."""
    with open("/proc/self/io") as io:
        for line in io:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def run_index(folder: Path, data: Path) -> dict[str, Any]:
    """In a fresh process: open the app on `data` with `folder` as a knowledge folder, let it
    index the folder, then change a file twice; the figures, with the GUI's gaps."""
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from assistant.knowledge import KnowledgeEvent, Sources
    from assistant.knowledge.library import KNOWLEDGE_DIR
    from assistant.paths import settings_file
    from assistant.settings import LOCAL_EMBEDDING_MODEL, Settings
    from assistant.ui.shutdown import join_all
    from assistant.ui.window.main_window import MainWindow
    from assistant.workspace import Workspace
    from tests.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        Settings(provider="custom", base_url=server.base_url, chat_model="m",
                 embedding_model=LOCAL_EMBEDDING_MODEL,
                 auto_memories=False).save(settings_file(data))  # fmt: skip
        (data / KNOWLEDGE_DIR).mkdir(parents=True, exist_ok=True)
        Sources(folders=(str(folder),)).save(data / KNOWLEDGE_DIR / "folders.json")
        events: list[tuple[float, KnowledgeEvent]] = []
        gaps: list[tuple[float, int]] = []  # (when, ms since the tick before)
        clock = QElapsedTimer()
        probe = QTimer(interval=5)
        probe.timeout.connect(lambda: gaps.append((time.perf_counter(), clock.restart())))
        guard = QTimer(singleShot=True, interval=HANG_S * 1000)
        loop = QEventLoop()  # not the application's: quitting that ends the app's work
        guard.timeout.connect(lambda: loop.exit(1))
        guard.start()

        def wait_for_idle(since: float) -> float:
            """Run the event loop until the service is idle after `since`; when it was."""
            while not any(at > since and e.phase == "idle" for at, e in events):
                if loop.exec():  # quits at each event; 1: the guard's time is up
                    raise SystemExit("the knowledge service never became idle")
            return next(at for at, e in events if at > since and e.phase == "idle")

        collections: list[float] = []  # the cycle collector's passes, s (they hold the GIL)
        began = [0.0]

        def on_collection(phase: str, _info: dict[str, int]) -> None:
            if phase == "start":
                began[0] = time.perf_counter()
            else:
                collections.append(time.perf_counter() - began[0])

        gc.callbacks.append(on_collection)

        def on_event(event: KnowledgeEvent) -> None:
            events.append((time.perf_counter(), event))
            if event.problem:
                print(f"problem: {event.problem}", file=sys.stderr)
            loop.quit()

        base_mb = current_mb()
        start = time.perf_counter()
        window = MainWindow(Workspace.open(data))
        window.knowledge.changed.connect(on_event)
        window.resize(1280, 800)
        window.show()
        app.processEvents()
        shown = time.perf_counter()
        window_mb = current_mb()
        clock.start()
        probe.start()
        collections.clear()
        idle = wait_for_idle(start)
        knowledge = window.workspace.knowledge
        read = next(at for at, e in events if e.phase == "reading" and e.done == e.total)
        out: dict[str, Any] = {
            "files": sum(s.indexed for s in knowledge.states()),
            "chunks": len(knowledge.index),
            "shown_s": shown - start,
            "read_s": read - start,
            "indexed_s": idle - start,
            "stall_index_ms": max((ms for at, ms in gaps if at <= idle), default=0),
            "base_mb": base_mb,
            "window_mb": window_mb,
            "index_peak_mb": peak_mb(),
        }
        target = min(folder.glob("note-*.md"))
        original = target.read_bytes()
        assert CHANGED_WORD.encode() not in original, f"{target} was left changed: delete {folder}"
        changes = []
        try:
            for content in (original + f"\n\nThe word {CHANGED_WORD} is new.\n".encode(),
                            original):  # fmt: skip
                changed = time.perf_counter()
                target.write_bytes(content)
                changes.append(wait_for_idle(changed) - changed)
                text = " ".join(c.text for c in knowledge.index.chunks_of(str(target)))
                assert (CHANGED_WORD in text) == (content != original), "the change was missed"
        finally:
            if target.read_bytes() != original:  # an error came between the changes
                target.write_bytes(original)
        probe.stop()
        out["change_s"] = changes
        out["stall_ms"] = max(ms for _, ms in gaps)
        out["collection_ms"] = max(collections, default=0) * 1000
        out["peak_mb"] = peak_mb()
        window.close()
        join_all()
    return out


def run_rescan(folder: Path, data: Path) -> dict[str, float]:
    """In a fresh process: the index made by `run_index` opened as at start-up."""
    from assistant.knowledge import Knowledge
    from assistant.memory import LocalEmbedder

    knowledge = Knowledge(data, LocalEmbedder())  # the model loads only if something is embedded
    start = time.perf_counter()
    knowledge.load()
    loaded = time.perf_counter()
    read = knowledge.sync()
    scanned = time.perf_counter()
    pending = knowledge.index.pending_embeddings()  # loads the vectors
    done = time.perf_counter()
    assert read == 0, f"{read} files were read again"
    assert pending == 0, f"{pending} chunks have no vector"
    assert knowledge.states()[0].folder == str(folder)
    return {
        "load_s": loaded - start,
        "rescan_s": scanned - loaded,
        "vectors_s": done - scanned,
        "peak_mb": peak_mb(),
    }


class _Vectors:
    """An embedder of random unit vectors (chunks and queries alike): no model is timed."""

    name = "bench-random"
    dim = DIM

    def __init__(self) -> None:
        self._rng = np.random.default_rng(SEED)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._rng.standard_normal((len(texts), DIM)).astype(np.float32)


def queries(rng: random.Random, n: int) -> list[str]:
    """Questions and keywords as people type them: common words and rarer ones."""
    out = []
    for _ in range(n):
        template = rng.choice(QUESTIONS)
        out.append(template.format(*_words(rng, template.count("{}")).split()))
    return out


def _timed(search: Any, asked: Sequence[str], *, warm: bool = True) -> list[float]:
    for query in asked[:5] if warm else []:
        search(query)
    times = []
    for query in asked:
        start = time.perf_counter()
        search(query)
        times.append(time.perf_counter() - start)
    return times


def run_search(chunks: int, *, busy: bool, keep: Path | None = None) -> dict[str, float]:
    """Search times over `chunks` chunks (p50, p95), in the index and as the app searches
    (with a project's folder beside the global one), and the built-in model's query embedding;
    the index is left in `keep` (else deleted)."""
    from assistant.knowledge import Chunk, Knowledge, Place
    from assistant.memory import LocalEmbedder

    rng = random.Random(SEED)
    data = keep or Path(tempfile.mkdtemp(prefix="knowledge-search-"))
    loop = busy_core() if busy else None
    try:
        knowledge = Knowledge(data, _Vectors())
        knowledge.load()
        knowledge.set_sources(knowledge.sources.with_folder("/bench/shared"))
        knowledge.set_project_folders({"project": ["/bench/project"]})
        index = knowledge.index
        per_file = 100
        for f in range(chunks // per_file):
            texts = [" ".join(_sentence(rng, 20) for _ in range(5)) for _ in range(per_file)]
            folder = "shared" if f % 2 else "project"
            index.put(f"/bench/{folder}/file-{f}.pdf",
                      [Chunk(text, Place(page=p + 1)) for p, text in enumerate(texts)])  # fmt: skip
        index.embed_pending()
        asked = queries(rng, QUERIES)
        times = _timed(lambda q: index.search(q, 5), asked)
        app_times = _timed(lambda q: knowledge.search(q, 5), asked)
        after_change = []  # the first search after a file changed (read and embedded again)
        written = []  # bytes written for each change: its passages and vectors
        for f, query in enumerate(asked[:20]):
            texts = [" ".join(_sentence(rng, 20) for _ in range(5)) for _ in range(per_file)]
            before = written_bytes()
            index.put(f"/bench/shared/file-{2 * f + 1}.pdf",
                      [Chunk(text, Place(page=p + 1)) for p, text in enumerate(texts)])  # fmt: skip
            index.embed_pending()
            index.save()  # as the knowledge service does after each change
            written.append(written_bytes() - before)
            after_change += _timed(lambda q: index.search(q, 5), [query], warm=False)
        index_mb = peak_mb()
        gc.collect()
        now_mb, now_anon_mb = current_mb(), anon_mb()
        knowledge.close()
        embeds: list[float] = []
        if not busy:
            embedder = LocalEmbedder()
            embedder.embed(["warm up"])
            embeds = _timed(lambda q: embedder.embed([q]), asked[:50])
    finally:
        if loop is not None:
            loop.kill()
            loop.wait()
        if keep is None:
            shutil.rmtree(data, ignore_errors=True)
    return {
        "p50_ms": statistics.median(times) * 1000,
        "p95_ms": _p95(times) * 1000,
        "app_p50_ms": statistics.median(app_times) * 1000,
        "app_p95_ms": _p95(app_times) * 1000,
        "changed_p50_ms": statistics.median(after_change) * 1000,
        "written_kb": statistics.median(written) / 1024,
        "written_max_kb": max(written) / 1024,
        "embed_p50_ms": statistics.median(embeds) * 1000 if embeds else 0.0,
        "peak_mb": index_mb,
        "rss_mb": now_mb,
        "anon_mb": now_anon_mb,
    }


def run_reopen(data: Path) -> dict[str, float]:
    """In a fresh process: the index `run_search` left in `data` opened as at start-up,
    searched, and the memory it then takes."""
    from assistant.knowledge import Knowledge

    base_mb = current_mb()
    knowledge = Knowledge(data, _Vectors())
    start = time.perf_counter()
    knowledge.load()
    loaded = time.perf_counter()
    pending = knowledge.index.pending_embeddings()  # loads the vectors
    ready = time.perf_counter()
    asked = queries(random.Random(SEED + 1), QUERIES)
    times = _timed(lambda q: knowledge.index.search(q, 5), asked)
    gc.collect()
    return {
        "chunks": len(knowledge.index),
        "pending": pending,
        "load_s": loaded - start,
        "vectors_s": ready - loaded,
        "p50_ms": statistics.median(times) * 1000,
        "p95_ms": _p95(times) * 1000,
        "base_mb": base_mb,
        "rss_mb": current_mb(),
        "anon_mb": anon_mb(),
        "peak_mb": peak_mb(),
    }


def _p95(times: Sequence[float]) -> float:
    return sorted(times)[int(len(times) * 0.95)]


def busy_core() -> subprocess.Popen[bytes]:
    """A process that keeps one core busy until it is killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _child(*args: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "tests.bench.knowledge_bench", *args],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    if result.returncode:
        raise SystemExit(f"knowledge_bench {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=FILES, help="files in the folder")
    parser.add_argument("--chunks", type=int, default=SEARCH_CHUNKS, help="chunks searched")
    parser.add_argument("--only", choices=["index", "search"], help="one part of the bench")
    parser.add_argument(
        "--phase", choices=["index", "rescan", "search", "search-keep", "search-busy", "reopen"]
    )
    parser.add_argument("--data")
    args = parser.parse_args(argv)
    if args.phase is not None:
        phases: dict[str, Callable[[], object]] = {
            "index": lambda: run_index(folder_for(args.files), Path(args.data)),
            "rescan": lambda: run_rescan(folder_for(args.files), Path(args.data)),
            "search": lambda: run_search(args.chunks, busy=False),
            "search-keep": lambda: run_search(args.chunks, busy=False, keep=Path(args.data)),
            "search-busy": lambda: run_search(args.chunks, busy=True),
            "reopen": lambda: run_reopen(Path(args.data)),
        }
        print(json.dumps(phases[args.phase]()))
        return 0
    rows: list[tuple[str, str, str]] = []
    if args.only in (None, "index"):
        rows += _index_rows(args.files)
    if args.only in (None, "search"):
        rows += _search_rows(args.chunks)
    print("| measure | value | goal |")
    print("|---|---:|---:|")
    for name, value, goal in rows:
        print(f"| {name} | {value} | {goal} |")
    return 0


def _index_rows(files: int) -> list[tuple[str, str, str]]:
    make_folder(files)
    counts = kinds(files)
    data = Path(tempfile.mkdtemp(prefix="knowledge-bench-"))
    try:
        before = _load()
        index = _child("--phase", "index", "--files", str(files), "--data", str(data))
        rescan = _child("--phase", "rescan", "--files", str(files), "--data", str(data))
        after = _load()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    print(f"Knowledge folder: {files:,} files ({counts['md']} Markdown, {counts['txt']} text, "
          f"{counts['py']} Python, {counts['pdf']} PDFs); {before} -> {after}\n")  # fmt: skip
    n, chunks, took = index["files"], index["chunks"], index["indexed_s"]
    return [
        ("files indexed", f"{n:,} files, {chunks:,} chunks", ""),
        ("first start to all searchable by meaning, s", f"{took:,.1f}", ""),
        ("... files/s, chunks/s (built-in embedder)", f"{n / took:,.1f}, {chunks / took:,.1f}", ""),
        ("... of which reading (chunks by keywords), s", f"{index['read_s']:,.1f}", ""),
        (
            "GUI thread's longest gap while indexing, ms",
            f"{index['stall_index_ms']:,.0f}",
            f"<= {GOALS['stall_ms']}",
        ),
        (
            "... also while a file changes, ms",
            f"{index['stall_ms']:,.0f}",
            f"<= {GOALS['stall_ms']}",
        ),
        (
            "... the cycle collector's longest pass meanwhile, ms",
            f"{index['collection_ms']:,.0f}",
            "",
        ),
        ("peak RSS of the app, MB", f"{index['peak_mb']:,.0f}", f"<= {GOALS['rss_mb']}"),
        ("... RSS with the window shown, before indexing, MB", f"{index['window_mb']:,.0f}", ""),
        (
            "a changed file read and embedded again (the watcher), s",
            " / ".join(f"{s:.2f}" for s in index["change_s"]),
            f"<= {GOALS['change_s']}",
        ),
        ("start-up: records loaded, s", f"{rescan['load_s']:,.3f}", ""),
        (
            "start-up rescan of the unchanged folder (0 files read), s",
            f"{rescan['rescan_s']:,.3f}",
            f"< {GOALS['rescan_s']}",
        ),
        ("start-up: vectors loaded, nothing to embed, s", f"{rescan['vectors_s']:,.3f}", ""),
    ]


def _search_rows(chunks: int) -> list[tuple[str, str, str]]:
    before = _load()
    data = Path(tempfile.mkdtemp(prefix="knowledge-search-"))
    try:
        quiet = _child("--phase", "search-keep", "--chunks", str(chunks), "--data", str(data))
        reopen = _child("--phase", "reopen", "--data", str(data))
    finally:
        shutil.rmtree(data, ignore_errors=True)
    busy = _child("--phase", "search-busy", "--chunks", str(chunks))
    print(f"\nSearch: {chunks:,} chunks; {before} -> {_load()}\n")
    goal = f"<= {GOALS['search_p50_ms']}"
    return [
        (
            f"search over {chunks:,} chunks, p50 / p95 ms",
            f"{quiet['p50_ms']:,.2f} / {quiet['p95_ms']:,.2f}",
            goal,
        ),
        (
            "... as the app asks (a project's folder left out), p50 / p95 ms",
            f"{quiet['app_p50_ms']:,.2f} / {quiet['app_p95_ms']:,.2f}",
            goal,
        ),
        (
            "... with the other core busy, p50 / p95 ms",
            f"{busy['p50_ms']:,.2f} / {busy['p95_ms']:,.2f}",
            goal,
        ),
        (
            "... the first search after a file changed, p50 ms",
            f"{quiet['changed_p50_ms']:,.2f}",
            goal,
        ),
        (
            "... bytes written per changed file (100 chunks), median / max kB",
            f"{quiet['written_kb']:,.0f} / {quiet['written_max_kb']:,.0f}",
            "",
        ),
        (
            f"peak RSS with {chunks:,} chunks indexed (no model loaded), MB",
            f"{quiet['peak_mb']:,.0f}",
            "",
        ),
        (
            "... RSS after the changes, of it private (RssAnon), MB",
            f"{quiet['rss_mb']:,.0f}, {quiet['anon_mb']:,.0f}",
            "",
        ),
        (
            "reopened as at start-up: loaded, vectors loaded, s",
            f"{reopen['load_s']:,.1f}, {reopen['vectors_s']:,.2f}",
            "",
        ),
        (
            "... search p50 / p95 ms",
            f"{reopen['p50_ms']:,.2f} / {reopen['p95_ms']:,.2f}",
            goal,
        ),
        (
            "... RSS after 200 searches, of it private (RssAnon); peak, MB",
            f"{reopen['rss_mb']:,.0f}, {reopen['anon_mb']:,.0f}; {reopen['peak_mb']:,.0f}",
            "",
        ),
        ("query embedding by the built-in model, p50 ms", f"{quiet['embed_p50_ms']:,.1f}", ""),
    ]


if __name__ == "__main__":
    sys.exit(main())
