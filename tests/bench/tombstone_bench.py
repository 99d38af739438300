"""Tombstones by meaning: how many rewordings of forgotten facts are caught (refused, or held for
the user's yes on the Review tab), and how many other facts are wrongly refused or held, with
the built-in embedder.

Run as `python -m tests.bench.tombstone_bench` (`make bench`). The labelled sets are in
`tests/data/rewordings.py` (the second one, of close calls, was not used to choose the first
threshold) and `tests/data/rewordings_fresh.py` (written before the two bands were tuned, and
not used to tune them); `tests/test_tombstones_meaning.py` holds the measures to fixed floors.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assistant.memory.embedding import Embedder
from assistant.memory.local_embedder import LocalEmbedder
from assistant.memory.semantic import SemanticMemory
from tests.data import rewordings, rewordings_fresh
from tests.data.rewordings import How

FIRST_FORGOTTEN = sorted({fact for fact, _, _ in rewordings.REWORDINGS})


@dataclass
class Rates:
    """What a store with every forgotten fact of a set forgotten makes of each text."""

    caught: Counter[str] = field(default_factory=Counter)  # rewordings refused or held, by how
    refused: Counter[str] = field(default_factory=Counter)  # of them, refused outright
    total: Counter[str] = field(default_factory=Counter)
    near_refused: list[str] = field(default_factory=list)  # near misses refused: a lost fact
    near_held: list[str] = field(default_factory=list)  # near misses held for review
    near: int = 0
    other_refused: list[str] = field(default_factory=list)  # unrelated facts refused
    other_held: list[str] = field(default_factory=list)
    others: int = 0

    @property
    def catch_rate(self) -> float:
        return sum(self.caught.values()) / sum(self.total.values())


def measure(
    root: Path,
    embedder: Embedder | None,
    forgotten: Sequence[str] = FIRST_FORGOTTEN,
    reworded: Sequence[tuple[str, str, How]] = rewordings.REWORDINGS,
    near: Sequence[str] = (),
    others: Sequence[str] = rewordings.UNRELATED,
) -> Rates:
    """Forget every fact of `forgotten` in a new store at `root`, then ask about each text."""
    memory = SemanticMemory.open(root, embedder)
    rates = Rates(near=len(near), others=len(others))
    try:
        for fact in forgotten:
            memory.forget(memory.add(fact).id)
        for _, text, how in reworded:
            band = memory.resemblance(text)
            rates.total[how] += 1
            rates.caught[how] += band is not None
            rates.refused[how] += band == "forgotten"
        for texts, refused, held in (
            (near, rates.near_refused, rates.near_held),
            (others, rates.other_refused, rates.other_held),
        ):
            for text in texts:
                band = memory.resemblance(text)
                if band is not None:
                    (refused if band == "forgotten" else held).append(text)
    finally:
        memory.close()
    return rates


SETS = {
    "first": (FIRST_FORGOTTEN, rewordings.REWORDINGS, (), rewordings.UNRELATED),
    "second": (FIRST_FORGOTTEN, rewordings.CLOSE_REWORDINGS, rewordings.CLOSE_CALLS, ()),
    "fresh": (
        rewordings_fresh.FORGOTTEN,
        rewordings_fresh.REWORDINGS,
        rewordings_fresh.NEAR_MISSES,
        rewordings_fresh.UNRELATED,
    ),
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, embedder in (("no embedder", None), ("built-in", LocalEmbedder())):
            for label, (forgotten, reworded, near, others) in SETS.items():
                r = measure(Path(tmp) / name / label, embedder, forgotten, reworded, near, others)
                kinds = ", ".join(f"{h} {r.caught[h]}/{r.total[h]}" for h in r.total)
                print(
                    f"{name}, {label} set: caught {sum(r.caught.values())} of "
                    f"{sum(r.total.values())} rewordings ({kinds}), refused outright "
                    f"{sum(r.refused.values())}; near misses refused {len(r.near_refused)}, "
                    f"held {len(r.near_held)} of {r.near}; unrelated refused "
                    f"{len(r.other_refused)}, held {len(r.other_held)} of {r.others}"
                )
                for kind, texts in (
                    ("near miss refused", r.near_refused),
                    ("near miss held", r.near_held),
                    ("unrelated refused", r.other_refused),
                    ("unrelated held", r.other_held),
                ):
                    for text in texts:
                        print(f"    {kind}: {text}")


if __name__ == "__main__":
    main()
