"""A file that every writer of a directory appends a byte to, so that a reader notices any
write with one `stat` instead of one for each file.

The conversation store keeps a search index of thousands of files; before each search it must
know whether another store (another process, or another instance in this one) wrote to any of
them. Each writer appends a byte to the marker after its write, so the marker's size only
grows; a reader compares it with the size and time it saw before it last read the files. It
grows by one byte a write (about 100 KB for 100,000 messages); it holds no data and may be
deleted at any time (readers then read the files again once).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

Stamp = tuple[int, int]  # size, mtime_ns; (-1, -1) while the marker does not exist


class WriteMarker:
    """The marker `path`, and the stamp this reader last caught up with; not thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: Stamp | None = None  # None: catch up before trusting the index

    def stamp(self) -> Stamp:
        """The marker's size and modification time now."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return (-1, -1)
        except OSError as exc:  # unknown: assume a write happened
            log.warning("could not check %s: %s", self.path, exc)
            return (-2, -2)
        return (st.st_size, st.st_mtime_ns)

    def changed(self) -> bool:
        """Whether a writer may have written since the last `caught_up`."""
        return self._seen is None or self.stamp() != self._seen

    def caught_up(self, stamp: Stamp) -> None:
        """Record that every write before the marker had `stamp` has been read (take the stamp
        before reading the files, so that a write meanwhile shows next time)."""
        self._seen = stamp if stamp != (-2, -2) else None

    def announce(self) -> None:
        """Tell the other readers that this writer wrote (after the write).

        When no other writer appended since this reader caught up, this reader stays caught up
        (its own writes are already in its index); otherwise it will read the files again.
        """
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, b".")
                st = os.fstat(fd)
            finally:
                os.close(fd)
        except OSError as exc:  # the write itself succeeded: others see it when they list
            log.warning("could not update %s: %s", self.path, exc)
            self._seen = None
            return
        before = self._seen
        alone = before is not None and st.st_size == max(before[0], 0) + 1
        self._seen = (st.st_size, st.st_mtime_ns) if alone else None
