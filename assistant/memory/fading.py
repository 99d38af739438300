"""Guards of decay: how much time a pass may count, and how many memories it may archive.

A clock that moved backwards (before the newest thing the store recorded) or far ahead of it
(more than MAX_GAP_DAYS: a clock three years ahead) stops decay for the pass, and is reported:
a fade counts for good, a wrong clock must not make it. After a real long absence decay
resumes once the store records something new (a memory used or learned).
Whatever the clock says, a pass archives at most MAX_ARCHIVE_SHARE of the active memories (the
least important first); the rest keep fading and go in later passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

MAX_GAP_DAYS = 365
MAX_ARCHIVE_SHARE = 0.05
# Clocks of two machines syncing a data dir, or a time-zone fix, may differ by this much.
CLOCK_SLACK = timedelta(days=1)


@dataclass(frozen=True)
class DecayClock:
    """The time a decay pass counts to (None: skip the pass) and what to tell the user."""

    at: datetime | None
    warning: str | None = None


def decay_clock(now: datetime, newest: datetime | None) -> DecayClock:
    """Where decay may count to, given the clock (`now`) and the newest time the store recorded."""
    if newest is None:
        return DecayClock(now)
    if now < newest - CLOCK_SLACK:
        behind = (newest - now).days
        return DecayClock(
            None,
            f"The clock is {behind} days behind the newest memory: memories do not fade "
            "until it is right again.",
        )
    if now > newest + timedelta(days=MAX_GAP_DAYS):
        ahead = (now - newest).days
        return DecayClock(
            None,
            f"The clock is {ahead} days ahead of the newest memory (it may have jumped): "
            "memories do not fade until something new is remembered or used.",
        )
    return DecayClock(now)


def archive_limit(active: int) -> int:
    """How many of `active` memories one pass may archive: a small share, at least one."""
    return max(1, math.floor(active * MAX_ARCHIVE_SHARE))
