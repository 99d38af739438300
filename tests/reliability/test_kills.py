"""SIGKILL every writer at random moments: no acknowledged write may be lost (`make
test-reliability`; KILLS_PER_WRITER kills each, 40 by default: 200 in all)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.reliability.harness import Acked, run_and_kill
from tests.reliability.writer import WRITERS

KILLS = int(os.environ.get("KILLS_PER_WRITER", "40"))


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_no_acknowledged_write_is_lost_when_killed(kind: str, tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    acked = Acked()
    rng = random.Random(f"{kind}-kills")
    lost: list[str] = []
    for _ in range(KILLS):
        outcome = run_and_kill(kind, root, acked, rng, tmp_path / "acks.txt")
        lost += outcome.lost
        assert outcome.warnings == []
    print(f"{kind}: {KILLS} kills, {acked.writes} acknowledged writes, {len(lost)} lost")
    assert lost == []
    assert acked.writes > KILLS  # the kills did land among writes
