"""Python's cycle collector paused while a store loads its items.

Opening 100,000 memories builds some million objects that all live on; the collector, which
runs every few hundred allocations and ever more often scans the older ones, took a third of
the open (0.1-0.3 s at 100,000 memories, measured). Loading makes no cycles, so nothing is
lost by pausing it; it runs as usual after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Run the block without the cycle collector (unless someone else keeps it off, it is on
    again after)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
