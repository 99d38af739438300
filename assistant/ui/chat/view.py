"""The chat pane: the chosen branch of a conversation as one rich-text document.

The document is written by `ChatDocument` (`document.py`); a reply streams in through
`ReplyInProgress` (`reply.py`). This view shows them: it scrolls, follows the links under
each message (copy, edit, regenerate, another branch, a tool line's details), and offers them
in its context menu.

A long conversation opens at its last turns; earlier ones are rendered as the user scrolls up
to them (or finds, or opens a message among them). Lines about the conversation (`add_line`)
sit under it, and a reply streams in above them.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QFocusEvent,
    QGuiApplication,
    QShowEvent,
    QTextBlock,
    QTextBlockFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from assistant.knowledge import Citation
from assistant.memory import AttachedFile, Conversation, Message
from assistant.ui.chat.code_scroll import CodeScroll
from assistant.ui.chat.document import (
    ERROR_MARK,
    KEEP,
    REVIEW_LINK,
    ChatDocument,
    Versions,
    turns,
)
from assistant.ui.chat.markdown import CODE_LINK, MarkdownRenderer, plain_text
from assistant.ui.chat.reply import ReplyInProgress
from assistant.ui.chat.thumbnails import ImageLookup
from assistant.ui.chat.tool_summary import MemoryLookup
from assistant.ui.worker import ToolImage

TAIL_GROUPS = 40  # the turns (a message, or a reply with its tools) a conversation opens with
EARLIER_GROUPS = 60  # and how many more each scroll to the top renders
JUMP_MARGIN = 12  # px above a message opened at its start


class ChatView(QTextBrowser):
    """Read-only view of a conversation that can also stream a reply into itself."""

    memory_clicked = Signal(str)
    citation_clicked = Signal(object)  # a Citation: a place in a file a reply read
    attachment_clicked = Signal(object)  # an AttachedFile of the conversation shown
    remember_requested = Signal(object, object)  # a Citation or AttachedFile, the message id
    review_requested = Signal()  # a proposed memory's chip: show the Review tab
    retry_requested = Signal(str)  # the user message to answer again
    regenerate_requested = Signal(str)  # the id of the user message to answer again
    edit_requested = Signal(str, str)  # message id, its text
    branch_requested = Signal(str)  # a sibling message to show instead
    copied = Signal(str)  # what was copied, for the status bar
    rendered = Signal(str)  # a conversation was drawn anew from its saved messages
    confirmation_answered = Signal(str, str)  # tool call id, "once" | "always" | "deny"
    tools_on_requested = Signal(str)  # a model whose tools "auto" tool use turned off
    acted = Signal()  # a link that answers or asks again was followed: typing goes on elsewhere

    def __init__(
        self,
        memory_text: MemoryLookup,
        parent: QWidget | None = None,
        *,
        tool_image: ImageLookup | None = None,
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
        self._doc = ChatDocument(
            self.document(),
            self.palette,
            memory_text,
            MarkdownRenderer(self, self.palette),
            tool_image,
        )
        self._reply = ReplyInProgress(self._doc)
        self._asking: dict[str, int] = {}  # tool call id -> where its question starts
        self._conversation: Conversation | None = None
        self._shown_groups = 0  # the conversation's turns rendered (the newest ones)
        self._failures: dict[str, str] = {}  # user message id -> why its reply failed (this run)
        self._earlier: list[list[Message]] = []  # the turns not rendered yet, oldest first
        self._versions: Versions = {}
        self._pinned = True  # to the end: it stays in view as the document grows or is laid out
        self._wanted: int | None = None  # a scroll position waiting for the layout to reach it
        self._marked = False  # a message opened is highlighted (selected)
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
        self._reply.reset()
        self._asking.clear()
        self.clear()
        self._doc.clear()
        self._earlier = []
        self._wanted = None
        self._marked = False
        if conversation is None:
            return
        cursor = self._doc.end()
        cursor.beginEditBlock()
        groups = turns(conversation.branch())
        versions = self._versions = conversation.versions()
        # Drawn again (a theme, the same conversation): as many turns as the user had shown.
        tail = max(TAIL_GROUPS, self._shown_groups) if again else TAIL_GROUPS
        self._earlier = groups[: max(0, len(groups) - tail)]
        self._shown_groups = len(groups) - len(self._earlier)
        shown = groups[len(self._earlier) :]
        for index, group in enumerate(shown):
            after = shown[index + 1] if index + 1 < len(shown) else None
            self._doc.turn(cursor, versions, group)
            unanswered = group[0].role == "user" and (after is None or after[0].role == "user")
            if unanswered and not (after is None and replying):
                noted = conversation.failures.get(group[0].id, "No reply yet.")
                why = self._failures.get(group[0].id, noted)
                self._doc.marker(cursor, f"{ERROR_MARK} {why}", retry=group[0].id)
        cursor.endEditBlock()
        self._scroll_to_end()
        self.rendered.emit(conversation.id)

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
        shown, self._doc.positions = self._doc.positions, {}
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        first = self.document().begin()
        cursor.insertBlock(first.blockFormat(), first.charFormat())  # what is shown moves down
        cursor.setPosition(0)
        for group in chunk:
            self._doc.turn(cursor, self._versions, group)
        cursor.endEditBlock()
        delta = self.document().characterCount() - size
        self._doc.positions.update({key: at + delta for key, at in shown.items()})
        self._reply.shift(delta)
        top = self.document().findBlock(top_at + delta)
        self._wanted = round(layout.blockBoundingRect(top).top() - offset)
        self._on_range(bar.minimum(), bar.maximum())  # or once Qt has laid out that far

    def load_all(self) -> None:
        """Render every earlier turn (to find in the whole conversation)."""
        self.load_earlier(len(self._earlier))

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
        if message_id not in self._doc.positions:
            index = next(
                (i for i, group in enumerate(self._earlier) for m in group if m.id == message_id),
                None,
            )
            if index is not None:
                self.load_earlier(len(self._earlier) - index)
        position = self._doc.positions.get(message_id)
        if position is None:
            return False
        cursor = self.textCursor()
        cursor.setPosition(position)
        cursor.movePosition(QTextCursor.MoveOperation.NextBlock)  # the header ("You")
        header = cursor.block()
        cursor.movePosition(QTextCursor.MoveOperation.NextBlock, KEEP)  # and the first line
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, KEEP)
        self.setTextCursor(cursor)  # the highlight, until the next action (`_unmark`)
        self._marked = True
        self._scroll_to_block(header)
        return True

    def _scroll_to_block(self, block: QTextBlock) -> None:
        """Show `block` at the top of the view, a margin above it (or as near as the end of
        the conversation lets it come)."""
        layout = self.document().documentLayout()
        top = layout.blockBoundingRect(block).top()
        below, page = block, top + self.viewport().height()
        while below.isValid() and layout.blockBoundingRect(below).bottom() < page:
            below = below.next()  # laid out a page beyond it, the bar can reach it
        bar = self.verticalScrollBar()
        self._pinned = False
        self._wanted = max(0, round(top) - JUMP_MARGIN)
        if not below.isValid():  # near the end: as far as it goes
            self._wanted = min(self._wanted, bar.maximum())
        self._on_range(bar.minimum(), bar.maximum())

    def _unmark(self) -> None:
        """Take away the highlight of a message opened (a new message or reply is shown)."""
        if self._marked:
            self._marked = False
            cursor = self.textCursor()
            cursor.clearSelection()
            self.setTextCursor(cursor)

    def message_at(self, position: int) -> str | None:
        """The id of the message (or whole reply) shown at a document position."""
        positions = self._doc.positions
        before = [(positions[mid], mid) for mid in self._doc.texts if mid in positions]
        best = max(((p, mid) for p, mid in before if p <= position), default=None)
        return best[1] if best else None

    # -- the reply being written ------------------------------------------------------------------

    def add_user_message(self, text: str, files: Sequence[str] = ()) -> None:
        """Show the user's message at once (with the labels of the files it carries, and its
        actions), then wait for the reply."""
        self._unmark()
        self._reply.add_user_message(text, files)
        self._scroll_to_end()

    def start_reply(self, *, resumed: bool = False) -> None:
        """Show the assistant's header; the reply streams in below it.

        `resumed`: the reply began while another conversation was shown (its start is not
        here), so the whole conversation is shown again from the store once it is saved.
        """
        self._unmark()
        self._reply.start(resumed=resumed)
        self._scroll_to_end()

    def append_delta(self, text: str) -> None:
        """Append a streamed piece of the reply; it is rendered as Markdown at once."""
        at_bottom = self._at_bottom()
        self._reply.append(text)
        if at_bottom:
            self._scroll_to_end()

    def start_tool_call(self, call_id: str, name: str, arguments: str) -> None:
        """Show a tool call as a compact line, marked as running."""
        self._reply.start_tool_call(call_id, name, arguments)
        self._scroll_to_end()

    def finish_tool_call(
        self, call_id: str, result: str, ok: bool, images: Sequence[ToolImage] = ()
    ) -> None:
        """Replace the running tool line with its result and the thumbnails of its images."""
        self._reply.finish_tool_call(call_id, result, ok, images)

    def ask_to_run(self, call_id: str, question: str, choices: Sequence[tuple[str, str]]) -> None:
        """Under a running tool line: `question` and a link per (label, choice); the first
        click emits `confirmation_answered` and leaves the label in place of the question."""
        doc = self._doc
        cursor = doc.content_end()
        self._asking[call_id] = cursor.position()
        fmt = QTextBlockFormat()
        fmt.setTopMargin(2)
        fmt.setBottomMargin(4)
        doc.new_block(cursor, fmt)
        cursor.insertText(f"{question}  ", doc.small(danger=True))
        for index, (label, choice) in enumerate(choices):
            if index:
                cursor.insertText(" · ", doc.small())
            anchor = doc.link(doc.small(), f"confirm:{choice}:{call_id}")
            anchor.setFontUnderline(True)
            cursor.insertText(label, anchor)
        self._scroll_to_end()

    def _answer(self, value: str) -> None:
        choice, _, call_id = value.partition(":")
        said = {"once": "Allowed once", "always": "Always allowed", "deny": "Not allowed"}
        if self._settle(call_id, said.get(choice, choice)):
            self.confirmation_answered.emit(call_id, choice)

    def _settle(self, call_id: str, label: str) -> bool:
        """Put `label` in place of the question about `call_id`; False if none is asked."""
        start = self._asking.pop(call_id, None)
        if start is None:  # answered already
            return False
        cursor = self._doc.content_end()
        cursor.setPosition(start, KEEP)
        cursor.removeSelectedText()
        self._doc.new_block(cursor)
        cursor.insertText(label, self._doc.small())
        return True

    def finish_reply(self, conversation: Conversation, error: str | None = None) -> None:
        """The turn is over (done, stopped or failed): show the reply as saved.

        `error` is the failure to show in place of the saved marker.
        """
        at_bottom = self._at_bottom()
        self._conversation = conversation
        branch = conversation.branch()
        if error is not None and branch and branch[-1].role == "user":  # shown again on return
            self._failures[branch[-1].id] = error
        for call_id in list(self._asking):  # the reply ended (stopped) before an answer
            self._settle(call_id, "Not answered")
        if not self._reply.finish(conversation, error):  # not all of this turn is shown
            self.show_conversation(conversation)
            return
        self._doc.collapse_repeats(conversation)  # a call made again: one line, counted
        if at_bottom:
            self._scroll_to_end()

    def add_line(self, text: str, *links: tuple[str, str]) -> None:
        """Append a small muted line of plain `text` under the conversation, with (label, href)
        links after it (a change to memory, with Undo; a suggestion, with Accept · Dismiss). A
        reply being written goes on above the lines."""
        at_bottom = self._at_bottom()
        self._doc.add_line(text, *links)
        if at_bottom:
            self._scroll_to_end()

    def add_turn_line(self, turn_id: str | None, text: str, *links: tuple[str, str]) -> None:
        """Like `add_line`, but under the turn that user message `turn_id` began, with the
        other lines of that turn. The last turn's lines (and those of a turn not shown) sit
        under the conversation, below a reply being written, until the next turn begins. A
        turn on another branch than the one shown has its lines shown with that branch."""
        if turn_id is not None and self._off_branch(turn_id):
            return
        at = None if turn_id is None else self._doc.turn_end(turn_id)
        if at is None or at >= self._doc.content_end().position():
            self.add_line(text, *links)
            return
        at_bottom = self._at_bottom()
        before_reply = self._reply.begins_after(at)
        size = self._doc.insert_line(at, text, *links)
        if before_reply:  # a turn before the one being answered: its marks move down
            self._reply.shift(size)
            self._asking = {call: start + size for call, start in self._asking.items()}
        if at_bottom:
            self._scroll_to_end()

    def _off_branch(self, message_id: str) -> bool:
        """Whether `message_id` is a message of the conversation shown, not on its branch."""
        conversation = self._conversation
        if conversation is None or all(m.id != message_id for m in conversation.messages):
            return False
        return all(m.id != message_id for m in conversation.branch())

    # -- copying ---------------------------------------------------------------------------------

    def copy_message(self, message_id: str, *, markdown: bool = True) -> None:
        """Put a message on the clipboard, as Markdown or as plain text."""
        text = self._doc.texts.get(self._doc.aliases.get(message_id, message_id))
        if text is None:
            return
        QGuiApplication.clipboard().setText(text if markdown else plain_text(text))
        self.copied.emit("Message copied" if markdown else "Message copied as text")

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        """The standard menu, plus the actions of the message under the mouse."""
        menu = self.createStandardContextMenu(event.pos())
        message_id = self.message_at(self.cursorForPosition(event.pos()).position())
        conversation = self._conversation
        file = self._file_at(self.anchorAt(event.pos()))
        if file is not None:
            menu.addSeparator()
            menu.addAction("Remember This…", lambda: self.remember_requested.emit(file, message_id))
        if message_id is not None and conversation is not None:
            message = next((m for m in conversation.messages if m.id == message_id), None)
            menu.addSeparator()
            menu.addAction("Copy Message", lambda: self.copy_message(message_id))
            menu.addAction(
                "Copy message as text", lambda: self.copy_message(message_id, markdown=False)
            )
            if message is not None and not self._reply.active:
                if message.role == "user":
                    menu.addAction(
                        "Edit and resend…",
                        lambda: self.edit_requested.emit(message.id, message.content),
                    )
                elif message.parent_id is not None:
                    parent = message.parent_id
                    menu.addAction("Regenerate", lambda: self.regenerate_requested.emit(parent))
        menu.exec(event.globalPos())

    def _file_at(self, anchor: str) -> Citation | AttachedFile | None:
        """The place in a file, or the attached file, that a chip's link names."""
        kind, _, value = anchor.partition(":")
        citations = self._doc.citations
        if kind == "cite" and value.isdigit() and int(value) < len(citations):
            return citations[int(value)]
        if kind == "attached" and self._conversation is not None:
            return self._conversation.attachment(value)
        return None

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        """A new palette (theme) or font (text size): render the conversation again in it."""
        super().changeEvent(event)
        redraw = (QEvent.Type.PaletteChange, QEvent.Type.FontChange)
        if event.type() in redraw and not self._reply.active:
            position = self.verticalScrollBar().value()
            self.show_conversation(self._conversation)
            self.verticalScrollBar().setValue(position)

    # -- scrolling and links ----------------------------------------------------------------------

    def _at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4

    def _scroll_to_end(self) -> None:
        bar = self.verticalScrollBar()
        self._wanted = None  # the end wins over a place still waiting for the layout
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

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        """Reached by Tab: on the last message's first link (Shift+Tab: the last link), not
        at the top of a long conversation; with no link there, Tab goes on past the chat."""
        super().focusInEvent(event)
        reason = event.reason()
        if reason not in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason):
            return
        forward = reason == Qt.FocusReason.TabFocusReason
        start = self._last_message_start() if forward else self.document().characterCount()
        link = self._doc.link_near(start, forward=forward)
        if link is None:
            self.focusNextPrevChild(forward)
            return
        self.setTextCursor(link)
        self.ensureCursorVisible()

    def _last_message_start(self) -> int:
        """Where the last message (or whole reply) shown begins; 0 if none."""
        shown = [at for key, at in self._doc.positions.items() if key in self._doc.texts]
        return max(shown, default=0)

    def _on_anchor(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        code = self._doc.renderer.code
        citations = self._doc.citations
        if kind == "memory":
            self.memory_clicked.emit(value)
        elif kind == "cite" and value.isdigit() and int(value) < len(citations):
            self.citation_clicked.emit(citations[int(value)])
        elif kind == "attached" and (found := self._file_at(url.toString())) is not None:
            self.attachment_clicked.emit(found)
        elif kind == "copy":
            self.copy_message(value)
        elif kind == "copytext":
            self.copy_message(value, markdown=False)
        elif kind == "confirm":  # while the reply waits for it
            self._answer(value)
            self.acted.emit()
        elif kind == CODE_LINK and value.isdigit() and int(value) < len(code):
            QGuiApplication.clipboard().setText(code[int(value)])
            self.copied.emit("Code copied")
        elif f"{kind}:" == REVIEW_LINK:
            self.review_requested.emit()
        elif kind == "tools-on":
            self.tools_on_requested.emit(value)
        elif self._reply.active:
            return  # the rest changes the conversation, which waits for the reply
        elif kind == "retry":
            self.retry_requested.emit(self._doc.aliases.get(value, value))
            self.acted.emit()
        elif kind == "regenerate":
            self.regenerate_requested.emit(value)
            self.acted.emit()
        elif kind == "edit":
            message_id = self._doc.aliases.get(value, value)
            if message_id in self._doc.texts and not message_id.startswith("unsaved"):
                self.edit_requested.emit(message_id, self._doc.texts[message_id])
        elif kind == "branch":
            self.branch_requested.emit(value)
        elif kind == "tool" and self._conversation is not None:
            position = self.verticalScrollBar().value()
            if self._doc.toggle_tool_line(self._conversation, value):
                self.verticalScrollBar().setValue(position)
