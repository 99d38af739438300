"""The text at a place in a file, for "Remember this": a cited passage, or the start of an
attachment (no Qt here)."""

from __future__ import annotations

from pathlib import Path

from assistant.knowledge.formats import kind_of
from assistant.knowledge.index import FileIndex
from assistant.knowledge.reading import Place, UnreadableFileError, read_file
from assistant.sizes import MB

MAX_BYTES = 50 * MB  # as the knowledge folders' default size limit
OPENING_CHARS = 600  # of a file, when a whole file is remembered


def passage_at(path: str, place: Place, index: FileIndex | None = None) -> str:
    """The text at `place` in the file at `path`: from the index when it holds the file, else
    read from the file (its first passage for a place with no page or lines).
    UnreadableFileError if the file gives no text."""
    if index is not None:
        found = [c.text for c in index.chunks_of(path) if _within(c.place, place)]
        if found:
            return "\n\n".join(found)
    kind = kind_of(Path(path))
    if kind is None:
        raise UnreadableFileError("not a kind of file Assistant reads")
    reading = read_file(Path(path), kind, max_bytes=MAX_BYTES)
    chunks = reading.chunks
    texts: list[str] = []
    try:
        for chunk in chunks:
            if _within(chunk.place, place):
                texts.append(chunk.text)
            elif texts or (place.page is not None and (chunk.place.page or 0) > place.page):
                break
            if place == Place() and sum(map(len, texts)) >= OPENING_CHARS:
                break
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:  # a generator: ends the read, closes the file
            close()
    return "\n\n".join(texts)


def _within(chunk: Place, place: Place) -> bool:
    """Whether a chunk at `chunk` is part of the passage at `place`."""
    if place.page is not None:
        return chunk.page == place.page
    if place.first_line is not None and chunk.first_line is not None:
        last = place.last_line or place.first_line
        return (
            chunk.first_line <= last and (chunk.last_line or chunk.first_line) >= place.first_line
        )
    return place == Place()
