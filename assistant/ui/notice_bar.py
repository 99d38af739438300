"""A slim inline message with an optional action ("Memory forgotten. Undo")."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from assistant.ui.theme import mix, muted

NOTICE_MS = 12_000
_THEME_CHANGES = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


class NoticeBar(QFrame):
    """A slim inline message with an optional action ("Memory forgotten. Undo")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryNotice")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QToolButton(self)
        self.action_button.setObjectName("memoryNoticeAction")
        self.action_button.setAccessibleDescription(
            "Does what the notice above offers, such as undoing a forget"
        )
        self.action_button.setAccessibleName("Notice action")
        self.action_button.setAutoRaise(True)
        self.action_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.action_button.clicked.connect(self._on_action)
        close = QToolButton(self)
        close.setObjectName("memoryNoticeClose")
        close.setAutoRaise(True)
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.setAccessibleName("Dismiss")
        close.setCursor(Qt.CursorShape.PointingHandCursor)
        close.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignVCenter)
        self._callback: Callable[[], object] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self.hide()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        """A notice shown when the theme changes takes the new theme's colours."""
        super().changeEvent(event)
        if event.type() in _THEME_CHANGES and not self.isHidden():
            self._restyle()

    def _restyle(self) -> None:
        palette = QApplication.palette()  # the theme's (its own is the style sheet's)
        accent = palette.color(QPalette.ColorRole.Highlight)
        background = mix(palette.color(QPalette.ColorRole.Base), accent, 0.12)
        border = mix(palette.color(QPalette.ColorRole.Base), accent, 0.35)
        sheet = (
            f"#memoryNotice {{ background: {background.name()}; border: 1px solid "
            f"{border.name()}; border-radius: 6px; }}"
            f"#memoryNoticeAction {{ color: {accent.name()}; font-weight: 600; "
            f"padding: 2px 6px; }}"
            f"#memoryNoticeClose {{ color: {muted(palette).name()}; padding: 2px 4px; }}"
        )
        if sheet != self.styleSheet():
            self.setStyleSheet(sheet)

    def show_notice(
        self,
        text: str,
        action: str | None = None,
        on_action: Callable[[], object] | None = None,
        timeout_ms: int = NOTICE_MS,
        *,
        title: str = "",
    ) -> None:
        """Show `text` under an optional bold `title`, maybe with an `action` button."""
        self._restyle()  # in the colours of the theme now
        body = html.escape(text)
        self.label.setText(f"<b>{html.escape(title)}</b><br>{body}" if title else body)
        self._callback = on_action
        self.action_button.setText(action or "")
        self.action_button.setVisible(bool(action))
        self.show()
        if timeout_ms > 0:
            self._timer.start(timeout_ms)
        else:
            self._timer.stop()

    def dismiss(self) -> None:
        """Hide the bar."""
        self._timer.stop()
        self._callback = None
        self.hide()

    def _on_action(self) -> None:
        callback = self._callback
        self.dismiss()
        if callback is not None:
            callback()
