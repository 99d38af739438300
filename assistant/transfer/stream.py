"""Reading a conversation file as a stream: the items of its top-level list one at a time.

`ijson` (its C backend when installed, else pure Python) parses the bytes as they come, so a
file of any size needs only one conversation in memory. The reader in front of it counts bytes
for progress, checks for cancellation and refuses nesting deeper than any export has (which
would make the parser's memory grow with the square of the depth).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

import ijson

from assistant.errors import InvalidImportError
from assistant.transfer.surrogates import SurrogateGuard, restore
from assistant.transfer.wording import CHOOSE, DAMAGED, FileProblemError

Progress = Callable[[int, int], None]
Cancel = Callable[[], bool]

CHUNK_BYTES = 1 << 16
MAX_DEPTH = 512  # ChatGPT's deepest is about 12
BOM = b"\xef\xbb\xbf"
WHITESPACE = b" \t\r\n"

_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_OPENERS = frozenset(b"[{")
_YAJL_PREFIX = re.compile(r"^(?:lexical|parse) error: ")
_PLAIN_REASONS = {
    "premature EOF": "it ends too early (the file may be cut short)",
    "trailing garbage": "there is more text after the end of the JSON",
    "invalid bytes in UTF8 string.": "it is not UTF-8 text",
}


class ImportCancelledError(InvalidImportError):
    """The user stopped reading or importing; what was imported before stays."""

    def __init__(self) -> None:
        super().__init__("The import was cancelled.")


class Reader:
    """A byte stream for the parser that counts, can be cancelled and bounds the nesting."""

    def __init__(
        self,
        stream: IO[bytes],
        progress: Callable[[int], None] | None = None,
        cancel: Cancel | None = None,
    ) -> None:
        self._stream = stream
        self._progress = progress
        self._cancel = cancel
        self._buffer = b""
        self._started = False
        self.done = 0  # bytes read so far
        self._depth = 0
        self._in_string = False
        self._carry = b""
        self.guard: SurrogateGuard | None = None

    def read(self, size: int = -1) -> bytes:
        """Up to about `size` bytes (all with -1), after the byte-order mark; with `guard` set,
        its unpaired surrogate escapes rewritten (see `surrogates`)."""
        data = self._next(size)
        if self.guard is None:
            return data
        while True:
            out = self.guard.feed(data, final=not data)
            if out or not data:
                return out
            data = self._next(size)  # all of it held back: an escape may go on

    def _next(self, size: int) -> bytes:
        if self._buffer:
            if size < 0:
                data, self._buffer = self._buffer + self._read(-1), b""
            else:
                data, self._buffer = self._buffer[:size], self._buffer[size:]
            return data
        return self._read(size)

    def first_byte(self) -> bytes:
        """The first byte that is not white space (b"" for an empty file); it is read again."""
        while True:
            chunk = self._read(CHUNK_BYTES)
            if not chunk:
                return b""
            self._buffer += chunk
            stripped = self._buffer.lstrip(WHITESPACE)
            if stripped:
                return stripped[:1]

    def _read(self, size: int) -> bytes:
        if self._cancel is not None and self._cancel():
            raise ImportCancelledError
        data = self._stream.read(size if size >= 0 else -1)
        if not self._started:
            self._started = True
            if data.startswith(BOM):
                self.done += len(BOM)
                data = data[len(BOM) :]
        self.done += len(data)
        self._track_depth(data)
        if self._progress is not None:
            self._progress(self.done)
        return data

    def _track_depth(self, chunk: bytes) -> None:
        """Follow the nesting depth of the JSON outside strings; refuse it past MAX_DEPTH."""
        text = _ESCAPE.sub(b"", self._carry + chunk)
        self._carry = b""
        if text.endswith(b"\\"):  # an escape cut in two by the chunk boundary
            self._carry, text = b"\\", text[:-1]
        if self._in_string:
            end = text.find(b'"')
            if end < 0:
                return
            text, self._in_string = text[end + 1 :], False
        text = _STRING.sub(b"", text)
        open_quote = text.find(b'"')
        if open_quote >= 0:
            text, self._in_string = text[:open_quote], True
        brackets = text.translate(None, _NOT_BRACKET)
        opened = brackets.count(b"[") + brackets.count(b"{")
        if self._depth + opened <= MAX_DEPTH:
            self._depth += 2 * opened - len(brackets)
            return
        for byte in brackets:
            self._depth += 1 if byte in _OPENERS else -1
            if self._depth > MAX_DEPTH:
                raise FileProblemError(
                    f"is not an export: its JSON is nested more than {MAX_DEPTH} levels deep, "
                    f"far deeper than any export. {CHOOSE}"
                )


def list_items(reader: Reader) -> Iterator[Any]:
    """The items of the top-level JSON list, one at a time; InvalidImportError if it is bad.

    A string with an unpaired surrogate escape holds that lone surrogate, as `json` would read
    it (the parser alone would change it), so that validation reports it."""
    guard = reader.guard = SurrogateGuard()
    try:
        for item in ijson.items(reader, "item", use_float=True, buf_size=CHUNK_BYTES):
            yield restore(item) if guard.found else item
    except ijson.JSONError as exc:
        raise FileProblemError(json_error(exc, reader.done)) from None
    except UnicodeDecodeError:
        raise FileProblemError(
            f"is not valid JSON: it is not UTF-8 text (near byte {reader.done:,}). {DAMAGED}"
        ) from None


def read_document(reader: Reader) -> Any:
    """The whole JSON document; InvalidImportError if it is not valid JSON."""
    raw = reader.read(-1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileProblemError(
            f"is not UTF-8 text (a bad byte at offset {exc.start:,}), so it is not an export. "
            f"{CHOOSE}"
        ) from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise FileProblemError(
            f"is not valid JSON: {exc.msg.lower()} at line {exc.lineno}, column {exc.colno}. "
            f"{DAMAGED}"
        ) from None
    except ValueError as exc:
        raise FileProblemError(f"is not valid JSON: {exc}. {DAMAGED}") from None
    except RecursionError:
        raise FileProblemError(
            f"is not an export: its JSON is nested far deeper than any export. {CHOOSE}"
        ) from None


def json_error(exc: Exception, at: int) -> str:
    """A parser's error as the predicate of a sentence about the file."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
    if first.startswith(("b'", 'b"')):  # the C backend's bytes message
        first = first[2:].split("\\n")[0]
    reason = _YAJL_PREFIX.sub("", first)
    reason = _PLAIN_REASONS.get(reason, reason.rstrip("."))
    return f"is not valid JSON: {reason} (near byte {at:,}). {DAMAGED}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
