"""Recall benchmark on LoCoMo: do the two search layers find the turns that answer a question?

Run as `python -m tests.bench.recall_bench` (`make bench`; `--ablation` adds the ablation rows).
It reads `../shared/data/locomo-dev.json` beside the repository (or `--data PATH`) and skips with
a message when the file is absent: the data (CC BY-NC 4.0) never enters the repository or the
package.

The measure is the one of the published retrieval rows (see the data's README): one fresh store
per conversation, one record per dialog turn ("Speaker: text", plus " [shares a photo: CAPTION]"),
the session's date as the record's time (never in its text). Each question with evidence is a
query; recall@k is the share of its evidence turns among the first k results, averaged over the
questions, overall and per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial).

Layers: `SemanticMemory.search` with one memory per turn, and `ConversationStore.search` with one
conversation per LoCoMo conversation (the first speaker's turns as user messages, the other's as
assistant messages). Each runs with the default configuration and with one idea switched off or
changed at a time (the ablation rows). Texts are embedded once per embedder and the vectors
reused, so the latencies exclude query embedding, which is timed on its own.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.memory import ConversationStore, Message
from assistant.memory import text as text_module
from assistant.memory.embedding import Embedder
from assistant.memory.items import MemoryItem
from assistant.memory.ranking import SearchConfig
from assistant.memory.semantic import SemanticMemory

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
K = 10
PER_CONVERSATION = 50  # messages per conversation at --scale (2,000 for 100,000 messages)
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")

_started = time.perf_counter()


def say(message: str) -> None:
    """Progress on stderr, with the seconds since this process started."""
    print(f"[{time.perf_counter() - _started:7.1f}s] {message}", file=sys.stderr, flush=True)


# -- data ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One dialog turn: its id (`D3:7`), speaker, record text and session time."""

    id: str
    speaker: str
    text: str
    time: datetime


@dataclass(frozen=True)
class Question:
    """A question, the ids of the turns that answer it, and its category."""

    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Dialog:
    """One LoCoMo conversation."""

    id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]


