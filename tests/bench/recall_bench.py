"""Recall benchmark on LoCoMo: do the two search layers find the turns that answer a question?

Run as `python -m tests.bench.recall_bench` (`make bench`; `--ablation` adds the ablation rows).
It reads `../shared/data/locomo-dev.json` beside the repository (or `--data PATH`) and skips with
a message when the file is absent: the data (CC BY-NC 4.0) never enters the repository or the
package.

Besides LoCoMo's one record per turn, an app-like run (`... + memories` rows) gives each store
the memories the curator would have extracted (the dataset's `observation`s, each naming its
source turn; see `locomo`): the conversation store finds a message also by the memories from it
(`ConversationStore.set_message_keys`), and the semantic memory holds those memories, a hit
counting as its source turn. `--scale` times both layers at that many records, quiet and with
the other core busy (`recall_speed`).

The measure is the one of the published retrieval rows (see the data's README): one fresh store
per conversation, one record per dialog turn ("Speaker: text", plus " [shares a photo: CAPTION]"),
the session's date as the record's time (never in its text). Each question with evidence is a
query; recall@k is the share of its evidence turns among the first k results, averaged over the
questions, overall and per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial).

Layers: `SemanticMemory.search` with one memory per turn, and `ConversationStore.search` with one
conversation per session of a LoCoMo conversation, as a user's chats on different days would be
(the first speaker's turns as user messages, the other's as assistant messages; the session's
`session_summary` as the conversation's summary). Each runs with the default configuration and
with one idea switched off or changed at a time (the ablation rows). Texts are embedded once per
embedder and the vectors reused, so the latencies exclude query embedding, which is timed on its
own.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

import numpy as np
import numpy.typing as npt

from assistant.memory import ConversationStore, Message, message_index, when
from assistant.memory import text as text_module
from assistant.memory.embedding import Embedder
from assistant.memory.items import MemoryItem, Source
from assistant.memory.memory_keys import tie_memories_to_messages
from assistant.memory.ranking import Fusion, SearchConfig
from assistant.memory.semantic import SemanticMemory
from tests.bench import recall_speed
from tests.bench.locomo import DEFAULT_DATA, Dialog, load

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
K = 10

_started = time.perf_counter()


def say(message: str) -> None:
    """Progress on stderr, with the seconds since this process started."""
    print(f"[{time.perf_counter() - _started:7.1f}s] {message}", file=sys.stderr, flush=True)


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

    def load(self, path: Path) -> None:
        """Take the vectors saved by `save` (of this embedder) as embedded already."""
        if path.is_file():
            with np.load(path, allow_pickle=False) as data:
                if str(data["model"]) == self.name:
                    self._cache.update(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def save(self, path: Path) -> None:
        """Keep the vectors for the next run (`--vectors`: while trying ideas)."""
        texts = list(self._cache)
        vectors = np.stack([self._cache[t] for t in texts])
        np.savez(path, model=np.array(self.name), texts=np.array(texts), vectors=vectors)


def make_embedder(name: str) -> Embedder | None:
    """The embedder called `name`: "local" (the app's default) or "none" (keywords only)."""
    if name == "none":
        return None
    from assistant.memory.local_embedder import LocalEmbedder

    return LocalEmbedder()


# -- the layers ----------------------------------------------------------------------------------


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


def memory_items(dialog: Dialog, curator: bool) -> tuple[list[MemoryItem], list[str]]:
    """The memories of a dialog and the turn of each: one per turn, or (`curator`) the
    memories the curator would have extracted, dated by their source turn."""
    time_of = {turn.id: turn.time for turn in dialog.turns}
    session_of = {turn.id: turn.session for turn in dialog.turns}
    pairs = (
        [(m.text, m.turn) for m in dialog.memories]
        if curator
        else [(t.text, t.id) for t in dialog.turns]
    )
    items = [
        MemoryItem(
            id=f"t{i}",
            text=text,
            kind="event",
            importance=0.5,
            created_at=time_of[turn],
            updated_at=time_of[turn],
            last_accessed=time_of[turn],
            tags=(turn,),
            source=Source(conversation_id(dialog, session_of[turn]), message_id(turn)),
        )
        for i, (text, turn) in enumerate(pairs)
    ]
    return items, [turn for _, turn in pairs]


def memory_layer(
    dialog: Dialog,
    directory: Path,
    embedder: Embedder | None,
    config: SearchConfig,
    curator: bool = False,
) -> tuple[Searcher, Callable[[], None]]:
    """A SemanticMemory with one memory per turn (or the curator's memories), each learned
    from its turn's message (in a conversation store beside it, keywords only, that gives the
    memories their contexts as the app does), and its search returning turn ids (each once,
    at its best place)."""
    mem = SemanticMemory.open(directory / "memory", embedder, config)
    items, turns = memory_items(dialog, curator)
    mem.insert(items, dedupe=False)  # every turn, even one that repeats another
    closers = [mem.close]
    if config.source_context:
        store = dialog_store(dialog, directory, None, config)
        closers += [tie_memories_to_messages(mem, store), store.close]
    turn_of = {item.id: turn for item, turn in zip(items, turns, strict=True)}
    # A turn with several memories could fill the top 10 with itself: ask for more.
    depth = 3 * K if curator else K
    now = dialog.turns[-1].time + timedelta(days=1)  # the questions come after the dialog

    def search(query: str) -> list[str]:
        ranked = [turn_of[hit.item.id] for hit in mem.search(query, k=depth, now=now)]
        return list(dict.fromkeys(ranked))[:K]

    def close() -> None:
        for closer in reversed(closers):
            closer()

    return search, close


def conversation_id(dialog: Dialog, session: int) -> str:
    """The id of a dialog's session's conversation in a store."""
    return f"{dialog.id.replace('-', '_')}_s{session}"


def message_id(turn_id: str) -> str:
    """The id of a turn's message in a store."""
    return turn_id.replace(":", "_")


def dialog_store(
    dialog: Dialog, directory: Path, embedder: Embedder | None, config: SearchConfig
) -> ConversationStore:
    """A ConversationStore holding each session of the dialog as a conversation, with the
    session's summary as its summary (the first speaker's turns as user messages, the other's
    as assistant messages)."""
    store = ConversationStore(directory, embedder, config)
    sessions: dict[int, list[Message]] = {}
    for turn in dialog.turns:
        messages = sessions.setdefault(turn.session, [])
        messages.append(
            Message(
                id=message_id(turn.id),
                parent_id=messages[-1].id if messages else None,
                role="user" if turn.speaker == dialog.speakers[0] else "assistant",
                content=turn.text,
                created_at=turn.time.isoformat(),
            )
        )
    for session, messages in sessions.items():
        cid = conversation_id(dialog, session)
        summary = dialog.summaries.get(session, "")
        store.import_conversation(cid, cid, messages[0].created_at, messages, summary=summary)
    return store


def conversation_layer(
    dialog: Dialog,
    directory: Path,
    embedder: Embedder | None,
    config: SearchConfig,
    curator: bool = False,
) -> tuple[Searcher, Callable[[], None]]:
    """A ConversationStore holding the dialog, a conversation per session (with `curator`, each
    turn found also by the memories extracted from it); search returns turn ids."""
    store = dialog_store(dialog, directory, embedder, config)
    if curator:
        session_of = {turn.id: turn.session for turn in dialog.turns}
        keys: dict[tuple[str, str], list[str]] = {}
        for memory in dialog.memories:
            message = (conversation_id(dialog, session_of[memory.turn]), message_id(memory.turn))
            keys.setdefault(message, []).append(memory.text)
        store.set_message_keys(keys)
    store.embed_pending()

    now = dialog.turns[-1].time + timedelta(days=1)  # the questions come after the dialog

    def search(query: str) -> list[str]:
        return [hit.message_id.replace("_", ":") for hit in store.search(query, k=K, now=now)]

    return search, store.close


Layer = Callable[[Dialog, Path, Embedder | None, SearchConfig], tuple[Searcher, Callable[[], None]]]
LAYERS: dict[str, Layer] = {
    "SemanticMemory": memory_layer,
    "ConversationStore": conversation_layer,
    "SemanticMemory of curator memories": partial(memory_layer, curator=True),
    "ConversationStore + memories as keys": partial(conversation_layer, curator=True),
}
PER_TURN = ("SemanticMemory", "ConversationStore")


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


@contextmanager
def months_and_years_only() -> Iterator[None]:
    """Dates as before this round: a month of a year or a year, nothing relative, no day."""
    full = message_index.time_span

    def older(query: str, now: datetime | None = None) -> when.Span | None:
        named = when._MONTH_YEAR.search(query) or when._YEAR.search(query)
        day = when._DAY_MONTH_YEAR.search(query) or when._MONTH_DAY_YEAR.search(query)
        return full(query, now) if named and not day else None

    message_index.time_span = older  # type: ignore[assignment]
    try:
        yield
    finally:
        message_index.time_span = full


@contextmanager
def dates_of_round_three() -> Iterator[None]:
    """Dates as before round 4: no week of a month, no season, a day's comma then a space."""
    never = re.compile(r"(?!)")
    old_day = re.compile(
        rf"\b({when._MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b",
        re.IGNORECASE,
    )
    saved = {name: getattr(when, name) for name in ("_WEEK_OF", "_SEASON_YEAR", "_SEASON")}
    saved["_MONTH_DAY_YEAR"] = when._MONTH_DAY_YEAR
    for name in ("_WEEK_OF", "_SEASON_YEAR", "_SEASON"):
        setattr(when, name, never)
    when._MONTH_DAY_YEAR = old_day
    try:
        yield
    finally:
        for name, pattern in saved.items():
            setattr(when, name, pattern)


@contextmanager
def neighbours_pass_keys() -> Iterator[None]:
    """A message passes its neighbours the relevance its keys give it too (before round 5)."""
    own = message_index.MessageIndex._own_relevance

    def with_keys(index: message_index.MessageIndex, fused: Fusion[int], *_: object) -> object:
        return fused.relevance

    message_index.MessageIndex._own_relevance = with_keys  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        message_index.MessageIndex._own_relevance = own  # type: ignore[method-assign]


# -- the report ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One row of the ablation: a name, a configuration, a change of the code while it runs,
    the layers it applies to, and whether it changes only how meaning is used."""

    name: str
    config: SearchConfig
    patch: Callable[[], AbstractContextManager[None]] = nullcontext
    layers: tuple[str, ...] = tuple(LAYERS)
    dense_only: bool = False


def variants() -> list[Variant]:
    """The default first, then one change at a time."""
    base = SearchConfig()
    conversations = ("ConversationStore", "ConversationStore + memories as keys")
    memories = ("SemanticMemory", "SemanticMemory of curator memories")
    return [
        Variant("default", base),
        Variant(
            "RRF (k=60) instead of the weighted sum", replace(base, fusion="rrf"), dense_only=True
        ),
        Variant(
            "meaning weight 0.5 instead of 0.3", replace(base, dense_weight=0.5), dense_only=True
        ),
        Variant("BM25 b=0.75 (rank_bm25's default)", replace(base, bm25_b=0.75)),
        Variant("no stemming (whole words)", base, no_stemming),
        Variant(
            "no previous message in the keyword document",
            replace(base, keyword_context=False),
            layers=conversations,
        ),
        Variant(
            "no date weighing (a named period does not favour its messages or memories)",
            replace(base, date_weight=0.0),
        ),
        Variant(
            "dates as before: a month of a year or a year (no day, nothing relative)",
            base,
            months_and_years_only,
            layers=conversations,
        ),
        Variant(
            'dates of round 3: no week of a month, no season ("last summer")',
            base,
            dates_of_round_three,
        ),
        Variant(
            "previous message's similarity added to the meaning score (x0.5)",
            replace(base, context_weight=0.5),
            layers=conversations,
            dense_only=True,
        ),
        Variant(
            "a named person or place favours the results that mention it (+0.1)",
            replace(base, entity_weight=0.1),
            layers=conversations,
        ),
        Variant(
            "no context: a memory is not found by its message and the one before it",
            replace(base, source_context=False),
            layers=memories,
        ),
        Variant(
            "no summaries: a conversation's summary does not favour its messages",
            replace(base, summary_weight=0.0),
            layers=conversations,
        ),
        Variant(
            "no neighbours: a message takes nothing of its neighbours' relevance",
            replace(base, neighbour_weight=0.0),
            layers=conversations,
        ),
        *(
            Variant(
                f"neighbour weight {weight} instead of 0.25",
                replace(base, neighbour_weight=weight),
                layers=conversations,
            )
            for weight in (0.15, 0.35)
        ),
        Variant(
            "a named period's best messages do not join the candidates",
            replace(base, period_candidates=False),
            layers=conversations,
        ),
        Variant(
            "neighbours pass on the relevance their keys give them too",
            base,
            neighbours_pass_keys,
            layers=("ConversationStore + memories as keys",),
        ),
        Variant(
            "memories not used as keys of their messages",
            replace(base, message_keys=False),
            layers=("ConversationStore + memories as keys",),
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedders", default="local,none", help="comma-separated: local, none")
    parser.add_argument("--ablation", action="store_true", help="also run each ablation row")
    parser.add_argument("--layers", default=",".join(LAYERS), help="comma-separated layer names")
    parser.add_argument(
        "--only", default="", help="run only the variants whose name has one of these (commas)"
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N (trying)")
    parser.add_argument("--vectors", type=Path, help="keep the vectors here between runs")
    parser.add_argument(
        "--scale", default="", help="comma-separated record counts to time both layers at"
    )
    parser.add_argument(
        "--no-child", action="store_true", help="with --scale: no embedding in a child process"
    )
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"recall_bench: skipped, no LoCoMo data at {args.data}")
        return 0
    dialogs = load(args.data)[: args.conversations or None]
    questions = sum(len(d.questions) for d in dialogs)
    say(f"{len(dialogs)} conversations, {sum(len(d.turns) for d in dialogs)} turns, {questions} q")
    layers = [name for name in args.layers.split(",") if name]
    rows: list[tuple[str, str, str, Score]] = []
    notes: list[str] = []
    cached: list[CachedEmbedder] = []
    for name in args.embedders.split(","):
        real = make_embedder(name)
        embedder = CachedEmbedder(real) if real is not None else None
        if embedder is not None:
            cached.append(embedder)
            if args.vectors:
                embedder.load(args.vectors)
            say(f"embedding with {embedder.name}")
            embedder.prime([t.text for d in dialogs for t in d.turns])
            embedder.prime([q.text for d in dialogs for q in d.questions])
            embedder.prime([m.text for d in dialogs for m in d.memories])
            embedder.prime([text for d in dialogs for text in d.summaries.values()])
            if args.vectors:
                embedder.save(args.vectors)
            if embedder.embedded:
                per_text = 1000 * embedder.seconds / embedder.embedded
                notes.append(
                    f"{embedder.name}: {embedder.embedded} texts embedded in batches, "
                    f"{per_text:.1f} ms per text (query embedding is not in the latencies)"
                )
        label = embedder.name if embedder is not None else "none (keywords only)"
        for variant in variants() if args.ablation else variants()[:1]:
            chosen = any(part in variant.name for part in args.only.split(","))
            if (embedder is None and variant.dense_only) or not chosen:
                continue
            for layer_name in [n for n in variant.layers if n in layers]:
                say(f"{layer_name}, {label}, {variant.name}")
                with variant.patch():
                    score = run(dialogs, LAYERS[layer_name], embedder, variant.config)
                rows.append((layer_name, label, variant.name, score))
                r5, r10 = score.recall()
                say(f"  R@5 {r5:.3f} R@10 {r10:.3f}")
    print(f"Recall on {args.data.name}: {len(dialogs)} conversations, {questions} questions\n")
    print(table(rows))
    print()
    for note in notes:
        print(f"- {note}")
    print("- Goals: ConversationStore R@5 >= 0.70, R@10 >= 0.80; SemanticMemory R@5 >= 0.62, ")
    print("  R@10 >= 0.72 (both with the default embedder).")
    sizes = [int(n) for n in args.scale.split(",") if n]
    if sizes and cached:
        say(f"timing both layers at {args.scale} records")
        print(recall_speed.report(dialogs, cached[0], sizes, child=not args.no_child))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
