"""Ctrl+K's cut-off for weak hits, measured on LoCoMo (the recall bench's data).

Each session of the five development conversations is a conversation of its own (as a user's
chats are), 130-odd conversations; each question with evidence is a Ctrl+K query. For each
cut-off (a hit is shown if its score is at least that share of the best hit's score) it
prints how many of the answering turns found in the top 30 stay, and how many hits a query
shows; off-topic queries (nothing in the chats is about them) show what junk would stay.

    python -m tests.bench.quick_search_bench [--data ../shared/data/locomo-dev.json]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from assistant.memory import ConversationStore, Message
from assistant.memory.local_embedder import LocalEmbedder
from assistant.ui.conversations.search import HITS
from tests.bench.locomo import DEFAULT_DATA, Dialog, load

CUTOFFS = (0.0, 0.3, 0.4, 0.5, 0.55, 0.6, 0.7)
OFF_TOPIC = (
    "quantum chromodynamics on a lattice",
    "how do I configure a kubernetes ingress",
    "best sourdough hydration percentage",
    "tax deduction for a home office in Germany",
    "rust borrow checker lifetime error",
    "what is the capital of Mongolia",
    "repair a leaking kitchen faucet",
    "train schedule from Lisbon to Porto",
    "python asyncio gather exceptions",
    "symptoms of vitamin D deficiency",
    "zxqv plorth",
    "SQL window functions running total",
)


def fill(store: ConversationStore, dialogs: Sequence[Dialog]) -> dict[str, str]:
    """One conversation per session; returns message id -> the turn id it is."""
    turn_of: dict[str, str] = {}
    for dialog in dialogs:
        sessions: dict[int, list[Message]] = {}
        for turn in dialog.turns:
            messages = sessions.setdefault(turn.session, [])
            mid = f"{dialog.id}_{turn.id}".replace(":", "_").replace("-", "_")
            turn_of[mid] = f"{dialog.id}/{turn.id}"
            messages.append(
                Message(
                    id=mid,
                    parent_id=messages[-1].id if messages else None,
                    role="user" if turn.speaker == dialog.speakers[0] else "assistant",
                    content=turn.text,
                    created_at=turn.time.isoformat(),
                )
            )
        for session, messages in sessions.items():
            cid = f"{dialog.id}_s{session}".replace("-", "_")
            title = f"{dialog.speakers[0]} and {dialog.speakers[1]}, session {session}"
            store.import_conversation(cid, title, messages[0].created_at, messages)
    return turn_of


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    dialogs = load(args.data)
    with tempfile.TemporaryDirectory() as tmp:
        store = ConversationStore(Path(tmp), LocalEmbedder())
        turn_of = fill(store, dialogs)
        store.embed_pending()
        kept = dict.fromkeys(CUTOFFS, 0)
        shown = {c: [] for c in CUTOFFS}  # type: dict[float, list[int]]
        found_relevant = 0
        real_tops: list[float] = []
        relevant_scores: list[float] = []
        for dialog in dialogs:
            for question in dialog.questions:
                if not question.evidence:
                    continue
                wanted = {f"{dialog.id}/{e}" for e in question.evidence}
                hits = store.search(question.text, k=HITS)
                if not hits:
                    continue
                best = hits[0].score
                real_tops.append(best)
                relevant_scores += [h.score for h in hits if turn_of[h.message_id] in wanted]
                relevant = [h.score / best for h in hits if turn_of[h.message_id] in wanted]
                found_relevant += len(relevant)
                for cut in CUTOFFS:
                    kept[cut] += sum(r >= cut for r in relevant)
                    shown[cut].append(sum(h.score >= cut * best for h in hits))
        junk = {c: [] for c in CUTOFFS}  # type: dict[float, list[int]]
        tops = []
        for query in OFF_TOPIC:
            hits = store.search(query, k=HITS)
            tops.append(hits[0].score if hits else 0.0)
            for cut in CUTOFFS:
                best = hits[0].score if hits else 0.0
                junk[cut].append(sum(h.score >= cut * best for h in hits))
        store.close()
    print(f"{len(dialogs)} dialogs, {len(turn_of)} messages; answering turns in the top {HITS}:")
    print(f"{found_relevant}\n")
    print("cut-off | answering turns kept | hits shown a query (median) | off-topic (median)")
    for cut in CUTOFFS:
        print(
            f"{cut:7.2f} | {kept[cut] / max(found_relevant, 1):20.1%} | "
            f"{np.median(shown[cut]):27.0f} | {np.median(junk[cut]):18.0f}"
        )
    print(f"\noff-topic best scores: {', '.join(f'{t:.2f}' for t in tops)}")
    quartiles = ", ".join(f"{q:.2f}" for q in np.percentile(real_tops, [5, 25, 50, 75]))
    print(f"questions' best scores (5th, 25th, 50th, 75th percentile): {quartiles}")
    quartiles = ", ".join(f"{q:.2f}" for q in np.percentile(relevant_scores, [5, 10, 25, 50]))
    print(f"answering turns' scores (5th, 10th, 25th, 50th percentile): {quartiles}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
