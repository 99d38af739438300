"""The input box under the chat: the text, Send and Stop, and a line while editing a message.

It needs only Qt widgets, so the window frame can show it before the workspace is open.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

INPUT_MAX_HEIGHT = 96
PLACEHOLDER = "Message Assistant — Enter to send, Shift+Enter for a new line"


class ChatInput(QPlainTextEdit):
    """Multi-line input: Enter sends, Shift+Enter starts a new line, Esc stops the reply."""

    send = Signal()
    stop = Signal()

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


class Composer(QWidget):
    """The input with its buttons; `editing` is the user message being rewritten, if any."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editing: str | None = None
        self.edit_line = QWidget(self)
        self.edit_label = QLabel("Editing your message: Enter sends it as a new version.", self)
        self.edit_label.setWordWrap(True)
        self.cancel_edit_button = QPushButton("Cancel edit", self)
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
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.input, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit_line)
        layout.addLayout(row)

    def begin_edit(self, message_id: str, text: str) -> None:
        """Put a sent message back in the box to be changed and sent again."""
        self.editing = message_id
        self.input.setPlainText(text)
        self.edit_line.show()
        self.input.setFocus()
        cursor = self.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.input.setTextCursor(cursor)

    def end_edit(self) -> None:
        """Leave editing (after sending, or to cancel it)."""
        if self.editing is not None:
            self.editing = None
            self.input.clear()
        self.edit_line.hide()
