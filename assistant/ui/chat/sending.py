"""The message box's commands on the conversation shown: send (a new version of a message while
editing one), stop, Escape, edit a message; Send and Stop follow the session."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from assistant.knowledge import Attachment, AttachmentError
from assistant.memory import AttachedFile
from assistant.ui.chat.pane import ChatPane
from assistant.ui.chat.session import ChatSession
from assistant.ui.chat.view import ChatView

STOP_TIP = "Stop the reply (Esc)"


class Sending(QObject):
    """Wires the composer of `pane` to `session`.

    `can_send()` says whether a model is set up (and shows the way to set one up if not);
    `new_conversation()` opens one to send in when none is shown; `sent_file(conversation id,
    attached)` is the copy of a file a message carries, for its chip while it is edited.
    """

    def __init__(
        self,
        pane: ChatPane,
        session: ChatSession,
        chat: ChatView,
        *,
        can_send: Callable[[], bool],
        new_conversation: Callable[[], object],
        sent_file: Callable[[str, AttachedFile], Attachment],
    ) -> None:
        super().__init__(pane)
        self._pane = pane
        self._composer = composer = pane.composer
        self._session = session
        self._chat = chat
        self._can_send = can_send
        self._new_conversation = new_conversation
        self._sent_file = sent_file
        composer.send_button.clicked.connect(self.send)
        composer.input.send.connect(self.send)
        composer.stop_button.clicked.connect(session.stop)
        composer.input.stop.connect(self._on_escape)
        chat.edit_requested.connect(self._begin_edit)
        session.busy_changed.connect(self._set_busy)
        session.conversation_changed.connect(lambda _c: self._say_where())
        composer.attachments.model_refusing_images = pane.model_bar.refusing_images
        pane.model_bar.shown_model_changed.connect(composer.attachments.recheck)

    def send(self) -> None:
        """Send the input's text and files; a file that cannot be sent (an image the model is
        known not to take too) is named, and nothing is sent or cleared."""
        composer, session = self._composer, self._session
        text = composer.input.toPlainText().strip()
        files, kept = composer.attachments.files(), composer.attachments.kept()
        if not (text or files or kept) or not self._can_send():
            return
        if session.busy:
            session.explain_busy()
            return
        refused = composer.attachments.refused_images()
        if refused:
            composer.attachments.say(refused)
            return
        if session.conversation is None:
            self._new_conversation()
        edited = composer.editing
        try:
            sent = edited is not None and session.edit(edited, text, files, kept)
            if not sent and not session.send(text, files):
                return
        except AttachmentError as exc:
            composer.attachments.say(str(exc))
            return
        composer.input.clear()
        composer.attachments.clear()
        composer.end_edit()  # what the box held before the edit comes back

    def _begin_edit(self, message_id: str, text: str) -> None:
        conversation = self._session.conversation
        if self._session.busy or conversation is None:
            return
        message = next((m for m in conversation.messages if m.id == message_id), None)
        attached = () if message is None else message.attachments
        files = [self._sent_file(conversation.id, a) for a in attached]
        self._composer.begin_edit(message_id, text, files)

    def _on_escape(self) -> None:
        if self._session.busy:
            self._session.stop()
        elif self._composer.editing is not None:
            self._composer.end_edit()

    def _set_busy(self, busy: bool) -> None:
        self._composer.send_button.setEnabled(not busy)
        self._composer.stop_button.setEnabled(busy)
        self._say_where()
        if busy:
            self._pane.stack.setCurrentWidget(self._chat)

    def _say_where(self) -> None:
        """A reply written in another conversation than the one shown: Send and Stop say so."""
        send, stop = self._composer.send_button, self._composer.stop_button
        elsewhere = self._session.answering_elsewhere()
        if elsewhere is None:
            send.setToolTip("")
            stop.setToolTip(STOP_TIP)
        else:
            send.setToolTip(f"Assistant is answering in “{elsewhere}”: wait, or Stop it")
            stop.setToolTip(f"Stop the reply in “{elsewhere}” (Esc)")
