"""The chat pane: the chosen branch of a conversation as one rich-text document.

Each message shows with its actions as links under it (copy, copy as text, edit, regenerate)
and "< 2/3 >" when it has siblings; a reply streams in as Markdown (`StreamingMarkdown`) and,
once saved, is rendered again from the store. Tool calls show as one line in words that a
click expands; the memories a reply saw, and the places in files it read, show as chips under
it; errors offer Retry.

A long conversation opens at its last turns; earlier ones are rendered as the user scrolls up
to them (or finds, or opens a message among them). Lines about the conversation (`add_line`)
sit under it, and a reply streams in above them.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import QEvent, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QFont,
    QGuiApplication,
    QPalette,
    QShowEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFrameFormat,
    QTextOption,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from assistant.knowledge import Citation, citations_in
from assistant.memory import Conversation, Message
from assistant.ui import theme
from assistant.ui.chat.code_scroll import CodeScroll
from assistant.ui.chat.markdown import CODE_LINK, MarkdownRenderer, plain_text
from assistant.ui.chat.stream import StreamingMarkdown
from assistant.ui.chat.tool_summary import MemoryLookup, summarize
from assistant.ui.wording import shorten

Loader = Callable[[str], Conversation]  # conversation id -> the saved conversation
Versions = dict[str, list[Message]]  # message id -> it and its siblings (`Conversation.versions`)
CHIP_CHARS = 40
TAIL_GROUPS = 40  # the turns (a message, or a reply with its tools) a conversation opens with
EARLIER_GROUPS = 60  # and how many more each scroll to the top renders
TOOL_MARK = "▸"  # a tool line starts with it (DESIGN.md); "▾" when expanded
ERROR_MARK = "⚠"
_KEEP = QTextCursor.MoveMode.KeepAnchor


def _groups(branch: list[Message]) -> list[list[Message]]:
    """The branch as turns: each user message alone, then the replies and tool results."""
    groups: list[list[Message]] = []
    for message in branch:
        if message.role == "user" or not groups or groups[-1][0].role == "user":
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


class ChatView(QTextBrowser):
    """Read-only view of a conversation that can also stream a reply into itself."""

    memory_clicked = Signal(str)
    citation_clicked = Signal(object)  # a Citation: a place in a file a reply read
    retry_requested = Signal()
    regenerate_requested = Signal(str)  # the id of the user message to answer again
    edit_requested = Signal(str, str)  # message id, its text
    branch_requested = Signal(str)  # a sibling message to show instead
    copied = Signal(str)  # what was copied, for the status bar
    rendered = Signal(str)  # a conversation was drawn anew from its saved messages

    def __init__(
        self, memory_text: MemoryLookup, load: Loader, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setAccessibleName("Conversation")
        self.setAccessibleDescription(
            "The messages of the conversation. Links under each message copy, edit or "
            "regenerate it."
        )
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.anchorClicked.connect(self._on_anchor)
        self.document().setDocumentMargin(16)
        self._code_scroll = CodeScroll(self)
        self._memory_text = memory_text
        self._load = load
        self._renderer = MarkdownRenderer(self, self.palette)
        self._conversation: Conversation | None = None
        self._shown_groups = 0  # the conversation's turns rendered (the newest ones)
        self._expanded: set[str] = set()
        self._stream: StreamingMarkdown | None = None
        self._reply_start: int | None = None  # where the turn being answered begins
        self._body_start = 0  # and where its reply's body begins, after the header
        self._turn_shows_user = False  # and whether that is the user's message
        self._resumed = False  # and whether it began while another conversation was shown
        self._earlier: list[list[Message]] = []  # the turns not rendered yet, oldest first
        self._versions: Versions = {}
        self._lines_chars = 0  # how much of the document's end the `add_line` lines take
        self._tool_start: dict[str, int] = {}
        self._tool_args: dict[str, tuple[str, str]] = {}
        self._streaming = False
        self._positions: dict[str, int] = {}  # message id -> where it is shown
        self._texts: dict[str, str] = {}  # message id -> its Markdown, for the copy links
        self._aliases: dict[str, str] = {}  # key of a message shown before it was saved -> id
        self._citations: list[Citation] = []  # the file chips' places, by their link's number
        self._unsaved = 0  # how many messages were shown before they were saved
        self._head_start = 0  # where the header of the reply being written begins
        self._pinned = True  # to the end: it stays in view as the document grows or is laid out
        self._wanted: int | None = None  # a scroll position waiting for the layout to reach it
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.verticalScrollBar().rangeChanged.connect(self._on_range)

    # -- whole conversations ---------------------------------------------------------------------

    def show_conversation(
        self, conversation: Conversation | None, *, replying: bool = False
    ) -> None:
        """Render the chosen branch of a conversation from its saved messages (or clear).

        `replying`: a reply to the last message is about to stream in (no "No reply" line).
        """
        previous, self._conversation = self._conversation, conversation
        again = conversation is not None and previous is not None and conversation.id == previous.id
        self._streaming = False
        self._stream = None
        self._reply_start = None
        self.clear()
        self._renderer.clear()
        self._positions = {}
        self._texts = {}
        self._aliases = {}
        self._citations = []
        self._lines_chars = 0
        self._earlier = []
        self._wanted = None
        if conversation is None:
            return
        cursor = self._end()
        cursor.beginEditBlock()
        groups = _groups(conversation.branch())
        versions = self._versions = conversation.versions()
        # Drawn again (a tool line expanded, a theme): as many turns as the user had shown.
        tail = max(TAIL_GROUPS, self._shown_groups) if again else TAIL_GROUPS
        self._earlier = groups[: max(0, len(groups) - tail)]
        self._shown_groups = len(groups) - len(self._earlier)
        for group in groups[len(self._earlier) :]:
            self._group(cursor, versions, group)
        if groups and groups[-1][0].role == "user" and not replying:
            self._marker(cursor, f"{ERROR_MARK} No reply yet.", retry=True)
        cursor.endEditBlock()
        self._scroll_to_end()
        self.rendered.emit(conversation.id)

    def _group(self, cursor: QTextCursor, versions: Versions, group: list[Message]) -> None:
        first = group[0]
        if first.role == "user":
            self._user_group(cursor, versions, first)
            return
        self._reply_head(cursor, versions, first)
        results = {m.tool_call_id: m for m in group if m.role == "tool"}
        for message in group:
            self._positions.setdefault(message.id, cursor.position())
            if message.role == "assistant":
                self._assistant_message(cursor, message, results)
        self._reply_tail(cursor, group)

    def _user_group(self, cursor: QTextCursor, versions: Versions, message: Message) -> None:
        self._positions[message.id] = cursor.position()
        self._header(cursor, "You", message.id, versions.get(message.id, []))
        self._user_text(cursor, message.content)
        self._texts[message.id] = message.content
        self._actions(cursor, [("Copy", f"copy:{message.id}"), ("Edit", f"edit:{message.id}")])

    def _reply_head(self, cursor: QTextCursor, versions: Versions, first: Message) -> None:
        self._positions[first.id] = cursor.position()
        self._header(cursor, "Assistant", first.id, versions.get(first.id, []))

    def _reply_tail(
        self, cursor: QTextCursor, group: list[Message], error: str | None = None
    ) -> None:
        """Under a reply: its end marker (`error` if given), the memories it saw, its actions."""
        first, last = group[0], group[-1]
        if error is not None:
            self._marker(cursor, f"{ERROR_MARK} {error}", retry=True)
        elif last.stop_reason == "stopped":
            self._marker(cursor, "■ Stopped.")
        elif last.stop_reason == "failed":
            self._marker(cursor, f"{ERROR_MARK} The reply broke off.", retry=True)
        elif last.cut_off:
            self._marker(
                cursor, "✂ Cut off: the reply reached its length limit (Settings > Reply length)."
            )
        elif last.stop_reason is not None:  # a reason this view does not know by name
            self._marker(cursor, f"{ERROR_MARK} The reply ended early ({last.stop_reason}).")
        elif last.role == "tool":
            self._marker(cursor, f"{ERROR_MARK} The reply did not finish.", retry=True)
        if last.role == "assistant" and not last.tool_calls and last.memory_ids:
            self._chips(cursor, last.memory_ids)
        self._file_chips(cursor, group)
        text = "\n\n".join(m.content for m in group if m.role == "assistant" and m.content)
        self._texts[first.id] = text
        actions = [("Copy", f"copy:{first.id}"), ("Copy as text", f"copytext:{first.id}")]
        if first.parent_id is not None:
            actions.append(("Regenerate", f"regenerate:{first.parent_id}"))
        self._actions(cursor, actions)

    def _assistant_message(
        self, cursor: QTextCursor, message: Message, results: dict[str | None, Message]
    ) -> None:
        if message.content:
            self._new_block(cursor)
            self._renderer.insert(cursor, message.content)
        for call in message.tool_calls:
            function = call.get("function", {})
            result = results.get(call.get("id"))
            self._tool_line(
                cursor,
                str(call.get("id", "")),
                str(function.get("name", "")),
                str(function.get("arguments", "")),
                None if result is None else result.content,
                ok=result is None or result.ok,
            )

    def has_earlier(self) -> bool:
        """Whether earlier turns of the conversation are not rendered yet."""
        return bool(self._earlier)

    def load_earlier(self, count: int = EARLIER_GROUPS) -> None:
        """Render up to `count` more of the earlier turns above what is shown, keeping what the
        user sees where it is."""
        if not self._earlier or count <= 0:
            return
        chunk, self._earlier = self._earlier[-count:], self._earlier[:-count]
        self._shown_groups += len(chunk)
        layout = self.document().documentLayout()
        bar = self.verticalScrollBar()
        top = self.cursorForPosition(self.viewport().rect().topLeft()).block()
        offset, top_at = layout.blockBoundingRect(top).top() - bar.value(), top.position()
        size = self.document().characterCount()
        shown, self._positions = self._positions, {}
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        first = self.document().begin()
        cursor.insertBlock(first.blockFormat(), first.charFormat())  # what is shown moves down
        cursor.setPosition(0)
        for group in chunk:
            self._group(cursor, self._versions, group)
        cursor.endEditBlock()
        delta = self.document().characterCount() - size
        self._positions.update({key: at + delta for key, at in shown.items()})
        self._shift(delta)
        top = self.document().findBlock(top_at + delta)
        self._wanted = round(layout.blockBoundingRect(top).top() - offset)
        self._on_range(bar.minimum(), bar.maximum())  # or once Qt has laid out that far

    def load_all(self) -> None:
        """Render every earlier turn (to find in the whole conversation)."""
        self.load_earlier(len(self._earlier))

    def _shift(self, delta: int) -> None:
        """`delta` characters were inserted before everything shown: move the marks along."""
        if self._reply_start is not None:
            self._reply_start += delta
        self._head_start += delta
        self._body_start += delta
        self._tool_start = {call: at + delta for call, at in self._tool_start.items()}
        if self._stream is not None:
            self._stream.shift(delta)

    def _on_scrolled(self, value: int) -> None:
        self._pinned = value >= self.verticalScrollBar().maximum() - 4
        if self._earlier and value < self.viewport().height():
            QTimer.singleShot(0, self._load_earlier_if_near_top)

    def _load_earlier_if_near_top(self) -> None:
        if self.verticalScrollBar().value() < self.viewport().height():
            self.load_earlier()

    def scroll_to_message(self, message_id: str) -> bool:
        """Bring a shown message into view and put the caret there; False if not shown.

        A message among the earlier turns not rendered yet is rendered first.
        """
        if message_id not in self._positions:
            index = next(
                (i for i, group in enumerate(self._earlier) for m in group if m.id == message_id),
                None,
            )
            if index is not None:
                self.load_earlier(len(self._earlier) - index)
        position = self._positions.get(message_id)
        if position is None:
            return False
        cursor = self.textCursor()
        cursor.setPosition(position)
        cursor.movePosition(QTextCursor.MoveOperation.NextBlock)  # the header ("You")
        cursor.movePosition(QTextCursor.MoveOperation.NextBlock, _KEEP)  # and the first line
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, _KEEP)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()
        return True

    def message_at(self, position: int) -> str | None:
        """The id of the message (or whole reply) shown at a document position."""
        before = [(self._positions[mid], mid) for mid in self._texts if mid in self._positions]
        best = max(((p, mid) for p, mid in before if p <= position), default=None)
        return best[1] if best else None

    # -- streaming --------------------------------------------------------------------------------

    def add_user_message(self, text: str) -> None:
        """Show the user's message at once (with its actions), then wait for the reply."""
        cursor = self._content_end()
        self._reply_start = cursor.position()
        self._turn_shows_user = True
        self._unsaved += 1
        key = f"unsaved{self._unsaved}"  # until the saved message gives its id
        self._positions[key] = cursor.position()
        self._texts[key] = text
        self._header(cursor, "You", "", [])
        self._user_text(cursor, text)
        self._actions(cursor, [("Copy", f"copy:{key}"), ("Edit", f"edit:{key}")])
        self.start_reply()

    def start_reply(self, *, resumed: bool = False) -> None:
        """Show the assistant's header; the reply streams in below it.

        `resumed`: the reply began while another conversation was shown (its start is not
        here), so the whole conversation is shown again from the store once it is saved.
        """
        self._resumed = resumed
        cursor = self._content_end()
        if self._reply_start is None:
            self._reply_start = cursor.position()
            self._turn_shows_user = False
        self._head_start = cursor.position()
        self._header(cursor, "Assistant", "", [])
        self._body_start = cursor.position()
        self._streaming = True
        self._scroll_to_end()

    def append_delta(self, text: str) -> None:
        """Append a streamed piece of the reply; it is rendered as Markdown at once."""
        at_bottom = self._at_bottom()
        if self._stream is None:
            self._stream = StreamingMarkdown(self._content_end, self._renderer)
        self._stream.append(text)
        if at_bottom:
            self._scroll_to_end()

    def start_tool_call(self, call_id: str, name: str, arguments: str) -> None:
        """Show a tool call as a compact line, marked as running."""
        if self._stream is not None:
            self._stream.close()
        self._stream = None
        cursor = self._content_end()
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
        cursor = self._content_end()
        cursor.setPosition(start, _KEEP)
        cursor.removeSelectedText()
        self._tool_line(cursor, call_id, name, arguments, result, ok=ok)

    def finish_reply(self, conversation: Conversation, error: str | None = None) -> None:
        """The turn is over (done, stopped or failed): show the reply as saved.

        The streamed body stays as rendered (only its open block is rendered again, with its
        Copy links); the headers above it and the line under it come from the saved messages.
        `error` is the failure to show in place of the saved marker.
        """
        at_bottom = self._at_bottom()
        self._conversation = conversation
        if self._stream is not None:
            self._stream.close()
        self._stream = None
        self._streaming = False
        self._tool_start.clear()
        self._tool_args.clear()
        groups = _groups(conversation.branch())
        answered = bool(groups) and groups[-1][0].role != "user"
        start, self._reply_start = self._reply_start, None
        if start is None or self._resumed:  # not all of this turn is shown
            self.show_conversation(conversation)
            return
        versions = conversation.versions()
        user = groups[-2 if answered else -1][0] if self._turn_shows_user else None
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        if answered and all(
            len(versions.get(m.id, [])) < 2 for m in (groups[-1][0], user) if m is not None
        ):  # nothing above the body changes: leave it (and the body's layout) alone
            if user is not None:
                key = f"unsaved{self._unsaved}"
                self._aliases[key] = user.id
                self._texts[user.id] = self._texts.pop(key, user.content)
                self._positions[user.id] = self._positions.pop(key, start)
            self._positions[groups[-1][0].id] = self._head_start
            cursor = self._content_end()
            self._reply_tail(cursor, groups[-1], error)
            cursor.endEditBlock()
            if at_bottom:
                self._scroll_to_end()
            return
        cursor.setPosition(start)
        cursor.setPosition(self._body_start if answered else self._content_end().position(), _KEEP)
        cursor.removeSelectedText()
        self._texts.pop(f"unsaved{self._unsaved}", None)
        self._positions.pop(f"unsaved{self._unsaved}", None)
        if user is not None:
            self._user_group(cursor, versions, user)
        if answered:
            self._reply_head(cursor, versions, groups[-1][0])
            cursor = self._content_end()
            self._reply_tail(cursor, groups[-1], error)
        else:
            self._marker(cursor, f"{ERROR_MARK} {error or 'No reply yet.'}", retry=True)
        cursor.endEditBlock()
        if at_bottom:
            self._scroll_to_end()

    def add_line(self, text: str, *links: tuple[str, str]) -> None:
        """Append a small muted line of plain `text` under the conversation, with (label, href)
        links after it (a change to memory, with Undo). A reply being written goes on above
        the lines."""
        at_bottom = self._at_bottom()
        cursor = self._end()
        start = cursor.position()
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        fmt.setBottomMargin(2)
        cursor.insertBlock(fmt, QTextCharFormat())  # never the conversation's last block
        small = self._small()
        cursor.insertText(text, small)
        for index, (label, href) in enumerate(links):
            if index:
                cursor.insertText(" · ", small)
            anchor = self._link(small, href)
            anchor.setFontUnderline(True)
            cursor.insertText(label, anchor)
        cursor.setCharFormat(QTextCharFormat())
        self._lines_chars += cursor.position() - start
        if at_bottom:
            self._scroll_to_end()

    # -- building blocks --------------------------------------------------------------------------

    def _end(self) -> QTextCursor:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def _content_end(self) -> QTextCursor:
        """Where the conversation ends: above the lines about it (`add_line`)."""
        cursor = self._end()
        cursor.setPosition(cursor.position() - self._lines_chars)
        return cursor

    def _new_block(self, cursor: QTextCursor, fmt: QTextBlockFormat | None = None) -> None:
        # An empty block is reused: the document's first, or the one Qt keeps after a frame.
        if cursor.block().length() == 1 and cursor.atBlockStart():
            cursor.setBlockFormat(fmt or QTextBlockFormat())
            cursor.setCharFormat(QTextCharFormat())
            return
        cursor.insertBlock(fmt or QTextBlockFormat(), QTextCharFormat())

    def _small(self, *, danger: bool = False) -> QTextCharFormat:
        fmt = QTextCharFormat()
        palette = self.palette()
        fmt.setForeground(theme.danger(palette) if danger else theme.muted(palette))
        fmt.setFontPointSize(max(7.0, QFont().pointSizeF() * 0.85))
        return fmt

    def _link(self, base: QTextCharFormat, href: str) -> QTextCharFormat:
        fmt = QTextCharFormat(base)
        fmt.setAnchor(True)
        fmt.setAnchorHref(href)
        fmt.setForeground(self.palette().color(QPalette.ColorRole.Link))
        return fmt

    def _header(
        self, cursor: QTextCursor, who: str, message_id: str, siblings: list[Message]
    ) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(14)
        self._new_block(cursor, fmt)
        char = QTextCharFormat()
        char.setFontWeight(QFont.Weight.Bold)
        char.setForeground(theme.accent(self.palette()))
        cursor.insertText(who, char)
        if len(siblings) < 2:
            return
        ids = [m.id for m in siblings]
        index = ids.index(message_id)
        small = self._small()
        cursor.insertText("   ", small)
        previous = f"branch:{ids[index - 1]}" if index > 0 else None
        following = f"branch:{ids[index + 1]}" if index + 1 < len(ids) else None
        cursor.insertText("<", self._link(small, previous) if previous else small)
        cursor.insertText(f" {index + 1}/{len(ids)} ", small)
        cursor.insertText(">", self._link(small, following) if following else small)

    def _user_text(self, cursor: QTextCursor, text: str) -> None:
        frame = QTextFrameFormat()
        frame.setBackground(self.palette().color(QPalette.ColorRole.AlternateBase))
        frame.setPadding(8)
        frame.setTopMargin(4)
        frame.setBorder(0)
        inserted = cursor.insertFrame(frame)
        cursor.insertText(text, QTextCharFormat())
        cursor.setPosition(inserted.lastPosition() + 1)  # the block after the frame

    def _actions(self, cursor: QTextCursor, actions: list[tuple[str, str]]) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        self._new_block(cursor, fmt)
        small = self._small()
        for index, (label, href) in enumerate(actions):
            if index:
                cursor.insertText("  ·  ", small)
            cursor.insertText(label, self._link(small, href))

    def _marker(self, cursor: QTextCursor, text: str, *, retry: bool = False) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(4)
        self._new_block(cursor, fmt)
        style = self._small(danger=text.startswith(ERROR_MARK))
        style.setFontItalic(not text.startswith(ERROR_MARK))
        cursor.insertText(text, style)
        if retry:
            cursor.insertText("  ", style)
            cursor.insertText("Retry", self._link(self._small(), "action:retry"))

    def _tool_line(
        self,
        cursor: QTextCursor,
        call_id: str,
        name: str,
        arguments: str,
        result: str | None,
        *,
        ok: bool,
    ) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        fmt.setBottomMargin(2)
        self._new_block(cursor, fmt)
        small = self._small()
        expanded = call_id in self._expanded
        summary = summarize(name, arguments, result, ok, self._memory_text)
        toggle = self._link(small, f"tool:{call_id}")
        toggle.setForeground(small.foreground())  # the whole line opens the details
        status = "…" if result is None else ("" if ok else " ✗")
        marker = "▾" if expanded else TOOL_MARK
        cursor.insertText(f"{marker} {summary.action}{status}", toggle)
        if summary.memory_text:
            cursor.insertText(" · ", small)
            label = f"◆ {summary.memory_text}"
            if summary.memory_id:
                cursor.insertText(label, self._link(small, f"memory:{summary.memory_id}"))
            else:
                cursor.insertText(label, small)
        if expanded:
            mono = QTextCharFormat(small)
            mono.setFontFamilies(["monospace"])
            mono.setFontFixedPitch(True)
            detail = f"{name}\narguments: {_pretty_json(arguments)}"
            if result is not None:
                detail += f"\nresult: {result}"
            self._new_block(cursor)
            cursor.insertText(detail, mono)

    def _chips(self, cursor: QTextCursor, memory_ids: tuple[str, ...]) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(6)
        self._new_block(cursor, fmt)
        small = self._small()
        cursor.insertText("Memories used: ", small)
        chip = QTextCharFormat(small)
        chip.setBackground(self.palette().color(QPalette.ColorRole.AlternateBase))
        for index, memory_id in enumerate(memory_ids):
            text = self._memory_text(memory_id)
            label = "forgotten memory" if text is None else shorten(text, CHIP_CHARS)
            if index:
                cursor.insertText("  ", small)
            cursor.insertText(f" ◆ {label} ", self._link(chip, f"memory:{memory_id}"))

    def _file_chips(self, cursor: QTextCursor, group: list[Message]) -> None:
        """The places in files that the reply's file searches gave the model."""
        cited = [
            citation
            for m in group
            if m.role == "tool" and m.name == "search_files" and m.ok
            for citation in citations_in(m.content)
        ]
        if not cited:
            return
        self._new_block(cursor)
        small = self._small()
        cursor.insertText("Files read: ", small)
        chip = QTextCharFormat(small)
        chip.setBackground(self.palette().color(QPalette.ColorRole.AlternateBase))
        for index, citation in enumerate(dict.fromkeys(cited)):
            if index:
                cursor.insertText("  ", small)
            self._citations.append(citation)
            href = f"cite:{len(self._citations) - 1}"
            cursor.insertText(
                f" ▤ {shorten(citation.label(), CHIP_CHARS)} ", self._link(chip, href)
            )

    # -- copying ---------------------------------------------------------------------------------

    def copy_message(self, message_id: str, *, markdown: bool = True) -> None:
        """Put a message on the clipboard, as Markdown or as plain text."""
        text = self._texts.get(self._aliases.get(message_id, message_id))
        if text is None:
            return
        QGuiApplication.clipboard().setText(text if markdown else plain_text(text))
        self.copied.emit("Message copied" if markdown else "Message copied as text")

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        """The standard menu, plus the actions of the message under the mouse."""
        menu = self.createStandardContextMenu(event.pos())
        message_id = self.message_at(self.cursorForPosition(event.pos()).position())
        conversation = self._conversation
        if message_id is not None and conversation is not None:
            message = next((m for m in conversation.messages if m.id == message_id), None)
            menu.addSeparator()
            menu.addAction("Copy message", lambda: self.copy_message(message_id))
            menu.addAction(
                "Copy message as text", lambda: self.copy_message(message_id, markdown=False)
            )
            if message is not None and not self._streaming:
                if message.role == "user":
                    menu.addAction(
                        "Edit and resend…",
                        lambda: self.edit_requested.emit(message.id, message.content),
                    )
                elif message.parent_id is not None:
                    parent = message.parent_id
                    menu.addAction("Regenerate", lambda: self.regenerate_requested.emit(parent))
        menu.exec(event.globalPos())

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        """A new palette (theme): render the conversation again in its colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and not self._streaming:
            position = self.verticalScrollBar().value()
            self.show_conversation(self._conversation)
            self.verticalScrollBar().setValue(position)

    # -- scrolling and links ----------------------------------------------------------------------

    def _at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._pinned = True

    def _on_range(self, _minimum: int, maximum: int) -> None:
        wanted = self._wanted
        if wanted is not None and wanted <= maximum:
            self._wanted = None
            self.verticalScrollBar().setValue(wanted)
        elif self._pinned:
            self.verticalScrollBar().setValue(maximum)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        """Shown for the first time: still at the end (Qt would bring the caret into view)."""
        pinned = self._pinned
        super().showEvent(event)
        if pinned:
            self._scroll_to_end()

    def _on_anchor(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        if kind == "memory":
            self.memory_clicked.emit(value)
        elif kind == "cite" and value.isdigit() and int(value) < len(self._citations):
            self.citation_clicked.emit(self._citations[int(value)])
        elif kind == "copy":
            self.copy_message(value)
        elif kind == "copytext":
            self.copy_message(value, markdown=False)
        elif kind == CODE_LINK and value.isdigit() and int(value) < len(self._renderer.code):
            QGuiApplication.clipboard().setText(self._renderer.code[int(value)])
            self.copied.emit("Code copied")
        elif self._streaming:
            return  # the rest changes the conversation, which waits for the reply
        elif kind == "action" and value == "retry":
            self.retry_requested.emit()
        elif kind == "regenerate":
            self.regenerate_requested.emit(value)
        elif kind == "edit":
            message_id = self._aliases.get(value, value)
            if message_id in self._texts and not message_id.startswith("unsaved"):
                self.edit_requested.emit(message_id, self._texts[message_id])
        elif kind == "branch":
            self.branch_requested.emit(value)
        elif kind == "tool" and self._conversation is not None:
            self._expanded.symmetric_difference_update({value})
            position = self.verticalScrollBar().value()
            self.show_conversation(self._load(self._conversation.id))
            self.verticalScrollBar().setValue(position)


def _pretty_json(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments
