"""File sizes in one unit everywhere, the decimal megabyte (1 MB = 1,000,000 bytes, as file
managers on Linux and macOS count): a limit said "20 MB" is 20,000,000 bytes, and a size shown
is rounded up, so a file shown within a limit is within it."""

from __future__ import annotations

KB = 1000
MB = 1000 * KB


def size_in_words(size: int) -> str:
    """A file size for people: "812 bytes", "14 kB", "1.2 MB" (never under the real size)."""
    if size < KB:
        return f"{size} bytes"
    kilobytes = -(-size // KB)
    if kilobytes < KB:
        return f"{kilobytes} kB"
    return f"{-(-size // (MB // 10)) / 10:.1f} MB"
