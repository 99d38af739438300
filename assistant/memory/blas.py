"""One BLAS thread for the small matrix products of a search.

A search multiplies at most a few hundred thousand short rows by one query vector: a
millisecond of work, which a multi-threaded BLAS splits between the cores and then waits for
the slowest. On a laptop whose other core is busy (a browser, a local model server) that wait
is the whole search time: measured with the other core busy, a 10,000 x 384 product took
0.9 ms p50 but 5 ms p95 with two threads, 1.3 ms and 1.9 ms with one. So searches run their
products on one thread (`one_thread`), and larger work (fitting a projection) keeps them all.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_controller: ThreadpoolController | None = None
_active = 0  # searches inside `one_thread` now
_restore: Any = None  # the limiter that restores the threads the BLAS had before
enabled = True  # the recall bench turns it off to measure the difference


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with the BLAS on one thread (nested and concurrent uses share the limit:
    the threads come back when the last one leaves)."""
    global _controller, _active, _restore  # noqa: PLW0603 (one process-wide BLAS)
    if not enabled:
        yield
        return
    with _lock:
        if _controller is None:
            _controller = ThreadpoolController()  # finds the loaded BLAS (once: a few ms)
        if _active == 0:
            _restore = _controller.limit(limits=1, user_api="blas")
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _restore is not None:
                _restore.restore_original_limits()
                _restore = None
