"""Background work at a low priority, so that it takes only what the rest of the machine leaves."""

from __future__ import annotations

import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

BACKGROUND_NICE = 10  # added to the thread's nice value (19 is the lowest priority)


def lower_this_thread() -> bool:
    """Give the calling thread a low scheduling priority; whether it could.

    On Linux each thread has its own nice value (its native id names it to `setpriority`);
    elsewhere the priority applies to the whole process, which must keep its own, so nothing
    changes. A thread cannot take its priority back without privileges: call this only on a
    thread that does nothing else afterwards.
    """
    if not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        nice = min(19, os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE)
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    except OSError as exc:
        log.info("Could not lower the priority of background work: %s", exc)
        return False
    return True
