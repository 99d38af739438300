"""A reply rendered as Markdown while it streams, re-rendering only its open block.

The text is cut where a Markdown block surely ends (a blank line followed by an unindented
line, or a closing code fence); what comes before is rendered once and stays, the open block
after it is rendered again with each new piece. So each piece costs the size of one block,
not of the reply.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QTextBlockFormat, QTextCharFormat, QTextCursor

from assistant.ui.chat.markdown import MarkdownRenderer

_FENCES = ("```", "~~~")


def settled_end(text: str, start: int) -> int:
    """Where the last complete Markdown block of `text[start:]` ends (`start` if none does).

    `start` must be where a block begins outside any code fence.
    """
    position = boundary = start
    candidate: int | None = None  # after a blank line, if what follows starts a new block
    fence: str | None = None
    for line in text[start:].splitlines(keepends=True):
        if not line.endswith("\n"):  # the last line, still arriving
            if fence is None and candidate is not None and not line[0].isspace():
                boundary = candidate
            break
        stripped = line.strip()
        end = position + len(line)
        if fence is not None:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
                boundary, candidate = end, None
        elif not stripped:
            candidate = end
        else:
            if candidate is not None and not line[0].isspace():
                boundary = candidate  # a list item's indented continuation would not be
            candidate = None
            if stripped.startswith(_FENCES):
                fence = stripped[:3]
        position = end
    return boundary


class StreamingMarkdown:
    """The text of one reply segment, kept rendered as it grows where `end` points.

    `end` gives a cursor at the end of the segment's place (the end of the conversation, with
    only lines about it below).
    """

    def __init__(self, end: Callable[[], QTextCursor], renderer: MarkdownRenderer) -> None:
        self._end = end
        self._renderer = renderer
        self._open_start = end().position()  # where the open block's rendering begins
        self.text = ""
        self._settled = 0  # how much of the text is rendered for good

    def append(self, piece: str) -> None:
        """Add a streamed piece and re-render what is still open."""
        self.text += piece
        cursor = self._end()
        cursor.setPosition(self._open_start, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        boundary = settled_end(self.text, self._settled)
        if boundary > self._settled:
            self._insert(cursor, self.text[self._settled : boundary], copyable=True)
            self._settled = boundary
            self._open_start = cursor.position()
        rest = self.text[self._settled :]
        if rest.strip():
            self._insert(cursor, rest, copyable=False)

    def close(self) -> None:
        """The segment is complete: render its open block for good (with its Copy links)."""
        if self._settled < len(self.text):
            cursor = self._end()
            cursor.setPosition(self._open_start, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            if self.text[self._settled :].strip():
                self._insert(cursor, self.text[self._settled :], copyable=True)
            self._settled = len(self.text)

    def shift(self, delta: int) -> None:
        """Text was inserted (`delta` > 0) or removed before the segment."""
        self._open_start += delta

    def _insert(self, cursor: QTextCursor, markdown: str, *, copyable: bool) -> None:
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        self._renderer.insert(cursor, markdown, copyable=copyable)
