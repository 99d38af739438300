"""Decay: unused memories fade, and archive once unimportant (pinned ones never decay); a pass
archives only a few (see `fading`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime

from assistant.memory.items import MemoryEvent, MemoryItem

ARCHIVE_BELOW = 0.1  # decay archives a memory whose importance falls below this
_DECAY_FACTOR = 0.8  # decay changes a memory once its importance would fall to this share


def unused_for(half_life_days: float) -> float:
    """Seconds without use after which a memory has lost a fifth of its importance."""
    if not half_life_days > 0:
        raise ValueError(f"The half-life must be a positive number of days, not {half_life_days}.")
    return half_life_days * 86400 * math.log2(1 / _DECAY_FACTOR)


def decayed(
    items: Iterable[MemoryItem],
    at: datetime,
    half_life_days: float,
    archive_below: float,
    *,
    earlier: Sequence[MemoryItem] = (),
    limit: int,
) -> tuple[list[MemoryItem], list[MemoryEvent]]:
    """The items of `items` (active, unpinned, unused long enough) that fade at `at`, as they
    become, and their "decayed" and "archived" events (see `SemanticMemory.decay`).

    Of those below `archive_below`, faded now or `earlier` (in a pass that had no room for
    them), the `limit` least important are archived; the rest wait for later passes.
    """
    step = unused_for(half_life_days)
    faded: list[tuple[MemoryItem, MemoryEvent]] = []
    for item in items:
        since = max(item.last_accessed, item.decayed_at or item.last_accessed)
        days = (at - since).total_seconds() / 86400
        if days * 86400 < step or item.importance == 0:
            continue
        importance = item.importance * 0.5 ** (days / half_life_days)
        unused = (at - item.last_accessed).days
        event = MemoryEvent(
            item.id,
            "decayed",
            at,
            reason=f"not used for {unused} days",
            importance_before=item.importance,
            importance_after=importance,
        )
        faded.append((item._replace(importance=importance, decayed_at=at, updated_at=at), event))
    fresh = {item.id for item, _ in faded}
    below = [i for i, _ in faded if i.importance < archive_below]
    below += [i for i in earlier if i.id not in fresh]
    archived = {i.id for i in sorted(below, key=_importance)[:limit]}
    reason = f"importance below {archive_below:g}"
    changed: list[MemoryItem] = []
    events: list[MemoryEvent] = []
    for item, event in faded:
        events.append(event)
        if item.id in archived:
            events.append(MemoryEvent(item.id, "archived", at, reason=reason))
        changed.append(item._replace(state="archived") if item.id in archived else item)
    for item in earlier:
        if item.id in archived and item.id not in fresh:
            events.append(MemoryEvent(item.id, "archived", at, reason=reason))
            changed.append(item._replace(state="archived", updated_at=at))
    return changed, events


def _importance(item: MemoryItem) -> float:
    return item.importance
