"""Decay never archives more than a small share of memories in one pass, and a clock that moved
backwards or jumped ahead is detected and reported instead of fading memories for good."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from assistant.memory.fading import MAX_ARCHIVE_SHARE, archive_limit, decay_clock
from assistant.memory.semantic import SemanticMemory
from assistant.timestamps import now_utc


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[SemanticMemory]:
    memory = SemanticMemory.open(tmp_path)
    yield memory
    memory.close()


def fill(mem: SemanticMemory, n: int = 50, *, used_days_ago: float = 0) -> None:
    items = [mem.add(f"Trivia number {i}", importance=0.12) for i in range(n)]
    if used_days_ago:
        mem.mark_used([i.id for i in items], now=now_utc() - timedelta(days=used_days_ago))


def states(mem: SemanticMemory) -> dict[str, int]:
    found: dict[str, int] = {}
    for item in mem.all(None):
        found[item.state] = found.get(item.state, 0) + 1
    return found


def test_a_clock_three_years_ahead_archives_nothing_and_says_so(mem: SemanticMemory) -> None:
    fill(mem)
    assert mem.decay(now_utc() + timedelta(days=3 * 365), half_life_days=30) == []
    assert states(mem) == {"active": 50}
    assert mem.clock_warning is not None and "ahead" in mem.clock_warning
    assert mem.decay(half_life_days=30) == [] and mem.clock_warning is None  # clock right again


def test_a_clock_behind_the_memories_fades_nothing_and_says_so(mem: SemanticMemory) -> None:
    fill(mem)
    assert mem.decay(now_utc() - timedelta(days=40), half_life_days=30) == []
    assert mem.clock_warning is not None and "behind" in mem.clock_warning


def test_one_pass_archives_a_small_share_the_least_important_first(mem: SemanticMemory) -> None:
    fill(mem, 49, used_days_ago=300)
    lowest = mem.add("Least important trivia", importance=0.11)
    mem.mark_used([lowest.id], now=now_utc() - timedelta(days=300))
    mem.add("Something learned today")  # the store was used: the clock is believable
    events = mem.decay(half_life_days=30)
    archived = [e.memory_id for e in events if e.type == "archived"]
    assert len(archived) == archive_limit(51) == int(51 * MAX_ARCHIVE_SHARE)
    assert lowest.id in archived
    assert mem.clock_warning is None
    assert states(mem) == {"active": 51 - len(archived), "archived": len(archived)}
    faded = [i for i in mem.all() if i.importance < 0.01]
    assert len(faded) == 49 - len(archived) + 1  # faded, still here, archived in later passes
    again = mem.decay(now_utc() + timedelta(days=1), half_life_days=30)
    assert sum(e.type == "archived" for e in again) == archive_limit(51 - len(archived))


@pytest.mark.parametrize(
    ("days", "skipped"), [(-2, True), (-0.5, False), (0, False), (300, False), (400, True)]
)
def test_the_clock_guard(days: float, skipped: bool) -> None:
    newest = now_utc()
    clock = decay_clock(newest + timedelta(days=days), newest)
    assert (clock.at is None) == skipped
    assert (clock.warning is not None) == skipped


def test_at_least_one_may_go_in_a_small_store() -> None:
    assert archive_limit(3) == 1 and archive_limit(0) == 1 and archive_limit(200) == 10
