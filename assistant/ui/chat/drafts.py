"""The unsent message of each conversation: back in the message box when the user comes back
to the conversation, also after a restart (its text; the files attached to it, in this run).

The box's text is kept per conversation as it is typed and saved a moment after typing stops,
off the GUI thread, one write at a time (`assistant/drafts.py` writes the file); at quit it is
saved at once. A chat not started yet (empty, it is not kept) has one draft of its own, and a
temporary chat keeps none.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication

from assistant.drafts import NEW_CHAT, read_drafts, write_drafts
from assistant.errors import AssistantError
from assistant.memory import Conversation
from assistant.ui.chat.composer import Composer
from assistant.ui.debounce import Debounced
from assistant.ui.jobs import run_job

log = logging.getLogger(__name__)

SAVE_AFTER_MS = 800  # of no typing
_NOTHING_SHOWN = "\0"  # the key before the first conversation is shown


def draft_key(conversation: Conversation | None) -> str | None:
    """Whose draft the box holds: the conversation's id, `NEW_CHAT`, or None (not kept)."""
    if conversation is not None and conversation.temporary:
        return None
    if conversation is None or not (conversation.messages or conversation.unread):
        return NEW_CHAT
    return conversation.id


class Drafts(QObject):
    """Keeps the text of `composer` per conversation in `path`."""

    notice = Signal(str)  # a problem with the file, for the status bar

    def __init__(self, path: Path, composer: Composer, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._path: Path | None = path
        self._composer = composer
        try:
            self._texts, warning = read_drafts(path)
        except AssistantError as exc:  # kept as it is; this run's drafts are not saved over it
            self._texts, warning, self._path = {}, str(exc), None
        self._on_disk = dict(self._texts)  # as the file has them
        self._warning = warning
        self._files: dict[str, list[Path]] = {}  # files attached and not sent, this run
        self._key: str | None = _NOTHING_SHOWN
        self._shown: str | None = None  # the id of the conversation shown
        self._lock = threading.Lock()  # one write at a time, the newest last
        self._sequence = 0  # of the snapshots taken
        self._written = 0  # the newest snapshot in the file
        self._restoring = False
        self._saving = False  # a write is running; another follows if something changed
        self._dirty = False
        self._save_later = Debounced(SAVE_AFTER_MS, self._save, self)
        composer.input.textChanged.connect(self._on_typed)

    def take_warning(self) -> str | None:
        """What was wrong with the file when it was read (once)."""
        warning, self._warning = self._warning, None
        return warning

    def has_new_chat_draft(self) -> bool:
        """Whether a message was begun in a chat not started yet."""
        return bool(self._texts.get(NEW_CHAT))

    def text(self, conversation_id: str) -> str:
        """The draft of a conversation ("" if none)."""
        return self._texts.get(conversation_id, "")

    def keep_lost(self, conversation: Conversation, sent: str) -> str:
        """Keep what was written in a new chat whose file could not be made (`sent`: a message
        sent in it): in the draft of the next new chat, before what is there; a temporary
        chat's, which is never saved, on the clipboard. Where it is, in words ("": nothing)."""
        if conversation.temporary:
            typed = self._composer.input.toPlainText() if self._shown == conversation.id else ""
            text = _joined(sent, typed)
            if text:
                QGuiApplication.clipboard().setText(text)
            return "on the clipboard (a temporary chat keeps no draft)" if text else ""
        if self._key == NEW_CHAT:  # a new chat's box is shown: the text goes back into it
            box = self._composer.input
            box.setPlainText(_joined(sent, box.toPlainText()))  # kept as typed text is
        elif sent:
            self._texts[NEW_CHAT] = _joined(sent, self._texts.get(NEW_CHAT, ""))
            self._dirty = True
            self._save_later.trigger()
        return "kept for your next new chat" if self.has_new_chat_draft() else ""

    def give_back(self, conversation: Conversation, text: str, files: list[Path]) -> None:
        """A message sent in `conversation` that could not be saved: back in its box (before
        what was typed since), or in its draft if another conversation is shown."""
        key = draft_key(conversation)
        if conversation.id == self._shown:
            box = self._composer.input
            box.setPlainText(_joined(text, box.toPlainText()))  # kept as typed text is
            box.moveCursor(box.textCursor().MoveOperation.End)
            self._composer.attachments.add(files)
        elif key is None:  # a temporary chat left: it keeps no draft
            QGuiApplication.clipboard().setText(text)
        else:
            self._texts[key] = _joined(text, self._texts.get(key, ""))
            self._files[key] = [*files, *self._files.get(key, [])]
            self._dirty = True
            self._save_later.trigger()

    def show(self, conversation: Conversation | None) -> None:
        """The conversation shown changed (or was written): put its draft in the box if it is
        another conversation than before."""
        key = draft_key(conversation)
        shown = None if conversation is None else conversation.id
        same, self._shown = shown == self._shown, shown
        if key == self._key:
            return
        if same and self._key == NEW_CHAT:
            # The new chat was just started (its first message saved): what is in the box
            # now belongs to it.
            self._texts.pop(NEW_CHAT, None)
            self._key = key
            self._on_typed()
            return
        first, left, self._key = self._key == _NOTHING_SHOWN, self._key, key
        if first and self._composer.input.toPlainText().strip():
            self._on_typed()  # typed while the data was opening: it stays, as this one's draft
            return
        if left != _NOTHING_SHOWN:  # the files attached stay with their conversation
            files = self._composer.attachments.take_new()
            if files and left is not None:  # (a temporary chat's go with it)
                self._files[left] = files
        self._restoring = True
        try:
            self._composer.input.setPlainText("" if key is None else self._texts.get(key, ""))
        finally:
            self._restoring = False
        self._composer.attachments.add(self._files.pop(key, []) if key is not None else [])
        cursor = self._composer.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self._composer.input.setTextCursor(cursor)

    def _on_typed(self) -> None:
        if self._restoring or self._key is None or self._composer.editing is not None:
            return
        text = self._composer.input.toPlainText()
        if text.strip():
            self._texts[self._key] = text
        elif self._texts.pop(self._key, None) is None:
            return
        self._dirty = True
        self._save_later.trigger()

    def _save(self) -> None:
        path = self._path
        if path is None or self._saving or not self._dirty:
            return
        self._saving, self._dirty = True, False
        self._sequence += 1
        sequence, snapshot = self._sequence, dict(self._texts)
        run_job(
            lambda _progress: self._write(path, sequence, snapshot),
            on_done=lambda _result: self._saved(snapshot),
            on_error=lambda message: self._failed(snapshot, message),
        )

    def _saved(self, snapshot: dict[str, str]) -> None:
        self._saving = False
        self._on_disk = snapshot
        self._save()  # what changed while it was written

    def _failed(self, snapshot: dict[str, str], message: str) -> None:
        self._saving = False
        self._dirty = True  # tried again at the next change, and at quit
        if any(self._on_disk.get(key) != text for key, text in snapshot.items()):
            self.notice.emit(f"Your unsent message was not saved: {message}")
        else:  # only a sent message's draft was to go: nothing typed is at risk
            log.warning("Could not update the drafts file: %s", message)

    def save_now(self) -> None:
        """At quit: write what changed since the last write, here and now."""
        self._save_later.cancel()
        if self._path is not None and self._dirty:
            self._sequence += 1
            self._write(self._path, self._sequence, dict(self._texts))
            self._dirty = False

    def _write(self, path: Path, sequence: int, snapshot: dict[str, str]) -> None:
        """Write a snapshot unless a newer one is in the file already (on any thread)."""
        with self._lock:
            if sequence > self._written:
                write_drafts(path, snapshot)
                self._written = sequence


def _joined(*texts: str) -> str:
    """The texts that are not blank, a blank line apart."""
    return "\n\n".join(t for t in texts if t.strip())
