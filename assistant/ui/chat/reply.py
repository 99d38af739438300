"""The reply being written in the chat: the user's message shown at once, the reply streaming
in as Markdown (`StreamingMarkdown`) with its tool lines, then the saved reply's frame.

Once saved, the streamed body stays as rendered; the headers above it and the line under it
come from the saved messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QTextCursor

from assistant.memory import Conversation
from assistant.ui.chat.document import ERROR_MARK, KEEP, ChatDocument, turns
from assistant.ui.chat.stream import StreamingMarkdown
from assistant.ui.worker import ToolImage


class ReplyInProgress:
    """Where the turn being answered begins in `doc`, and its reply as it streams."""

    def __init__(self, doc: ChatDocument) -> None:
        self._doc = doc
        self.active = False  # a reply is streaming in
        self._stream: StreamingMarkdown | None = None
        self._start: int | None = None  # where the turn being answered begins
        self._body_start = 0  # and where its reply's body begins, after the header
        self._head_start = 0  # and where that header begins
        self._shows_user = False  # whether the turn shows the user's message
        self._resumed = False  # whether it began while another conversation was shown
        self._tool_start: dict[str, int] = {}
        self._tool_args: dict[str, tuple[str, str]] = {}
        self._unsaved = 0  # how many messages were shown before they were saved

    def reset(self) -> None:
        """The document was drawn anew: no reply is shown in it."""
        self.active = False
        self._stream = None
        self._start = None

    def add_user_message(self, text: str, files: Sequence[str] = ()) -> None:
        """Show the user's message (with the labels of the files it carries, and its actions),
        then the reply's header."""
        doc = self._doc
        doc.lines_chars = 0  # the lines under the conversation stay with the turn before
        cursor = doc.content_end()
        self._start = cursor.position()
        self._shows_user = True
        self._unsaved += 1
        key = f"unsaved{self._unsaved}"  # until the saved message gives its id
        doc.positions[key] = cursor.position()
        doc.texts[key] = text
        doc.user_ids.add(key)
        doc.header(cursor, "You", "", [])
        doc.user_text(cursor, text)
        doc.attachment_chips(cursor, [(name, None) for name in files])
        doc.actions(cursor, [("Copy", f"copy:{key}"), ("Edit", f"edit:{key}")])
        self.start()

    def start(self, *, resumed: bool = False) -> None:
        """Show the assistant's header; the reply streams in below it (see `ChatView`)."""
        self._resumed = resumed
        cursor = self._doc.content_end()
        if self._start is None:
            self._start = cursor.position()
            self._shows_user = False
        self._head_start = cursor.position()
        self._doc.header(cursor, "Assistant", "", [])
        self._body_start = cursor.position()
        self.active = True

    def append(self, text: str) -> None:
        """Add a streamed piece of the reply, rendered as Markdown at once."""
        if self._stream is None:
            self._stream = StreamingMarkdown(self._doc.content_end, self._doc.renderer)
        self._stream.append(text)

    def start_tool_call(self, call_id: str, name: str, arguments: str) -> None:
        """Show a tool call as a compact line, marked as running."""
        if self._stream is not None:
            self._stream.close()
        self._stream = None
        cursor = self._doc.content_end()
        self._tool_start[call_id] = cursor.position()
        self._tool_args[call_id] = (name, arguments)
        self._doc.tool_line(cursor, call_id, name, arguments, None, ok=True)

    def finish_tool_call(
        self, call_id: str, result: str, ok: bool, images: Sequence[ToolImage] = ()
    ) -> None:
        """Replace the running tool line with its result and images (the last thing shown)."""
        start = self._tool_start.pop(call_id, None)
        name, arguments = self._tool_args.pop(call_id, ("", ""))
        if start is None:
            return
        cursor = self._doc.content_end()
        cursor.setPosition(start, KEEP)
        cursor.removeSelectedText()
        self._doc.tool_line(cursor, call_id, name, arguments, result, ok=ok, images=images)

    def begins_after(self, position: int) -> bool:
        """Whether the turn being answered begins at or after `position`."""
        return self.active and self._start is not None and self._start >= position

    def shift(self, delta: int) -> None:
        """`delta` characters were inserted before everything shown: move the marks along."""
        if self._start is not None:
            self._start += delta
        self._head_start += delta
        self._body_start += delta
        self._tool_start = {call: at + delta for call, at in self._tool_start.items()}
        if self._stream is not None:
            self._stream.shift(delta)

    def finish(self, conversation: Conversation, error: str | None = None) -> bool:
        """The turn is over: frame the streamed body with the saved messages' header, marker,
        chips and actions. False if not all of the turn is shown here (draw it anew).

        `error` is the failure to show in place of the saved marker.
        """
        doc = self._doc
        if self._stream is not None:
            self._stream.close()
        self._stream = None
        self.active = False
        self._tool_start.clear()
        self._tool_args.clear()
        groups = turns(conversation.branch())
        answered = bool(groups) and groups[-1][0].role != "user"
        start, self._start = self._start, None
        if start is None or self._resumed:
            return False
        versions = conversation.versions()
        user = groups[-2 if answered else -1][0] if self._shows_user else None
        key = f"unsaved{self._unsaved}"
        cursor = QTextCursor(doc.document)
        cursor.beginEditBlock()
        if (
            answered
            and all(len(versions.get(m.id, [])) < 2 for m in (groups[-1][0], user) if m)
            and (user is None or not user.attachments)  # their chips become links
        ):  # nothing above the body changes: leave it (and the body's layout) alone
            if user is not None:
                doc.aliases[key] = user.id
                doc.texts[user.id] = doc.texts.pop(key, user.content)
                doc.positions[user.id] = doc.positions.pop(key, start)
                doc.user_ids.discard(key)
                doc.user_ids.add(user.id)
            doc.positions[groups[-1][0].id] = self._head_start
            doc.reply_tail(doc.content_end(), groups[-1], error)
            cursor.endEditBlock()
            return True
        cursor.setPosition(start)
        cursor.setPosition(self._body_start if answered else doc.content_end().position(), KEEP)
        cursor.removeSelectedText()
        doc.texts.pop(key, None)
        doc.positions.pop(key, None)
        doc.user_ids.discard(key)
        if user is not None:
            doc.user_message(cursor, versions, user)
        if answered:
            doc.reply_head(cursor, versions, groups[-1][0])
            doc.reply_tail(doc.content_end(), groups[-1], error)
        else:
            why = f"{ERROR_MARK} {error or 'No reply yet.'}"
            doc.marker(cursor, why, retry=groups[-1][0].id if groups else None)
        cursor.endEditBlock()
        return True
