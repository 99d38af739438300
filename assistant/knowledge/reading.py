"""Reading a file into chunks of text that know their place: page, line range, heading path.

Text, Markdown and source code are read line by line (a file is never held whole) and cut at
blank lines into chunks of about `TARGET_CHARS`; Markdown chunks also start at each heading and
carry the path of headings above them. A PDF is read a page at a time with PDFium. Anything
that cannot be read raises `UnreadableFileError` whose message is the file's status in words
("password-protected", "no text layer", "binary content", "larger than the 50 MB limit").
"""

from __future__ import annotations

import errno
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from assistant.errors import AssistantError
from assistant.fileio import reason
from assistant.knowledge.formats import FileKind
from assistant.sizes import MB

TARGET_CHARS = 700  # a chunk ends at the first blank line after this many characters...
MAX_CHARS = 1500  # ...and before a line that would take it past this
SNIFF_BYTES = 8192  # a NUL byte in the first ones means the file is not text
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_PDFIUM = threading.Lock()  # PDFium is not thread-safe: one call at a time, process-wide

NO_TEXT_LAYER = "no text layer (a scanned or image-only PDF?): nothing indexed"
ENCRYPTED = "password-protected: cannot be read"
DAMAGED_PDF = "damaged or not a PDF: cannot be read"
BINARY = "binary content, not text: nothing indexed"
LINK_LOOP = "a symbolic link loop"


class UnreadableFileError(AssistantError):
    """A file that gives no text; the message is its status, to show beside its name."""


@dataclass(frozen=True)
class Place:
    """Where a chunk is in its file: a page (from 1), a line range (from 1), headings above."""

    page: int | None = None
    first_line: int | None = None
    last_line: int | None = None
    heading: tuple[str, ...] = ()

    def label(self) -> str:
        """The place in words: "p. 4", "lines 10-42", "Install > Linux, lines 3-9"."""
        parts = []
        if self.heading:
            parts.append(" > ".join(self.heading))
        if self.page is not None:
            parts.append(f"p. {self.page}")
        elif self.first_line is not None:
            last = self.last_line or self.first_line
            parts.append(f"line {last}" if last == self.first_line else
                         f"lines {self.first_line}-{last}")  # fmt: skip
        return ", ".join(parts)


@dataclass(frozen=True)
class Chunk:
    """A piece of a file's text and where it is."""

    text: str
    place: Place


@dataclass
class Reading:
    """A file being read: its chunks (consumed once), its pages (PDF) and notes found on the
    way (such as bytes that were not UTF-8)."""

    chunks: Iterator[Chunk]
    pages: int | None = None
    notes: list[str] = field(default_factory=list)


def read_file(path: Path, kind: FileKind, *, max_bytes: int) -> Reading:
    """Open `path` for reading as `kind`; UnreadableFileError (its status) if it cannot be.

    Nothing is read before the size is checked against `max_bytes`; errors found while the
    chunks are read (a PDF with no text at all) are raised by the iteration.
    """
    size = file_size(path)
    if size > max_bytes:
        raise UnreadableFileError(f"larger than the {max_bytes // MB:,} MB limit: not read")
    if kind == "image":
        raise UnreadableFileError("an image: it has no text to index")
    if kind == "pdf":
        return _read_pdf(path)
    notes: list[str] = []
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise UnreadableFileError(os_status(exc)) from exc
    head = stream.read(SNIFF_BYTES)
    if b"\0" in head:
        stream.close()
        raise UnreadableFileError(BINARY)
    stream.seek(0)
    return Reading(_line_chunks(_decoded_lines(stream, notes), markdown=kind == "markdown"),
                   notes=notes)  # fmt: skip


def file_size(path: Path) -> int:
    """The size of the file at `path` (following links); UnreadableFileError if none."""
    try:
        return path.stat().st_size
    except OSError as exc:
        raise UnreadableFileError(os_status(exc)) from exc


def os_status(exc: OSError) -> str:
    """An OS error as a file status."""
    if exc.errno == errno.ELOOP:
        return LINK_LOOP
    return reason(exc)


def _decoded_lines(stream: BinaryIO, notes: list[str]) -> Iterator[str]:
    """The lines of a binary file as text, without line ends; bytes that are not UTF-8 are
    replaced (and counted in a note at the end). Closes the file."""
    bad = 0
    with stream:
        for n, raw in enumerate(stream):
            data = raw[3:] if n == 0 and raw.startswith(b"\xef\xbb\xbf") else raw
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError:
                line = data.decode("utf-8", "replace")
                bad += line.count("\ufffd")
            yield line.rstrip("\r\n")
    if bad:
        notes.append(f"{bad:,} bytes that are not UTF-8 were replaced")


def _line_chunks(lines: Iterable[str], *, markdown: bool) -> Iterator[Chunk]:
    """Cut lines into chunks at blank lines (and, in Markdown, at headings)."""
    headings: list[tuple[int, str]] = []  # (level, title) of the headings above
    buf: list[str] = []
    size, first, fenced = 0, 1, False

    def flush(upto: int) -> Iterator[Chunk]:
        text = "\n".join(buf).strip("\n")
        if text.strip():
            heading = tuple(title for _, title in headings)
            yield Chunk(text, Place(first_line=first, last_line=upto, heading=heading))

    number = 0
    for number, line in enumerate(lines, 1):
        heading = None
        if markdown:
            if _FENCE.match(line):
                fenced = not fenced
            heading = None if fenced else _HEADING.match(line)
        if buf and (heading is not None or size + len(line) > MAX_CHARS):
            yield from flush(number - 1)
            buf, size, first = [], 0, number
        if heading is not None:
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
        if len(line) > MAX_CHARS:  # one long line (minified code, a table): cut it up
            for start in range(0, len(line), MAX_CHARS):
                buf = [line[start : start + MAX_CHARS]]
                yield from flush(number)
            buf, size, first = [], 0, number + 1
            continue
        if not buf:
            first = number
        buf.append(line)
        size += len(line) + 1
        if size >= TARGET_CHARS and not line.strip():
            yield from flush(number)
            buf, size, first = [], 0, number + 1
    if buf:
        yield from flush(number)


def _read_pdf(path: Path) -> Reading:
    import pypdfium2 as pdfium  # loads PDFium: only when a PDF is read

    with _PDFIUM:
        try:
            document = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError as exc:
            raise UnreadableFileError(_pdf_status(path, exc)) from exc
        pages = len(document)
    return Reading(_pdf_chunks(document, pages), pages=pages)


def _pdf_status(path: Path, exc: Exception) -> str:
    text = str(exc).lower()
    if "password" in text or "security" in text:
        return ENCRYPTED
    if "file access" in text or "not found" in text:
        try:
            path.stat()
        except OSError as os_exc:
            return os_status(os_exc)
    return DAMAGED_PDF


def _pdf_chunks(document: object, pages: int) -> Iterator[Chunk]:
    """The chunks of each page, a page at a time; UnreadableFileError if no page has text."""
    import pypdfium2 as pdfium

    assert isinstance(document, pdfium.PdfDocument)
    found = False
    try:
        for number in range(1, pages + 1):
            with _PDFIUM:
                try:
                    page = document[number - 1]
                    textpage = page.get_textpage()
                    text = textpage.get_text_range()
                    textpage.close()
                    page.close()
                except pdfium.PdfiumError:
                    continue  # a damaged page: the others are still read
            lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for chunk in _line_chunks(lines, markdown=False):
                found = True
                yield Chunk(chunk.text, Place(page=number))
    finally:
        with _PDFIUM:
            document.close()
    if not found:
        raise UnreadableFileError(NO_TEXT_LAYER)