def load(path: Path) -> list[Dialog]:
    """The conversations of a LoCoMo file, evidence ids normalised as the README says."""
    dialogs = []
    for entry in json.loads(path.read_text(encoding="utf-8")):
        conversation = entry["conversation"]
        turns: list[Turn] = []
        session = 1
        while f"session_{session}" in conversation:
            stamp = conversation[f"session_{session}_date_time"]
            when = datetime.strptime(stamp, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
            for turn in conversation[f"session_{session}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                turns.append(Turn(turn["dia_id"], turn["speaker"], text, when))
            session += 1
        known = {t.id for t in turns}
        questions = []
        for qa in entry["qa"]:
            ids: list[str] = []
            for raw in qa.get("evidence", []):
                for match in _EVIDENCE.finditer(raw):
                    turn_id = f"D{match[1]}:{int(match[2])}"
                    if turn_id in known and turn_id not in ids:
                        ids.append(turn_id)
            if ids:
                questions.append(Question(qa["question"], tuple(ids), int(qa["category"])))
        speakers = (conversation["speaker_a"], conversation["speaker_b"])
        dialogs.append(Dialog(entry["sample_id"], speakers, turns, questions))
    return dialogs


# -- embedders -----------------------------------------------------------------------------------


class CachedEmbedder:
    """An `Embedder` that embeds each distinct text once (the real one is timed meanwhile)."""

    def __init__(self, real: Embedder) -> None:
        self.real = real
        self.name = real.name
        self.dim = real.dim
        self._cache: dict[str, npt.NDArray[np.float32]] = {}
        self.seconds = 0.0
        self.embedded = 0

    def prime(self, texts: Sequence[str]) -> None:
        """Embed the texts not seen yet, in one go."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if not todo:
            return
        start = time.perf_counter()
        vectors = self.real.embed(todo)
        self.seconds += time.perf_counter() - start
        self.embedded += len(todo)
        self._cache.update(zip(todo, vectors, strict=True))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The cached vectors (embedding what is missing)."""
        self.prime(texts)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


def make_embedder(name: str) -> Embedder | None:
    """The embedder called `name`: "local" (the app's default) or "none" (keywords only)."""
    if name == "none":
        return None
    from assistant.memory.local_embedder import LocalEmbedder

    return LocalEmbedder()


# -- the two layers ------------------------------------------------------------------------------


@dataclass
class Score:
    """Recall of one run, overall and per category, and its search latencies."""

    hits: dict[int, list[tuple[float, float]]]
    latencies_ms: list[float]

    def recall(self, category: int | None = None) -> tuple[float, float]:
        """Mean R@5 and R@10 (of one category, or of all)."""
        rows = [r for c, rs in self.hits.items() if category in (None, c) for r in rs]
        return float(np.mean([r[0] for r in rows])), float(np.mean([r[1] for r in rows]))


def recall_at(ranked: Sequence[str], evidence: Sequence[str]) -> tuple[float, float]:
    """The share of `evidence` among the first 5 and the first 10 of `ranked`."""
    wanted = set(evidence)
    return len(wanted & set(ranked[:5])) / len(wanted), len(wanted & set(ranked[:10])) / len(wanted)


Searcher = Callable[[str], list[str]]


def memory_layer(
    dialog: Dialog, directory: Path, embedder: Embedder | None, config: SearchConfig
) -> tuple[Searcher, Callable[[], None]]:
    """A SemanticMemory with one memory per turn, and its search returning turn ids."""
    mem = SemanticMemory.open(directory, embedder, config)
    items = [
        MemoryItem(
            id=f"t{i}",
            text=turn.text,
            kind="event",
            importance=0.5,
            created_at=turn.time,
            updated_at=turn.time,
            last_accessed=turn.time,
            tags=(turn.id,),
        )
        for i, turn in enumerate(dialog.turns)
    ]
    mem.insert(items, dedupe=False)  # every turn, even one that repeats another
    turn_of = {item.id: turn.id for item, turn in zip(items, dialog.turns, strict=True)}

    def search(query: str) -> list[str]:
        return [turn_of[hit.item.id] for hit in mem.search(query, k=K)]

    return search, mem.close


def conversation_layer(
    dialog: Dialog, directory: Path, embedder: Embedder | None, config: SearchConfig
) -> tuple[Searcher, Callable[[], None]]:
    """A ConversationStore holding the dialog as one conversation; search returns turn ids."""
    store = ConversationStore(directory, embedder, config)
    messages = []
    for i, turn in enumerate(dialog.turns):
        messages.append(
            Message(
                id=turn.id.replace(":", "_"),
                parent_id=messages[i - 1].id if i else None,
                role="user" if turn.speaker == dialog.speakers[0] else "assistant",
                content=turn.text,
                created_at=turn.time.isoformat(),
            )
        )
    store.import_conversation(
        dialog.id.replace("-", "_"), dialog.id, messages[0].created_at, messages
    )
    store.embed_pending()

    def search(query: str) -> list[str]:
        return [hit.message_id.replace("_", ":") for hit in store.search(query, k=K)]

    return search, store.close


Layer = Callable[[Dialog, Path, Embedder | None, SearchConfig], tuple[Searcher, Callable[[], None]]]
LAYERS: dict[str, Layer] = {"SemanticMemory": memory_layer, "ConversationStore": conversation_layer}


def run(
    dialogs: Sequence[Dialog], layer: Layer, embedder: Embedder | None, config: SearchConfig
) -> Score:
    """Recall and latency of one layer and configuration over all dialogs."""
    hits: dict[int, list[tuple[float, float]]] = {c: [] for c in CATEGORIES}
    latencies: list[float] = []
    for dialog in dialogs:
        with tempfile.TemporaryDirectory(prefix="recall-") as tmp:
            search, close = layer(dialog, Path(tmp), embedder, config)
            for question in dialog.questions:
                start = time.perf_counter()
                ranked = search(question.text)
                latencies.append((time.perf_counter() - start) * 1000)
                hits[question.category].append(recall_at(ranked, question.evidence))
            close()
    return Score(hits, latencies)


@contextmanager
def no_stemming() -> Iterator[None]:
    """Index and query whole words instead of their stems."""
    stem = text_module.stem
    text_module.stem = lambda word: word  # type: ignore[assignment]
    try:
        yield
    finally:
        text_module.stem = stem


# -- the report ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One row of the ablation: a name, a configuration, and whether words are stemmed."""

    name: str
    config: SearchConfig
    stemming: bool = True
    layers: tuple[str, ...] = tuple(LAYERS)


def variants() -> list[Variant]:
    """The default first, then one change at a time."""
    base = SearchConfig()
    return [
        Variant("default", base),
        Variant("RRF (k=60) instead of the weighted sum", replace(base, fusion="rrf")),
        Variant("meaning weight 0.5 instead of 0.3", replace(base, dense_weight=0.5)),
        Variant("BM25 b=0.75 (rank_bm25's default)", replace(base, bm25_b=0.75)),
        Variant("no stemming (whole words)", base, stemming=False),
        Variant(
            "no previous message in the keyword document",
            replace(base, keyword_context=False),
            layers=("ConversationStore",),
        ),
        Variant(
            "no date weighing (a named period does not favour its messages)",
            replace(base, date_weight=0.0),
            layers=("ConversationStore",),
        ),
        Variant(
            "previous message's similarity added to the meaning score (x0.5)",
            replace(base, context_weight=0.5),
            layers=("ConversationStore",),
        ),
    ]


def table(rows: list[tuple[str, str, str, Score]]) -> str:
    """A Markdown table: one row per layer, embedder and variant, with recall per category."""
    head = ["layer", "embedder", "variant", "R@5", "R@10"]
    head += [f"R@10 {c}" for c in CATEGORIES.values()] + ["p50 ms", "p95 ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 3 + "---:|" * (len(head) - 3)]
    for layer, embedder, variant, score in rows:
        r5, r10 = score.recall()
        cells = [layer, embedder, variant, f"{r5:.3f}", f"{r10:.3f}"]
        cells += [f"{score.recall(c)[1]:.3f}" for c in CATEGORIES]
        lat = sorted(score.latencies_ms)
        cells += [f"{statistics.median(lat):.2f}", f"{lat[int(0.95 * (len(lat) - 1))]:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scale(dialogs: Sequence[Dialog], embedder: CachedEmbedder, n: int) -> str:
    """Search and add latency of both layers holding `n` records (copies of the LoCoMo turns;
    as messages, in conversations of `PER_CONVERSATION`), with the embedder's real vectors."""
    turns = [t for d in dialogs for t in d.turns]
    queries = [q.text for d in dialogs for q in d.questions][:200]
    lines = ["| layer | records | search p50 ms | search p95 ms | add ms (mean of 200) | disk MB |"]
    lines.append("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="recall-scale-") as tmp:
        root = Path(tmp)
        mem = SemanticMemory.open(root / "memory", embedder)
        copies = (n + len(turns) - 1) // len(turns)
        for copy in range(copies):
            count = min(len(turns), n - copy * len(turns))
            mem.insert(
                [
                    MemoryItem(f"{copy}-{i}", t.text, "event", 0.5, t.time, t.time, t.time)
                    for i, t in enumerate(turns[:count])
                ],
                dedupe=False,  # the copies too
            )
        say(f"SemanticMemory: {len(mem)} memories")
        row = _timed_row("SemanticMemory", mem.search, queries, n, lambda i: mem.add(turns[i].text))
        mem.close()
        lines.append(f"{row} {_megabytes(root / 'memory'):.0f} |")
        store = ConversationStore(root, embedder)
        for number, start in enumerate(range(0, n, PER_CONVERSATION)):
            count = min(PER_CONVERSATION, n - start)
            messages = [
                Message(f"m{i}", f"m{i - 1}" if i else None, "user", t.text, t.time.isoformat())
                for i, t in enumerate(turns[j % len(turns)] for j in range(start, start + count))
            ]
            store.import_conversation(f"c{number}", f"c{number}", messages[0].created_at, messages)
        store.embed_pending()
        say(f"ConversationStore: {n} messages in {PER_CONVERSATION}-message conversations")
        target = store.create("appended").id

        def append(i: int) -> None:
            store.append(target, "user", turns[i].text)
            store.embed_pending()

        row = _timed_row("ConversationStore", store.search, queries, n, append)
        store.close()
        lines.append(f"{row} {_megabytes(store.directory):.0f} |")
    return "\n".join(lines)


def _timed_row(
    layer: str,
    search: Callable[[str], object],
    queries: Sequence[str],
    n: int,
    add: Callable[[int], object],
) -> str:
    for query in queries[:5]:
        search(query)  # warm up
    times = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - start) * 1000)
    start = time.perf_counter()
    for i in range(200):
        add(i)
    add_ms = (time.perf_counter() - start) * 1000 / 200
    p50, p95 = np.percentile(times, [50, 95]).tolist()
    return f"| {layer} | {n:,} | {p50:.2f} | {p95:.2f} | {add_ms:.2f} |"


def _megabytes(directory: Path) -> float:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 2**20


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedders", default="local,none", help="comma-separated: local, none")
    parser.add_argument("--ablation", action="store_true", help="also run each ablation row")
    parser.add_argument(
        "--scale", type=int, default=0, help="also time both layers at this many records"
    )
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"recall_bench: skipped, no LoCoMo data at {args.data}")
        return 0
    dialogs = load(args.data)
    questions = sum(len(d.questions) for d in dialogs)
    say(f"{len(dialogs)} conversations, {sum(len(d.turns) for d in dialogs)} turns, {questions} q")
    rows: list[tuple[str, str, str, Score]] = []
    notes: list[str] = []
    cached: list[CachedEmbedder] = []
    for name in args.embedders.split(","):
        real = make_embedder(name)
        embedder = CachedEmbedder(real) if real is not None else None
        if embedder is not None:
            cached.append(embedder)
            say(f"embedding with {embedder.name}")
            embedder.prime([t.text for d in dialogs for t in d.turns])
            embedder.prime([q.text for d in dialogs for q in d.questions])
            per_text = 1000 * embedder.seconds / embedder.embedded
            notes.append(
                f"{embedder.name}: {embedder.embedded} texts embedded in batches, "
                f"{per_text:.1f} ms per text (query embedding is not in the latencies)"
            )
        label = embedder.name if embedder is not None else "none (keywords only)"
        for variant in variants() if args.ablation else variants()[:1]:
            if embedder is None and variant.name.startswith(("RRF", "meaning", "previous")):
                continue  # these only change how meaning is used
            for layer_name in variant.layers:
                say(f"{layer_name}, {label}, {variant.name}")
                if variant.stemming:
                    score = run(dialogs, LAYERS[layer_name], embedder, variant.config)
                else:
                    with no_stemming():
                        score = run(dialogs, LAYERS[layer_name], embedder, variant.config)
                rows.append((layer_name, label, variant.name, score))
    print(f"Recall on {args.data.name}: {len(dialogs)} conversations, {questions} questions\n")
    print(table(rows))
    print()
    for note in notes:
        print(f"- {note}")
    print("- Goals: ConversationStore R@5 >= 0.60, R@10 >= 0.70; SemanticMemory R@5 >= 0.55, ")
    print("  R@10 >= 0.65 (both with the default embedder).")
    if args.scale and cached:
        say(f"timing both layers at {args.scale:,} records")
        print(
            f"\nLatency at {args.scale:,} records ({cached[0].name} vectors; the latencies exclude"
        )
        print("query embedding; a message's add includes embedding it, from the cache):\n")
        print(scale(dialogs, cached[0], args.scale))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
