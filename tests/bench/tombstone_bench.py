"""Tombstones by meaning: how many rewordings of forgotten facts are caught, and how many other
facts are wrongly taken for forgotten ones, with the built-in embedder.

Run as `python -m tests.bench.tombstone_bench` (`make bench`). The labelled set is
`tests/data/rewordings.py`; `tests/test_tombstones_meaning.py` holds the same measure to fixed
floors.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from assistant.memory.embedding import Embedder
from assistant.memory.local_embedder import LocalEmbedder
from assistant.memory.semantic import SemanticMemory
from tests.data.rewordings import REWORDINGS, UNRELATED


@dataclass(frozen=True)
class Rates:
    """What a store with every forgotten fact of the set forgotten recognises."""

    caught: Counter[str]  # rewordings caught, by how they were reworded
    total: Counter[str]
    false_positives: list[str]  # unrelated facts taken for forgotten ones

    @property
    def catch_rate(self) -> float:
        return sum(self.caught.values()) / sum(self.total.values())

    @property
    def false_positive_rate(self) -> float:
        return len(self.false_positives) / len(UNRELATED)


def measure(root: Path, embedder: Embedder | None) -> Rates:
    """Forget every fact of the set in a new store at `root`, then ask about each text."""
    memory = SemanticMemory.open(root, embedder)
    try:
        for fact in sorted({fact for fact, _, _ in REWORDINGS}):
            memory.forget(memory.add(fact).id)
        caught: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for _, reworded, how in REWORDINGS:
            total[how] += 1
            caught[how] += memory.is_forgotten_fact(reworded)
        wrong = [fact for fact in UNRELATED if memory.is_forgotten_fact(fact)]
    finally:
        memory.close()
    return Rates(caught, total, wrong)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, embedder in (("no embedder", None), ("built-in", LocalEmbedder())):
            rates = measure(Path(tmp) / name, embedder)
            kinds = ", ".join(f"{h} {rates.caught[h]}/{rates.total[h]}" for h in rates.total)
            print(
                f"{name}: caught {rates.catch_rate:.0%} of {sum(rates.total.values())} "
                f"rewordings ({kinds}); false positives {rates.false_positive_rate:.0%} of "
                f"{len(UNRELATED)} other facts {rates.false_positives}"
            )


if __name__ == "__main__":
    main()
