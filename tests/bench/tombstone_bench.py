"""Tombstones by meaning: how many rewordings of forgotten facts are caught, and how many other
facts are wrongly taken for forgotten ones, with the built-in embedder.

Run as `python -m tests.bench.tombstone_bench` (`make bench`). The labelled sets are in
`tests/data/rewordings.py` (the second one, of close calls, was never used to choose the
threshold); `tests/test_tombstones_meaning.py` holds the first one's measure to fixed floors.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from assistant.memory.embedding import Embedder
from assistant.memory.local_embedder import LocalEmbedder
from assistant.memory.semantic import SemanticMemory
from tests.data.rewordings import (
    CLOSE_CALLS,
    CLOSE_REWORDINGS,
    REWORDINGS,
    UNRELATED,
    How,
)


@dataclass(frozen=True)
class Rates:
    """What a store with every forgotten fact of the set forgotten recognises."""

    caught: Counter[str]  # rewordings caught, by how they were reworded
    total: Counter[str]
    false_positives: list[str]  # unrelated facts taken for forgotten ones
    unrelated: int  # of how many

    @property
    def catch_rate(self) -> float:
        return sum(self.caught.values()) / sum(self.total.values())

    @property
    def false_positive_rate(self) -> float:
        return len(self.false_positives) / self.unrelated


def measure(
    root: Path,
    embedder: Embedder | None,
    rewordings: Sequence[tuple[str, str, How]] = REWORDINGS,
    unrelated: Sequence[str] = UNRELATED,
) -> Rates:
    """Forget every fact of the set in a new store at `root`, then ask about each text."""
    memory = SemanticMemory.open(root, embedder)
    try:
        for fact in sorted({fact for fact, _, _ in REWORDINGS}):
            memory.forget(memory.add(fact).id)
        caught: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for _, reworded, how in rewordings:
            total[how] += 1
            caught[how] += memory.is_forgotten_fact(reworded)
        wrong = [fact for fact in unrelated if memory.is_forgotten_fact(fact)]
    finally:
        memory.close()
    return Rates(caught, total, wrong, len(unrelated))


def main() -> None:
    sets = (
        ("labelled set", REWORDINGS, UNRELATED),
        ("close calls (held out)", CLOSE_REWORDINGS, CLOSE_CALLS),
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, embedder in (("no embedder", None), ("built-in", LocalEmbedder())):
            for label, rewordings, unrelated in sets:
                rates = measure(Path(tmp) / name / label, embedder, rewordings, unrelated)
                kinds = ", ".join(f"{h} {rates.caught[h]}/{rates.total[h]}" for h in rates.total)
                print(
                    f"{name}, {label}: caught {sum(rates.caught.values())} of "
                    f"{sum(rates.total.values())} rewordings ({kinds}); false positives "
                    f"{len(rates.false_positives)} of {rates.unrelated} other facts "
                    f"{rates.false_positives}"
                )


if __name__ == "__main__":
    main()
