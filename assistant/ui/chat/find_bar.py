"""Find in the conversation shown: a bar over the chat (Ctrl+F), Enter for the next match."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QTextEdit, QToolButton, QWidget

from assistant.ui.chat.markdown import is_message_text


class _FindField(QLineEdit):
    """Enter: next match; Shift+Enter: previous; Esc: close the bar."""

    def __init__(self, bar: FindBar) -> None:
        super().__init__(bar)
        self._bar = bar

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            backward = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self._bar.find_next(backward=backward)
        elif event.key() == Qt.Key.Key_Escape:
            self._bar.close_bar()
        else:
            super().keyPressEvent(event)


class FindBar(QWidget):
    """Searches the messages in a chat view for the typed words, case-insensitively, wrapping
    around; the speakers' names, actions and tool lines are not searched.

    `before_find` readies the view (renders all it holds) before each search.
    """

    def __init__(
        self,
        view: QTextEdit,
        parent: QWidget | None = None,
        *,
        before_find: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self._view = view
        self._before_find = before_find
        self.field = _FindField(self)
        self.field.setObjectName("findField")
        self.field.setAccessibleDescription(
            "Words to find in this conversation; Enter finds the next, Shift+Enter the previous"
        )
        self.field.setAccessibleName("Find in conversation")
        self.field.setPlaceholderText("Find in conversation")
        self.field.setClearButtonEnabled(True)
        self.field.textChanged.connect(lambda _text: self.find_next(again=False))
        self.status = QLabel(self)
        self.status.setAccessibleName("Find result")
        previous = QToolButton(self)
        previous.setText("↑")
        previous.setToolTip("Previous match (Shift+Enter)")
        previous.setAccessibleName("Previous match")
        previous.clicked.connect(lambda: self.find_next(backward=True))
        following = QToolButton(self)
        following.setText("↓")
        following.setToolTip("Next match (Enter)")
        following.setAccessibleName("Next match")
        following.clicked.connect(self._find_forward)
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAccessibleName("Close find")
        close.clicked.connect(self.close_bar)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.status)
        layout.addWidget(previous)
        layout.addWidget(following)
        layout.addWidget(close)
        self.hide()

    def open_bar(self) -> None:
        """Show the bar with the view's selection (if any) as the text to find."""
        selected = self._view.textCursor().selectedText()
        self.show()
        if selected and "\u2029" not in selected:
            self.field.setText(selected)
        self.field.setFocus()
        self.field.selectAll()

    def close_bar(self) -> None:
        """Hide the bar and give the focus back to the view."""
        self.hide()
        self._view.setFocus()

    def _find_forward(self) -> None:
        self.find_next()

    def find_next(self, *, backward: bool = False, again: bool = True) -> bool:
        """Select the next (or previous) match, wrapping at the end; False if there is none."""
        text = self.field.text()
        if not text:
            self.status.clear()
            return False
        if self._before_find is not None:
            self._before_find()
        matches = self._matches(text)
        if not matches:
            self.status.setText("Not found")
            return False
        cursor = self._view.textCursor()
        if backward:
            before = cursor.selectionStart()
            earlier = (i for i, m in enumerate(matches) if m.selectionStart() < before)
            index = max(earlier, default=len(matches) - 1)
        else:  # the words changed: the match may begin where the last one began
            after = cursor.selectionEnd() if again else cursor.selectionStart()
            index = next((i for i, m in enumerate(matches) if m.selectionStart() >= after), 0)
        self._view.setTextCursor(matches[index])
        self._view.ensureCursorVisible()
        self.status.setText(f"{index + 1} of {len(matches)}")
        return True

    def _matches(self, text: str) -> list[QTextCursor]:
        """Where `text` occurs in the words of messages (not in headers, actions or tool lines)."""
        document = self._view.document()
        found = []
        match = document.find(text, 0)
        while not match.isNull():
            if is_message_text(match.block()):
                found.append(match)
            match = document.find(text, match)
        return found
