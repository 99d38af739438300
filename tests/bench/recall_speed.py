"""Speed of both search layers at scale, on a quiet machine and with the other core busy.

Part of `recall_bench --scale N,...`: copies of the LoCoMo turns with the embedder's vectors, as
N memories and as N messages in conversations of `PER_CONVERSATION`. Each layer is timed with
its BLAS as it comes (the code before searches pinned it, `blas.enabled = False`) and with one
BLAS thread per search (now), each quiet and then while a busy loop this module starts (and
stops) spins on another core, as a browser or a local model server would on a laptop. Query
embedding is excluded. Also timed: the import of the messages (`import_conversation`, which
indexes them as it writes), the first search after it, opening the store again and its first
search (which reads the conversation index from its cache), and the memory the background
embedding of the messages takes above what the process held before it: with the bench's cached
vectors at N (the store's side: its vectors and their saves), and in a child process with the
built-in model at `EMBEDDED` messages (the model's side).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path

import numpy as np

from assistant.memory import ConversationStore, Message, blas
from assistant.memory.embedding import Embedder
from assistant.memory.items import MemoryItem
from assistant.memory.semantic import SemanticMemory
from assistant.priority import lower_this_thread
from tests.bench.locomo import Dialog, Turn

PER_CONVERSATION = 50  # messages per conversation (2,000 for 100,000 messages)
EMBEDDED = 1000  # messages the child embeds with the built-in model
QUERIES = 200
WARMUP = 5
ROUNDS = 4  # quiet and busy alternate, each on a quarter of the queries: drift hits both alike
ADDS = 200


def _spin(stop: Event, parent: int) -> None:
    # Also ends when the bench is gone (killed before it could set `stop`).
    while not stop.is_set() and os.getppid() == parent:
        for _ in range(100_000):
            pass


@contextmanager
def busy_core() -> Iterator[None]:
    """A process spinning on a core for the duration of the block."""
    spawn = multiprocessing.get_context("spawn")
    stop = spawn.Event()
    process = spawn.Process(target=_spin, args=(stop, os.getpid()))
    process.start()
    time.sleep(0.5)  # let it start spinning
    try:
        yield
    finally:
        stop.set()
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()


def _latencies(search: Callable[[str], object], queries: Sequence[str]) -> list[float]:
    for query in queries[:WARMUP]:
        search(query)
    times = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - start) * 1000)
    return times


def _percentiles(times: list[float]) -> tuple[float, float]:
    p50, p95 = np.percentile(times, [50, 95]).tolist()
    return p50, p95


def _rows(layer: str, n: int, search: Callable[[str], object], queries: Sequence[str]) -> list[str]:
    """Quiet and busy latencies, BLAS as it comes and pinned; quiet and busy rounds alternate
    (`ROUNDS`), so that the machine's own load, which drifts, weighs on both alike."""
    out = []
    for pinned in (False, True):
        blas.enabled = pinned
        quiet_times: list[float] = []
        busy_times: list[float] = []
        try:
            for part in range(ROUNDS):
                chosen = queries[part::ROUNDS]
                quiet_times += _latencies(search, chosen)
                with busy_core():
                    busy_times += _latencies(search, chosen)
        finally:
            blas.enabled = True
        quiet, busy = _percentiles(quiet_times), _percentiles(busy_times)
        threads = "1 per search (now)" if pinned else "as it comes (before)"
        ratio = busy[0] / quiet[0]
        cells = [layer, f"{n:,}", threads, *(f"{v:.2f}" for v in (*quiet, *busy)), f"{ratio:.1f}"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def _timed(action: Callable[[], object], times: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(times):
        action()
    return (time.perf_counter() - start) / times


def report(
    dialogs: Sequence[Dialog], embedder: Embedder, sizes: Sequence[int], child: bool = True
) -> str:
    """The speed tables for each size in `sizes` (and, with `child`, the memory of the
    background embedding with the built-in model)."""
    turns = [t for d in dialogs for t in d.turns]
    queries = [q.text for d in dialogs for q in d.questions][:QUERIES]
    load = os.getloadavg()[0]
    lines = [
        f"\nSearch latency (ms; query embedding excluded; load average {load:.1f} at the start):\n",
        "| layer | records | BLAS threads | quiet p50 | quiet p95 | busy p50 | busy p95 "
        "| busy / quiet p50 |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    other = [
        "\n| layer | records | add ms | open again s | its first search s | disk MB "
        "| import s | first search after the import s | embedding: MB above, peak / kept |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="recall-scale-") as tmp:
            for measure in (_memory_rows, _conversation_rows):
                speed, rest = measure(Path(tmp), n, turns, queries, embedder)
                lines += speed
                other.append(rest)
                print("\n".join([*speed, rest]), file=sys.stderr, flush=True)  # as it goes
    if not child:
        return "\n".join(lines + other)
    embedded = f"\nBackground embedding with the built-in model: {embedding_in_child(turns)}"
    print(embedded, file=sys.stderr, flush=True)
    return "\n".join([*lines, *other, embedded])


def _memory_rows(
    root: Path, n: int, turns: Sequence[Turn], queries: Sequence[str], embedder: Embedder
) -> tuple[list[str], str]:
    mem = SemanticMemory.open(root / "memory", embedder)
    for copy in range(0, n, len(turns)):
        mem.insert(
            [
                MemoryItem(f"{copy}-{i}", t.text, "event", 0.5, t.time, t.time, t.time)
                for i, t in enumerate(turns[: n - copy])
            ],
            dedupe=False,  # the copies too
        )
    speed = _rows("SemanticMemory", n, mem.search, queries)
    add = _timed(lambda: mem.add(turns[0].text, origin="user"), ADDS)
    mem.close()
    start = time.perf_counter()
    opened = SemanticMemory.open(root / "memory", embedder)
    open_s = time.perf_counter() - start
    first = _timed(lambda: opened.search(queries[0]))
    opened.close()
    size = _megabytes(root / "memory")
    rest = f"| SemanticMemory | {n:,} | {add * 1000:.2f} | {open_s:.2f} | {first:.2f} "
    rest += f"| {size:.0f} | | | |"
    return speed, rest


def _conversation_rows(
    root: Path, n: int, turns: Sequence[Turn], queries: Sequence[str], embedder: Embedder
) -> tuple[list[str], str]:
    store = ConversationStore(root, embedder)
    began = time.perf_counter()
    for number, start in enumerate(range(0, n, PER_CONVERSATION)):
        chosen = (turns[j % len(turns)] for j in range(start, min(n, start + PER_CONVERSATION)))
        messages = [
            Message(f"m{i}", f"m{i - 1}" if i else None, "user", t.text, t.time.isoformat())
            for i, t in enumerate(chosen)
        ]
        store.import_conversation(f"c{number}", f"c{number}", messages[0].created_at, messages)
    imported = time.perf_counter() - began
    after_import = _timed(lambda: store.search(queries[1]))
    peak_mb, kept_mb = _above(store.embed_pending)
    speed = _rows("ConversationStore", n, store.search, queries)
    target = store.create("appended").id

    def append() -> None:
        store.append(target, "user", turns[0].text)
        store.embed_pending()

    add = _timed(append, ADDS)
    store.close()
    began = time.perf_counter()
    reopened = ConversationStore(root, embedder)
    open_s = time.perf_counter() - began
    first = _timed(lambda: reopened.search(queries[0]))
    reopened.close()
    size = _megabytes(store.directory)
    rest = f"| ConversationStore | {n:,} | {add * 1000:.2f} | {open_s:.2f} | {first:.2f} "
    rest += f"| {size:.0f} | {imported:.1f} | {after_import:.2f} | {peak_mb:.0f} / {kept_mb:.0f} |"
    return speed, rest


def _status_mb(field: str) -> float:
    """A field of /proc/self/status (VmRSS, VmHWM: the peak since the last reset), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"no {field} in /proc/self/status")


def _above(action: Callable[[], object]) -> tuple[float, float]:
    """The peak resident memory while `action` runs and what stays after it, above the
    resident memory before it, MB (Linux: writing 5 to clear_refs resets the peak)."""
    before = _status_mb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    action()
    return _status_mb("VmHWM") - before, _status_mb("VmRSS") - before


def _embed_in_child(texts: Sequence[str], times: Sequence[str], out: Queue[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="recall-embed-") as tmp:
        store = ConversationStore(Path(tmp))
        for number, start in enumerate(range(0, len(texts), PER_CONVERSATION)):
            chunk = list(zip(texts, times, strict=True))[start : start + PER_CONVERSATION]
            messages = [
                Message(f"m{i}", f"m{i - 1}" if i else None, "user", text, when)
                for i, (text, when) in enumerate(chunk)
            ]
            store.import_conversation(f"c{number}", f"c{number}", times[0], messages)
        from assistant.memory.local_embedder import LocalEmbedder

        embedder = LocalEmbedder()
        embedder.embed(["a first query loads the model, as the app's first search does"])
        store.set_embedder(embedder)
        before = _status_mb("VmRSS")
        began = time.perf_counter()
        cpu = time.process_time()
        measured: list[tuple[float, float]] = []

        def background() -> None:  # as the app does it: on a thread of its own, lowered
            lower_this_thread()
            measured.append(_above(store.embed_pending))

        thread = threading.Thread(target=background)
        thread.start()
        thread.join()
        (peak, kept), seconds = measured[0], time.perf_counter() - began
        share = (time.process_time() - cpu) / seconds
        store.close()
    out.put(
        f"{len(texts)} messages in {seconds:.0f} s ({share:.0%} CPU); process {before:.0f} MB, "
        f"peak {peak:.0f} MB above it, {kept:.0f} MB kept"
    )


def embedding_in_child(turns: Sequence[Turn]) -> str:
    """The built-in model's background embedding of `EMBEDDED` messages in a fresh process:
    its resident memory before, and the peak above it."""
    chosen = [turns[i % len(turns)] for i in range(EMBEDDED)]
    texts = [f"{t.text} ({i})" for i, t in enumerate(chosen)]  # each distinct, as in an import
    spawn = multiprocessing.get_context("spawn")
    out: Queue[str] = spawn.Queue()
    process = spawn.Process(
        target=_embed_in_child, args=(texts, [t.time.isoformat() for t in chosen], out)
    )
    process.start()
    result = out.get()
    process.join()
    return result


def _megabytes(directory: Path) -> float:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 2**20
