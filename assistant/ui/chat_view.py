"""The chat pane: messages as one rich-text document, streamed replies appended in place.

A streamed chunk is inserted at the end of the document (O(chunk)); when a reply is complete
only that reply is re-rendered as Markdown. Tool calls show as one compact line each that a
click expands; the memories a reply saw show as chips under it; errors offer Retry.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFormat,
    QTextFrameFormat,
    QTextTable,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from assistant.memory.conversations import Conversation, Message

_BOLD = QTextCharFormat()
_BOLD.setFontWeight(QFont.Weight.Bold)

MemoryLookup = Callable[[str], str | None]  # memory id -> its text, None if gone
Loader = Callable[[str], Conversation]  # conversation id -> the saved conversation
SUMMARY_CHARS = 90
CHIP_CHARS = 40


def _same_cell(table: QTextTable, block: QTextBlock, other: QTextBlock) -> bool:
    """Whether `other` is in the same cell of `table` as `block`."""
    if not other.isValid():
        return False
    a, b = table.cellAt(block.position()), table.cellAt(other.position())
    return b.isValid() and (a.row(), a.column()) == (b.row(), b.column())


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ChatView(QTextBrowser):
    """Read-only view of a conversation that can also stream a reply into itself."""

    memory_clicked = Signal(str)
    retry_requested = Signal()
    rendered = Signal(str)  # a conversation was drawn anew from its saved messages

    def __init__(
        self, memory_text: MemoryLookup, load: Loader, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self.document().setDocumentMargin(16)
        self._memory_text = memory_text
        self._load = load
        self._conversation: Conversation | None = None
        self._expanded: set[str] = set()
        self._body_start: int | None = None  # where the reply being streamed begins
        self._body_text = ""
        self._tool_start: dict[str, int] = {}
        self._tool_args: dict[str, tuple[str, str]] = {}
        self._streaming = False
        self._positions: dict[str, int] = {}  # message id -> where it is shown
        self._scratch = QTextDocument(self)  # where each message's Markdown is laid out

    # -- whole conversations ---------------------------------------------------------------------

    def show_conversation(self, conversation: Conversation | None) -> None:
        """Render a conversation from its saved messages (or clear the view)."""
        self._conversation = conversation
        self._streaming = False
        self._body_start = None
        self.clear()
        self._positions = {}
        if conversation is None:
            return
        results = {m.tool_call_id: m for m in conversation.messages if m.role == "tool"}
        cursor = self._end()
        cursor.beginEditBlock()
        previous_role = ""
        for message in conversation.messages:
            self._positions[message.id] = cursor.position()
            if message.role == "user":
                self._user_block(cursor, message.content)
            elif message.role == "assistant":
                if previous_role not in ("assistant", "tool"):
                    self._header(cursor, "Assistant")
                self._assistant_message(cursor, message, results)
            if message.role != "tool":
                previous_role = message.role
        cursor.endEditBlock()
        self._scroll_to_end()
        self.rendered.emit(conversation.id)

    def _assistant_message(
        self, cursor: QTextCursor, message: Message, results: dict[str | None, Message]
    ) -> None:
        if message.content:
            self._markdown(cursor, message.content)
        for call in message.tool_calls:
            function = call.get("function", {})
            result = results.get(call.get("id"))
            self._tool_line(
                cursor,
                str(call.get("id", "")),
                str(function.get("name", "")),
                str(function.get("arguments", "")),
                None if result is None else result.content,
                ok=result is None or not result.content.startswith("Error:"),
            )
        if message.cut_off:
            self._cut_off_line(cursor)
        if not message.tool_calls and message.memory_ids:
            self._chips(cursor, message.memory_ids)

    # -- streaming --------------------------------------------------------------------------------

    def scroll_to_message(self, message_id: str) -> bool:
        """Bring a shown message into view and put the caret there; False if not shown."""
        position = self._positions.get(message_id)
        if position is None:
            return False
        cursor = self.textCursor()
        cursor.setPosition(position)
        cursor.movePosition(QTextCursor.MoveOperation.NextBlock)
        cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()
        return True

    def add_user_message(self, text: str) -> None:
        """Show the user's message at once, then wait for the reply."""
        self._user_block(self._end(), text)
        self.start_reply()

    def start_reply(self) -> None:
        """Show the assistant's header; the reply streams in below it."""
        self._header(self._end(), "Assistant")
        self._streaming = True
        self._scroll_to_end()

    def append_delta(self, text: str) -> None:
        """Append a streamed piece of the reply."""
        at_bottom = self._at_bottom()
        cursor = self._end()
        if self._body_start is None:
            self._new_block(cursor)
            self._body_start = cursor.position()
            self._body_text = ""
        cursor.insertText(text, QTextCharFormat())
        self._body_text += text
        if at_bottom:
            self._scroll_to_end()

    def _settle_body(self) -> None:
        """Render the streamed text of the current reply segment as Markdown."""
        if self._body_start is None:
            return
        cursor = self.textCursor()
        cursor.setPosition(self._body_start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self._insert_markdown(cursor, self._body_text)
        self._body_start = None

    def start_tool_call(self, call_id: str, name: str, arguments: str) -> None:
        """Show a tool call as a compact line, marked as running."""
        self._settle_body()
        cursor = self._end()
        self._tool_start[call_id] = cursor.position()
        self._tool_args[call_id] = (name, arguments)
        self._tool_line(cursor, call_id, name, arguments, None, ok=True)
        self._scroll_to_end()

    def finish_tool_call(self, call_id: str, result: str, ok: bool) -> None:
        """Replace the running tool line with its result (it is the last thing shown)."""
        start = self._tool_start.pop(call_id, None)
        name, arguments = self._tool_args.pop(call_id, ("", ""))
        if start is None:
            return
        cursor = self.textCursor()
        cursor.setPosition(start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self._tool_line(cursor, call_id, name, arguments, result, ok=ok, first=False)

    def finish_reply(self, memory_ids: tuple[str, ...], *, cut_off: bool = False) -> None:
        """The reply is complete: render it, mark it if it was cut off, show the memories."""
        self._settle_body()
        if cut_off:
            self._cut_off_line(self._end())
        if memory_ids:
            self._chips(self._end(), memory_ids)
        self._streaming = False
        self._scroll_to_end()

    def show_error(self, message: str) -> None:
        """Keep what was streamed and show the error with a Retry link."""
        self._body_start = None
        self._streaming = False
        cursor = self._end()
        self._new_block(cursor)
        danger = (
            "#c62828"
            if self.palette().color(QPalette.ColorRole.Base).lightness() > 128
            else "#ef9a9a"
        )
        cursor.insertHtml(
            f'<span style="color:{danger}">⚠ {html.escape(message)}</span>'
            '&nbsp;&nbsp;<a href="action:retry">Retry</a>'
        )
        self._scroll_to_end()

    def add_line(self, text: str, link: tuple[str, str] | None = None) -> None:
        """Append a small muted line of plain `text` below what is shown, with an optional
        (label, href) link after it."""
        cursor = self._end()
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        fmt.setBottomMargin(2)
        self._new_block(cursor, fmt)
        muted = QTextCharFormat()
        muted.setForeground(QColor(self._muted()))
        muted.setFontPointSize(self.font().pointSizeF() * 0.85)
        cursor.insertText(text, muted)
        if link is not None:
            anchor = QTextCharFormat(muted)
            anchor.setAnchor(True)
            anchor.setAnchorHref(link[1])
            anchor.setForeground(self.palette().color(QPalette.ColorRole.Link))
            anchor.setFontUnderline(True)
            cursor.insertText(link[0], anchor)
        cursor.setCharFormat(QTextCharFormat())
        self._scroll_to_end()

    def show_stopped(self) -> None:
        """The user stopped the reply; what was streamed stays."""
        self._body_start = None
        self._streaming = False
        cursor = self._end()
        self._new_block(cursor)
        cursor.insertHtml(f'<span style="color:{self._muted()}"><i>Stopped.</i></span>')

    # -- building blocks --------------------------------------------------------------------------

    def _end(self) -> QTextCursor:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def _new_block(self, cursor: QTextCursor, fmt: QTextBlockFormat | None = None) -> None:
        if cursor.position() == 0 and self.document().isEmpty():
            cursor.setBlockFormat(fmt or QTextBlockFormat())
            cursor.setCharFormat(QTextCharFormat())
            return
        cursor.insertBlock(fmt or QTextBlockFormat(), QTextCharFormat())

    def _header(self, cursor: QTextCursor, who: str) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(14)
        self._new_block(cursor, fmt)
        char = QTextCharFormat()
        char.setFontWeight(QFont.Weight.Bold)
        char.setForeground(self.palette().color(QPalette.ColorRole.Highlight))
        cursor.insertText(who, char)

    def _user_block(self, cursor: QTextCursor, text: str) -> None:
        self._header(cursor, "You")
        frame = QTextFrameFormat()
        frame.setBackground(self.palette().color(QPalette.ColorRole.AlternateBase))
        frame.setPadding(8)
        frame.setTopMargin(4)
        frame.setBorder(0)
        cursor.insertFrame(frame)
        cursor.insertText(text, QTextCharFormat())
        cursor.movePosition(QTextCursor.MoveOperation.End)

    def _markdown(self, cursor: QTextCursor, text: str) -> None:
        self._new_block(cursor)
        self._insert_markdown(cursor, text)

    def _insert_markdown(self, cursor: QTextCursor, text: str) -> None:
        """Insert Markdown laid out in a scratch document, where its structure is whole: code
        blocks get a background, headings some air and table cells one top line."""
        scratch = self._scratch
        scratch.setMarkdown(text)
        code_bg = self.palette().color(QPalette.ColorRole.AlternateBase)
        block = scratch.begin()
        while block.isValid():
            here = QTextCursor(block)
            fmt = block.blockFormat()
            if fmt.hasProperty(QTextFormat.Property.BlockCodeFence):
                fmt.setBackground(code_bg)
                fmt.setLeftMargin(8)
            elif fmt.headingLevel():
                fmt.setTopMargin(10)
                fmt.setBottomMargin(4)
            elif (table := here.currentTable()) is not None:
                if not block.text() and _same_cell(table, block, block.next()):
                    here.deleteChar()  # Qt starts the first cell with an empty line after code
                    block = here.block()  # now holding the cell's text
                    continue
                fmt.setTopMargin(0)  # and gives it the paragraph's top margin
                if table.cellAt(block.position()).row() == 0:  # and may not make it bold
                    here.movePosition(
                        QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
                    )
                    here.mergeCharFormat(_BOLD)
            here.setBlockFormat(fmt)
            block = block.next()
        cursor.setBlockFormat(scratch.begin().blockFormat())  # the fragment's first block merges
        cursor.insertFragment(QTextDocumentFragment(scratch))

    def _tool_line(
        self,
        cursor: QTextCursor,
        call_id: str,
        name: str,
        arguments: str,
        result: str | None,
        *,
        ok: bool,
        first: bool = True,
    ) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        fmt.setBottomMargin(2)
        if first:
            self._new_block(cursor, fmt)
        else:
            cursor.setBlockFormat(fmt)
        muted = self._muted()
        expanded = call_id in self._expanded
        marker = "▾" if expanded else "▸"
        status = "…" if result is None else ("✓" if ok else "✗")
        args = _compact_json(arguments)
        line = (
            f'<span style="color:{muted}; font-size:small">'
            f'<a href="tool:{html.escape(call_id)}" style="text-decoration:none">{marker}</a> '
            f"{status} <b>{html.escape(name)}</b>({html.escape(_short(args, SUMMARY_CHARS))})"
        )
        if result is not None and not expanded:
            line += f" → {html.escape(_short(result, SUMMARY_CHARS))}"
        line += "</span>"
        cursor.insertHtml(line)
        if expanded:
            mono = QTextCharFormat()
            mono.setFontFamilies(["monospace"])
            mono.setFontFixedPitch(True)
            mono.setForeground(QColor(muted))
            detail = f"arguments: {_pretty_json(arguments)}"
            if result is not None:
                detail += f"\nresult: {result}"
            self._new_block(cursor)
            cursor.insertText(detail, mono)

    def _chips(self, cursor: QTextCursor, memory_ids: tuple[str, ...]) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(6)
        self._new_block(cursor, fmt)
        chip_bg = self.palette().color(QPalette.ColorRole.AlternateBase).name()
        chips = []
        for memory_id in memory_ids:
            text = self._memory_text(memory_id)
            label = "forgotten memory" if text is None else _short(text, CHIP_CHARS)
            chips.append(
                f'<a href="memory:{html.escape(memory_id)}" '
                f'style="text-decoration:none; background-color:{chip_bg}">'
                f"&nbsp;◆ {html.escape(label)}&nbsp;</a>"
            )
        cursor.insertHtml(
            f'<span style="font-size:small; color:{self._muted()}">Memories used: </span>'
            + "&nbsp; ".join(chips)
        )

    def _cut_off_line(self, cursor: QTextCursor) -> None:
        """The mark under a reply that stopped at the length limit."""
        self._new_block(cursor)
        cursor.insertHtml(
            f'<span style="color:{self._muted()}"><i>✂ Cut off: the reply reached its length '
            "limit (Settings &gt; Reply length).</i></span>"
        )

    def _muted(self) -> str:
        return self.palette().color(QPalette.ColorRole.PlaceholderText).name()

    # -- scrolling and links ----------------------------------------------------------------------

    def _at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_anchor(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        if kind == "memory":
            self.memory_clicked.emit(value)
        elif kind == "action" and value == "retry":
            self.retry_requested.emit()
        elif kind == "tool" and not self._streaming and self._conversation is not None:
            self._expanded.symmetric_difference_update({value})
            position = self.verticalScrollBar().value()
            self.show_conversation(self._load(self._conversation.id))
            self.verticalScrollBar().setValue(position)


def _compact_json(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, separators=(", ", ": "))
    except ValueError:
        return arguments


def _pretty_json(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments
