"""The chat's pane in the window: the buttons that show the side panes and the model picker,
the banner of a temporary or do-not-remember chat (a row of its own under them), the chat (or
the welcome, or a blank frame until the data is open) and the composer."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from assistant.ui.chat.composer import Composer
from assistant.ui.chat.model_bar import ModelBar
from assistant.ui.theme import mix

MIN_WIDTH = 320
TEMPORARY_NOTICE = "Temporary chat: memory off, deleted when you leave it or quit"
TEMPORARY_DETAIL = (
    "This chat does not use or add to your long-term memory, and it is deleted when you "
    "leave it or quit."
)
DO_NOT_REMEMBER_NOTICE = "Imported as do-not-remember: Assistant learns nothing from this chat"
DO_NOT_REMEMBER_DETAIL = (
    "This conversation was imported as not to be remembered: nothing said in it is added to "
    "your memory. Assistant still uses what it already remembers."
)


class ChatPane(QWidget):
    """The centre of the window; `stack` holds the chat and the welcome once they are built."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumWidth(MIN_WIDTH)
        self.stack = QStackedWidget(self)
        self._blank = QFrame(self)  # framed like the chat view, until that is there
        self._blank.setFrameShape(QFrame.Shape.StyledPanel)
        self.stack.addWidget(self._blank)
        self.stack.setCurrentWidget(self._blank)
        self.temporary_banner = self._banner()
        self.composer = Composer(self)
        self.list_toggle = _pane_button("☰", "Show or hide the conversations (Ctrl+Shift+L)", self)
        self.list_toggle.setObjectName("conversationsPaneButton")
        self.list_toggle.setAccessibleName("Conversations pane")
        self.memory_toggle = _pane_button("◆", "Show or hide the memory (Ctrl+Shift+M)", self)
        self.memory_toggle.setObjectName("memoryPaneButton")
        self.memory_toggle.setAccessibleName("Memory pane")
        pane_buttons = QHBoxLayout()
        pane_buttons.setContentsMargins(0, 0, 0, 0)
        pane_buttons.addWidget(self.list_toggle)
        pane_buttons.addStretch(1)
        self.model_bar = ModelBar(self)
        pane_buttons.addWidget(self.model_bar)
        pane_buttons.addWidget(self.memory_toggle)
        QWidget.setTabOrder(self.model_bar.options_button, self.memory_toggle)  # as laid out
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(4, 4, 4, 8)
        self._layout.addLayout(pane_buttons)
        self._layout.addWidget(self.temporary_banner)
        self._layout.addWidget(self.stack, 1)
        self._layout.addWidget(self.composer)

    def _banner(self) -> TemporaryBanner:
        banner = TemporaryBanner(self)
        banner.hide()
        return banner

    def add_notice(self, notice: QWidget) -> None:
        """Show `notice` (a notice bar) under the pane's buttons, over the chat."""
        self._layout.insertWidget(self._layout.indexOf(self.temporary_banner), notice)

    def fill(self, chat: QWidget, welcome: QWidget, above_chat: QWidget) -> None:
        """Put the chat and the welcome in place of the blank frame, `above_chat` over them."""
        self._layout.insertWidget(self._layout.indexOf(self.stack), above_chat)
        self.stack.addWidget(chat)
        self.stack.addWidget(welcome)
        self.stack.removeWidget(self._blank)
        self._blank.deleteLater()


class TemporaryBanner(QLabel):
    """The line over a temporary chat, in the colours of the app's notices (drawn from the
    palette it has, so a new theme repaints it)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(TEMPORARY_NOTICE, parent)
        self.setObjectName("temporaryBanner")
        self.setWordWrap(True)  # one line unless the pane is very narrow
        self.setAccessibleName("Temporary chat")
        self.setAccessibleDescription(TEMPORARY_DETAIL)
        self.setToolTip(TEMPORARY_DETAIL)
        self.setForegroundRole(QPalette.ColorRole.Text)
        self.setContentsMargins(10, 5, 10, 5)

    def show_for(self, *, temporary: bool, do_not_remember: bool) -> None:
        """Say what holds for the open chat: temporary, imported as do-not-remember, or
        hide (an ordinary chat)."""
        if do_not_remember and not temporary:
            text, name, detail = (
                DO_NOT_REMEMBER_NOTICE,
                "Do-not-remember chat",
                DO_NOT_REMEMBER_DETAIL,
            )
        else:
            text, name, detail = TEMPORARY_NOTICE, "Temporary chat", TEMPORARY_DETAIL
        self.setText(text)
        self.setAccessibleName(name)
        self.setAccessibleDescription(detail)
        self.setToolTip(detail)
        self.setVisible(temporary or do_not_remember)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Base)
        accent = palette.color(QPalette.ColorRole.Highlight)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(mix(base, accent, 0.35))
        painter.setBrush(mix(base, accent, 0.12))
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6)
        painter.end()
        super().paintEvent(event)


def _pane_button(text: str, tip: str, parent: QWidget) -> QPushButton:
    """A small checkable button that shows or hides a side pane."""
    button = QPushButton(text, parent)
    button.setCheckable(True)
    button.setChecked(True)
    button.setToolTip(tip)
    button.setAccessibleDescription(tip)
    button.setFlat(True)
    button.setMaximumWidth(button.fontMetrics().horizontalAdvance(text) + 24)
    return button
