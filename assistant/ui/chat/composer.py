"""The input box under the chat: the text, Send and Stop, and a line while editing a message.

It needs only Qt widgets, so the window frame can show it before the workspace is open.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QMimeData, QTemporaryDir, Signal
from PySide6.QtGui import QImage, QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from assistant.ui import file_places

if TYPE_CHECKING:
    from assistant.knowledge import Attachment

INPUT_MAX_HEIGHT = 96
PLACEHOLDER = "Message Assistant — Enter to send, Shift+Enter for a new line"
PICK_FILTER = (
    "Text, Markdown, code, PDF and images (*.txt *.md *.markdown *.pdf *.png *.jpg *.jpeg *.gif "
    "*.webp *.py *.js *.ts *.json *.yaml *.yml *.toml *.csv *.html *.css *.c *.h *.cpp *.java "
    "*.go *.rs *.rb *.sh *.sql *.log *.rst);;All files (*)"
)


class ChatInput(QPlainTextEdit):
    """Multi-line input: Enter sends, Shift+Enter starts a new line, Esc stops the reply; files
    dropped or pasted on it are given to be attached (an image pasted as pixels too)."""

    send = Signal()
    stop = Signal()
    files_given = Signal(list)  # of Paths: local files dropped or pasted
    image_given = Signal(QImage)  # an image pasted (a screenshot): pixels, not a file

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802
        return (
            bool(_local_files(source)) or source.hasImage() or super().canInsertFromMimeData(source)
        )

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802
        files = _local_files(source)
        if files:
            self.files_given.emit(files)
        elif source.hasImage() and not source.hasText():
            self.image_given.emit(QImage(source.imageData()))
        else:
            super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        # Imported here: the Qt namespace takes 40 ms to load, and the frame shows without it.
        from PySide6.QtCore import Qt

        shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not shift:
            self.send.emit()
        elif event.key() == Qt.Key.Key_Escape:
            self.stop.emit()
        else:
            super().keyPressEvent(event)


def _local_files(source: QMimeData) -> list[Path]:
    """The local files a drop or a paste carries."""
    if not source.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in source.urls() if url.isLocalFile()]


class Composer(QWidget):
    """The input with its buttons and the files to send; `editing` is the user message being
    rewritten, if any."""

    def __init__(self, parent: QWidget | None = None) -> None:
        from assistant.ui.chat.attachment_bar import AttachmentBar

        super().__init__(parent)
        self.editing: str | None = None
        self._held: tuple[str, list[Path]] = ("", [])  # the unsent message put aside to edit
        self.attachments = AttachmentBar(self)
        self.edit_line = QWidget(self)
        self.edit_label = QLabel("Editing your message: Enter sends it as a new version.", self)
        self.edit_label.setWordWrap(True)
        self.cancel_edit_button = QPushButton("Cancel Edit", self)
        self.cancel_edit_button.setObjectName("cancelEditButton")
        self.cancel_edit_button.setAccessibleDescription("Keep the message as it was")
        self.cancel_edit_button.clicked.connect(self.end_edit)
        edit_row = QHBoxLayout(self.edit_line)
        edit_row.setContentsMargins(0, 0, 0, 0)
        edit_row.addWidget(self.edit_label, 1)
        edit_row.addWidget(self.cancel_edit_button)
        self.edit_line.hide()

        self.input = ChatInput(self)
        self.input.setObjectName("chatInput")
        self.input.setAccessibleName("Message")
        self.input.setAccessibleDescription(
            "Type a message. Enter sends it, Shift+Enter starts a new line, Escape stops a reply."
        )
        self.input.setPlaceholderText(PLACEHOLDER)
        self.input.setMaximumHeight(INPUT_MAX_HEIGHT)
        self.input.setTabChangesFocus(True)
        # Typing can start at once (it has the focus); Enter sends once the workspace is open.
        self.send_button = QPushButton("Send", self)
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleDescription("Send the message (Enter)")
        self.send_button.setDefault(True)
        self.send_button.setEnabled(False)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop the reply (Esc)")
        self.stop_button.setAccessibleDescription("Stop the reply being written (Escape)")
        self.stop_button.setEnabled(False)
        self.attach_button = self._attaching()
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.attach_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.input, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit_line)
        layout.addWidget(self.attachments)
        layout.addLayout(row)

    def _attaching(self) -> QPushButton:
        """The Attach button; files dropped or pasted on the input are attached too."""
        button = QPushButton("Attach…", self)
        button.setObjectName("attachButton")
        button.setToolTip("Attach files to the message (Ctrl+Shift+A, or drop them)")
        button.setAccessibleDescription(
            "Choose files to send with the message: text, Markdown, code, PDF or images"
        )
        button.setEnabled(False)
        button.clicked.connect(self.pick_files)
        self.input.files_given.connect(self.attachments.add)
        self.input.image_given.connect(self._attach_image)
        self.attachments.emptied.connect(self.input.setFocus)
        self._pasted: QTemporaryDir | None = None  # pasted images, as files, until quitting
        return button

    def begin_edit(
        self, message_id: str, text: str, attachments: Sequence[Attachment] = ()
    ) -> None:
        """Put a sent message back in the box to be changed and sent again, its files as
        chips (the new version carries those left). What the box held waits until editing
        ends."""
        if self.editing is None:
            self._held = (self.input.toPlainText(), self.attachments.take_new())
        self.editing = message_id
        self.input.setPlainText(text)
        self.attachments.show_sent(attachments)
        self.edit_line.show()
        self.input.setFocus()
        cursor = self.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.input.setTextCursor(cursor)

    def end_edit(self) -> None:
        """Leave editing (after sending, or to cancel it): the box holds again what it held
        before."""
        if self.editing is not None:
            self.editing = None
            (text, files), self._held = self._held, ("", [])
            self.attachments.show_sent(())
            self.input.setPlainText(text)
            self.attachments.add(files)
            cursor = self.input.textCursor()
            cursor.movePosition(cursor.MoveOperation.End)
            self.input.setTextCursor(cursor)
        self.edit_line.hide()

    def pick_files(self) -> None:
        """Choose files to attach (the system's file dialog)."""
        from PySide6.QtWidgets import QFileDialog

        start = str(file_places.start_folder("attach"))
        names, _ = QFileDialog.getOpenFileNames(self, "Attach files", start, PICK_FILTER)
        if names:
            file_places.remember("attach", names[0])
            self.attachments.add(Path(name) for name in names)
        self.input.setFocus()

    def _attach_image(self, image: QImage) -> None:
        """A pasted image becomes a PNG file to attach (kept until the app quits)."""
        from PySide6.QtCore import QDateTime

        if self._pasted is None:
            self._pasted = QTemporaryDir()
        stamp = QDateTime.currentDateTime().toString("yyyy-MM-dd HH.mm.ss.zzz")
        path = Path(self._pasted.path()) / f"Pasted image {stamp}.png"
        if image.isNull() or not image.save(str(path)):
            self.attachments.say("The pasted image could not be saved to be attached.")
            return
        self.attachments.add([path])
