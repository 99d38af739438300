"""The chat's document writer: a conversation's messages as blocks of one rich-text document.

Each message shows with its actions as links under it (copy, copy as text, edit, regenerate)
and "< 2/3 >" when it has siblings; tool calls show as one line in words that a click expands
(in place); the memories a reply saw, and the places in files it read, show as chips under it;
errors offer Retry. The writer
remembers where each message is and its Markdown (for the copy links); the view scrolls, the
reply in progress (`reply.py`) streams.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from PySide6.QtGui import (
    QFont,
    QPalette,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFrameFormat,
)

from assistant.knowledge import Citation, citations_in
from assistant.knowledge.attachments import label as file_label
from assistant.memory import Conversation, Message
from assistant.memory.messages import call_key
from assistant.ui import theme
from assistant.ui.chat.markdown import MESSAGE_TEXT, MarkdownRenderer
from assistant.ui.chat.reply_details import stats_details, stats_line
from assistant.ui.chat.thumbnails import ImageLookup, insert_thumbnails, thumbnails
from assistant.ui.chat.tool_summary import MemoryLookup, summarize
from assistant.ui.wording import shorten
from assistant.ui.worker import ToolImage, unfence

Versions = dict[str, list[Message]]  # message id -> it and its siblings (`Conversation.versions`)
CHIP_CHARS = 40
ATTACHMENT_CHARS = 60  # a file's chip: its name, size and pages
FILE_MARK = "▤"
TOOL_MARK = "▸"  # a tool line starts with it (DESIGN.md); "▾" when expanded
ERROR_MARK = "⚠"
REVIEW_LINK = "review:"  # opens the memory panel's Review tab
KEEP = QTextCursor.MoveMode.KeepAnchor

# Where the reply's length limit is set: a model's or a conversation's Options win over Settings.
CUT_OFF_WHERE = "Reply length, in Settings > Memory or the model's Options"


def turns(branch: list[Message]) -> list[list[Message]]:
    """The branch as turns: each user message alone, then the replies and tool results."""
    groups: list[list[Message]] = []
    for message in branch:
        if message.role == "user" or not groups or groups[-1][0].role == "user":
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


class ChatDocument:
    """Writes messages into `document` in the colours of `palette()`.

    `positions` says where each message (or whole reply) is shown, `texts` its Markdown;
    `aliases` maps the key of a message shown before it was saved to its id. Lines about the
    conversation (`lines_chars` characters) sit at the document's end, under it.
    """

    def __init__(
        self,
        document: QTextDocument,
        palette: Callable[[], QPalette],
        memory_text: MemoryLookup,
        renderer: MarkdownRenderer,
        tool_image: ImageLookup | None = None,
    ) -> None:
        self.document = document
        self._palette = palette
        self._memory_text = memory_text
        self._tool_image = tool_image  # the images tools returned, as the conversation keeps them
        self.renderer = renderer
        self.positions: dict[str, int] = {}  # message id -> where it is shown
        self.texts: dict[str, str] = {}  # message id -> its Markdown, for the copy links
        self.aliases: dict[str, str] = {}  # key of a message shown before it was saved -> id
        self.expanded: set[str] = set()  # the tool calls shown with their details
        self.citations: list[Citation] = []  # the file chips' places, by their link's number
        self.lines_chars = 0  # how much of the document's end the lines about it take
        self.user_ids: set[str] = set()  # the user messages shown: each begins a turn

    def clear(self) -> None:
        """Forget what was written (the document was cleared)."""
        self.renderer.clear()
        self.positions = {}
        self.texts = {}
        self.aliases = {}
        self.citations = []
        self.lines_chars = 0
        self.user_ids = set()

    def end(self) -> QTextCursor:
        """A cursor at the document's end."""
        cursor = QTextCursor(self.document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def content_end(self) -> QTextCursor:
        """Where the conversation ends: above the lines about it."""
        cursor = self.end()
        cursor.setPosition(cursor.position() - self.lines_chars)
        return cursor

    def shift_positions(self, after: int, delta: int) -> None:
        """`delta` characters were inserted (or removed) at `after`: move the later marks."""
        self.positions = {k: at + delta if at > after else at for k, at in self.positions.items()}

    # -- messages --------------------------------------------------------------------------------

    def turn(self, cursor: QTextCursor, versions: Versions, group: list[Message]) -> None:
        """Write one turn: a user message, or a reply with its tool calls."""
        first = group[0]
        if first.role == "user":
            self.user_message(cursor, versions, first)
            return
        self.reply_head(cursor, versions, first)
        results = {m.tool_call_id: m for m in group if m.role == "tool"}
        times = repeated_calls(group)
        for message in group:
            self.positions.setdefault(message.id, cursor.position())
            if message.role == "assistant":
                self._assistant_message(cursor, message, results, times)
        self.reply_tail(cursor, group)

    def user_message(self, cursor: QTextCursor, versions: Versions, message: Message) -> None:
        """A user message, with its header and actions."""
        self.positions[message.id] = cursor.position()
        self.user_ids.add(message.id)
        self.header(cursor, "You", message.id, versions.get(message.id, []))
        self.user_text(cursor, message.content)
        files: list[tuple[str, str | None]] = [
            (file_label(a.name, a.size, a.pages), f"attached:{a.id}") for a in message.attachments
        ]
        self.attachment_chips(cursor, files)
        self.texts[message.id] = message.content
        self.actions(cursor, [("Copy", f"copy:{message.id}"), ("Edit", f"edit:{message.id}")])

    def reply_head(self, cursor: QTextCursor, versions: Versions, first: Message) -> None:
        """The header of a reply (with its siblings' arrows)."""
        self.positions[first.id] = cursor.position()
        self.header(cursor, "Assistant", first.id, versions.get(first.id, []))

    def reply_tail(
        self, cursor: QTextCursor, group: list[Message], error: str | None = None
    ) -> None:
        """Under a reply: its end marker (`error` if given), the memories it saw, its actions."""
        first, last = group[0], group[-1]
        if error is not None:
            self.marker(cursor, f"{ERROR_MARK} {error}", retry=first.parent_id)
        elif last.stop_reason == "stopped":
            self.marker(cursor, "■ Stopped.")
        elif last.stop_reason == "failed":
            self.marker(cursor, f"{ERROR_MARK} The reply broke off.", retry=first.parent_id)
        elif last.cut_off:
            self.marker(cursor, f"✂ Cut off: the reply reached its length limit ({CUT_OFF_WHERE}).")
        elif last.stop_reason is not None:  # a reason this view does not know by name
            self.marker(cursor, f"{ERROR_MARK} The reply ended early ({last.stop_reason}).")
        elif last.role == "tool":
            self.marker(cursor, f"{ERROR_MARK} The reply did not finish.", retry=first.parent_id)
        if last.role == "assistant" and not last.tool_calls and last.memory_ids:
            self._chips(cursor, last.memory_ids)
        self._file_chips(cursor, group)
        text = "\n\n".join(m.content for m in group if m.role == "assistant" and m.content)
        self.texts[first.id] = text
        actions = [("Copy", f"copy:{first.id}"), ("Copy as text", f"copytext:{first.id}")]
        if first.parent_id is not None:
            actions.append(("Regenerate", f"regenerate:{first.parent_id}"))
        self.actions(cursor, actions)
        if last.role == "assistant" and last.stats is not None:
            details = QTextCharFormat(self.small())
            details.setToolTip(stats_details(last.stats))
            cursor.insertText("  ·  ", self.small())
            cursor.insertText(stats_line(last.stats), details)

    def _assistant_message(
        self,
        cursor: QTextCursor,
        message: Message,
        results: dict[str | None, Message],
        times: dict[str, int],
    ) -> None:
        """A reply's text and its tool lines; a call made again in the turn is counted on the
        line of its first time (`times`: by the first's id; the repeats are left out)."""
        if message.content:
            self.new_block(cursor)
            self.renderer.insert(cursor, message.content)
        for call in message.tool_calls:
            call_id = str(call.get("id", ""))
            if times.get(call_id, 1) == 0:
                continue
            function = call.get("function", {})
            result = results.get(call.get("id"))
            self.tool_line(
                cursor,
                call_id,
                str(function.get("name", "")),
                str(function.get("arguments", "")),
                None if result is None else result.content,
                ok=result is None or result.ok,
                times=times.get(call_id, 1),
            )

    # -- tool lines ------------------------------------------------------------------------------

    def toggle_tool_line(self, conversation: Conversation, call_id: str) -> bool:
        """Expand a saved tool call's line to its arguments and result, or fold it, in place;
        False if it is not shown (or not saved yet)."""
        return self._redraw_tool_line(conversation, call_id, toggle=True)

    def collapse_repeats(self, conversation: Conversation) -> None:
        """Make the lines of a call the last turn made again one line, counted (as a turn drawn
        from the saved conversation shows them)."""
        groups = turns(conversation.branch())
        for call_id, times in repeated_calls(groups[-1] if groups else []).items():
            self._redraw_tool_line(conversation, call_id, times=times)

    def _redraw_tool_line(
        self,
        conversation: Conversation,
        call_id: str,
        *,
        toggle: bool = False,
        times: int | None = None,
    ) -> bool:
        """Draw a saved tool call's line again in place (`toggle`: expanded or folded the other
        way; `times` 0: left out, a repeat); False if it is not shown (or not saved yet)."""
        found = _saved_tool_call(conversation, call_id)
        line = self._tool_block(call_id)
        if found is None or line is None:
            return False
        expanded = call_id in self.expanded
        last = line.next() if expanded and line.next().isValid() else line  # + its details
        start = line.position()
        size = self.document.characterCount()
        cursor = QTextCursor(self.document)
        cursor.beginEditBlock()
        cursor.setPosition(start)
        cursor.setPosition(last.position() + last.length() - 1, KEEP)
        cursor.removeSelectedText()
        if toggle:
            self.expanded.symmetric_difference_update({call_id})
        times = _times_made(conversation, call_id) if times is None else times
        if times == 0:
            cursor.deletePreviousChar()  # the line's own block goes too
        else:
            name, arguments, result, ok = found
            self.tool_line(cursor, call_id, name, arguments, result, ok=ok, times=times)
        cursor.endEditBlock()
        self.shift_positions(start, self.document.characterCount() - size)
        return True

    def link_near(self, position: int, *, forward: bool) -> QTextCursor | None:
        """A cursor selecting the first link after `position` (or the last one before it)."""
        found: tuple[int, int] | None = None
        block = self.document.findBlock(min(position, self.document.characterCount() - 1))
        while block.isValid():
            fragments = []
            it = block.begin()
            while not it.atEnd():
                fragments.append(it.fragment())
                it += 1
            for fragment in fragments if forward else reversed(fragments):
                start, end = fragment.position(), fragment.position() + fragment.length()
                inside = start >= position if forward else end <= position
                if inside and fragment.charFormat().isAnchor():
                    found = (start, end)
                    break
            if found is not None:
                break
            block = block.next() if forward else block.previous()
        if found is None:
            return None
        cursor = QTextCursor(self.document)
        cursor.setPosition(found[0])
        cursor.setPosition(found[1], KEEP)
        return cursor

    def _tool_block(self, call_id: str) -> QTextBlock | None:
        """The block of the tool line of `call_id` (its link opens the details)."""
        href = f"tool:{call_id}"
        block = self.document.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                if it.fragment().charFormat().anchorHref() == href:
                    return block
                it += 1
            block = block.next()
        return None

    def tool_line(
        self,
        cursor: QTextCursor,
        call_id: str,
        name: str,
        arguments: str,
        result: str | None,
        *,
        ok: bool,
        images: Sequence[ToolImage] = (),
        times: int = 1,
    ) -> None:
        """A tool call in words (running while `result` is None), how often the turn made it
        (`times`), the thumbnails of the images it returned (`images`, else those its result
        kept), its details if expanded."""
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        fmt.setBottomMargin(2)
        self.new_block(cursor, fmt)
        small = self.small()
        expanded = call_id in self.expanded
        summary = summarize(name, arguments, result, ok, self._memory_text)
        toggle = self.link(small, f"tool:{call_id}")
        toggle.setForeground(small.foreground())  # the whole line opens the details
        status = "…" if result is None else ("" if ok else " ✗")
        marker = "▾" if expanded else TOOL_MARK
        count = f" ({times} times)" if times > 1 else ""
        cursor.insertText(f"{marker} {summary.action}{status}{count}", toggle)
        if summary.memory_text and summary.proposed:  # not a memory (yet): no ◆, no link to one
            cursor.insertText(" · ", small)
            chip = self.link(small, REVIEW_LINK)
            chip.setToolTip(
                "Not saved yet: waiting for your review on the memory panel's Review tab"
            )
            cursor.insertText(f"◇ {summary.memory_text} (waiting for your review)", chip)
        elif summary.memory_text:
            cursor.insertText(" · ", small)
            label = f"◆ {summary.memory_text}"
            if summary.memory_id:
                cursor.insertText(label, self.link(small, f"memory:{summary.memory_id}"))
            else:
                cursor.insertText(label, small)
        if ok and result is not None:
            insert_thumbnails(cursor, self.document, thumbnails(result, images, self._tool_image))
        if expanded:
            mono = QTextCharFormat(small)
            mono.setFontFamilies(["monospace"])
            mono.setFontFixedPitch(True)
            detail = f"{name}\narguments: {_pretty_json(arguments)}"
            if result is not None:
                detail += f"\nresult: {unfence(result)}"  # as the tool gave it
            self.new_block(cursor)
            # Line breaks, not new blocks: the details are one block, folded away whole.
            cursor.insertText(detail.replace("\n", "\u2028"), mono)

    # -- building blocks -------------------------------------------------------------------------

    def new_block(self, cursor: QTextCursor, fmt: QTextBlockFormat | None = None) -> None:
        """Start a block at `cursor`, reusing an empty one."""
        # An empty block is reused: the document's first, or the one Qt keeps after a frame.
        if cursor.block().length() == 1 and cursor.atBlockStart():
            cursor.setBlockFormat(fmt or QTextBlockFormat())
            cursor.setCharFormat(QTextCharFormat())
            return
        cursor.insertBlock(fmt or QTextBlockFormat(), QTextCharFormat())

    def small(self, *, danger: bool = False) -> QTextCharFormat:
        """The format of the small lines: actions, markers, tool lines."""
        fmt = QTextCharFormat()
        palette = self._palette()
        fmt.setForeground(theme.danger(palette) if danger else theme.muted(palette))
        fmt.setFontPointSize(max(7.0, self.document.defaultFont().pointSizeF() * 0.85))
        return fmt

    def link(self, base: QTextCharFormat, href: str) -> QTextCharFormat:
        """`base` as a link to `href`."""
        fmt = QTextCharFormat(base)
        fmt.setAnchor(True)
        fmt.setAnchorHref(href)
        fmt.setForeground(self._palette().color(QPalette.ColorRole.Link))
        return fmt

    def header(
        self, cursor: QTextCursor, who: str, message_id: str, siblings: list[Message]
    ) -> None:
        """Who speaks, and "< 2/3 >" when the message has siblings."""
        fmt = QTextBlockFormat()
        fmt.setTopMargin(14)
        self.new_block(cursor, fmt)
        char = QTextCharFormat()
        char.setFontWeight(QFont.Weight.Bold)
        char.setForeground(theme.accent(self._palette()))
        cursor.insertText(who, char)
        if len(siblings) < 2:
            return
        ids = [m.id for m in siblings]
        index = ids.index(message_id)
        small = self.small()
        cursor.insertText("   ", small)
        previous = f"branch:{ids[index - 1]}" if index > 0 else None
        following = f"branch:{ids[index + 1]}" if index + 1 < len(ids) else None
        cursor.insertText("<", self.link(small, previous) if previous else small)
        cursor.insertText(f" {index + 1}/{len(ids)} ", small)
        cursor.insertText(">", self.link(small, following) if following else small)

    def user_text(self, cursor: QTextCursor, text: str) -> None:
        """The user's words, in a tinted frame."""
        frame = QTextFrameFormat()
        frame.setBackground(self._palette().color(QPalette.ColorRole.AlternateBase))
        frame.setPadding(8)
        frame.setTopMargin(4)
        frame.setBorder(0)
        inserted = cursor.insertFrame(frame)
        words = QTextBlockFormat()
        words.setProperty(MESSAGE_TEXT, True)
        cursor.setBlockFormat(words)
        cursor.insertText(text, QTextCharFormat())
        cursor.setPosition(inserted.lastPosition() + 1)  # the block after the frame

    def attachment_chips(
        self, cursor: QTextCursor, files: Sequence[tuple[str, str | None]]
    ) -> None:
        """The files a user message carries, as chips (a click opens one, if it has a link)."""
        if not files:
            return
        fmt = QTextBlockFormat()
        fmt.setTopMargin(4)
        self.new_block(cursor, fmt)
        small = self.small()
        cursor.insertText("Attached: ", small)
        chip = QTextCharFormat(small)
        chip.setBackground(self._palette().color(QPalette.ColorRole.AlternateBase))
        for index, (name, href) in enumerate(files):
            if index:
                cursor.insertText("  ", small)
            text = f" {FILE_MARK} {shorten(name, ATTACHMENT_CHARS)} "
            cursor.insertText(text, self.link(chip, href) if href else chip)

    def actions(self, cursor: QTextCursor, actions: list[tuple[str, str]]) -> None:
        """A line of (label, href) links."""
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        self.new_block(cursor, fmt)
        small = self.small()
        for index, (label, href) in enumerate(actions):
            if index:
                cursor.insertText("  ·  ", small)
            cursor.insertText(label, self.link(small, href))

    def marker(self, cursor: QTextCursor, text: str, *, retry: str | None = None) -> None:
        """How a reply ended (an error starts with ⚠); `retry`: the user message whose reply
        a Retry link asks again."""
        fmt = QTextBlockFormat()
        fmt.setTopMargin(4)
        self.new_block(cursor, fmt)
        style = self.small(danger=text.startswith(ERROR_MARK))
        style.setFontItalic(not text.startswith(ERROR_MARK))
        cursor.insertText(text, style)
        if retry is not None:
            cursor.insertText("  ", style)
            cursor.insertText("Retry", self.link(self.small(), f"retry:{retry}"))

    def _chips(self, cursor: QTextCursor, memory_ids: tuple[str, ...]) -> None:
        fmt = QTextBlockFormat()
        fmt.setTopMargin(6)
        self.new_block(cursor, fmt)
        small = self.small()
        cursor.insertText("Memories used: ", small)
        chip = QTextCharFormat(small)
        chip.setBackground(self._palette().color(QPalette.ColorRole.AlternateBase))
        for index, memory_id in enumerate(memory_ids):
            text = self._memory_text(memory_id)
            label = "forgotten memory" if text is None else shorten(text, CHIP_CHARS)
            if index:
                cursor.insertText("  ", small)
            cursor.insertText(f" ◆ {label} ", self.link(chip, f"memory:{memory_id}"))

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
        self.new_block(cursor)
        small = self.small()
        cursor.insertText("Files read: ", small)
        chip = QTextCharFormat(small)
        chip.setBackground(self._palette().color(QPalette.ColorRole.AlternateBase))
        for index, citation in enumerate(dict.fromkeys(cited)):
            if index:
                cursor.insertText("  ", small)
            self.citations.append(citation)
            href = f"cite:{len(self.citations) - 1}"
            text = f" {FILE_MARK} {shorten(citation.label(), CHIP_CHARS)} "
            cursor.insertText(text, self.link(chip, href))

    def turn_end(self, user_message_id: str) -> int | None:
        """Where the turn that a user message began ends (where the next one begins, or the
        conversation's end); None if that message is not shown."""
        start = self.positions.get(user_message_id)
        if start is None or user_message_id not in self.user_ids:
            return None
        later = [self.positions[u] for u in self.user_ids if self.positions.get(u, -1) > start]
        return min(later, default=self.content_end().position())

    def add_line(self, text: str, *links: tuple[str, str]) -> None:
        """Append a small muted line of plain `text` under the conversation, with (label,
        href) links after it, separated by " · "."""
        cursor = self.end()
        self.lines_chars += self._line(cursor, text, links)

    def insert_line(self, at: int, text: str, *links: tuple[str, str]) -> int:
        """Insert such a line in the conversation at `at` (the end of a turn); returns how many
        characters it took (the marks after it have moved that far)."""
        cursor = QTextCursor(self.document)
        cursor.setPosition(at)
        size = self._line(cursor, text, links)
        self.shift_positions(at - 1, size)  # a turn that began at `at` begins after the line
        return size

    def _line(self, cursor: QTextCursor, text: str, links: Sequence[tuple[str, str]]) -> int:
        start = cursor.position()
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        fmt.setBottomMargin(2)
        cursor.insertBlock(fmt, QTextCharFormat())  # never the conversation's last block
        small = self.small()
        cursor.insertText(text, small)
        for index, (label, href) in enumerate(links):
            if index:
                cursor.insertText(" · ", small)
            anchor = self.link(small, href)
            anchor.setFontUnderline(True)
            cursor.insertText(label, anchor)
        cursor.setCharFormat(QTextCharFormat())
        return cursor.position() - start


def repeated_calls(group: Sequence[Message]) -> dict[str, int]:
    """The tool calls of a turn made more than once (same name and arguments): the first
    call's id with how often it was made, each later one's id with 0."""
    first: dict[tuple[str, str], str] = {}
    times: dict[str, int] = {}
    for message in group:
        for call in message.tool_calls:
            function = call.get("function", {})
            key = call_key(str(function.get("name", "")), str(function.get("arguments", "")))
            call_id = str(call.get("id", ""))
            if key in first:
                times[first[key]] = times.get(first[key], 1) + 1
                times[call_id] = 0
            else:
                first[key] = call_id
    return times


def _times_made(conversation: Conversation, call_id: str) -> int:
    """How often the turn of `call_id` made that call (0: it is a repeat of an earlier one)."""
    for group in turns(conversation.branch()):
        if any(c.get("id") == call_id for m in group for c in m.tool_calls):
            return repeated_calls(group).get(call_id, 1)
    return 1


def _saved_tool_call(
    conversation: Conversation, call_id: str
) -> tuple[str, str, str | None, bool] | None:
    """A saved tool call's name, arguments, result (None: none yet) and whether it ran."""
    result = None
    for message in reversed(conversation.messages):
        if message.role == "tool" and message.tool_call_id == call_id:
            result = message
        for call in message.tool_calls:
            if call.get("id") == call_id:
                function = call.get("function", {})
                name = str(function.get("name", ""))
                arguments = str(function.get("arguments", ""))
                ok = result is None or result.ok
                return name, arguments, None if result is None else result.content, ok
    return None


def _pretty_json(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments
