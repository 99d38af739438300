"""A focus ring round whichever widget has the keyboard focus, in every window of the app.

Qt's Fusion style marks focus on line edits and default buttons only; a list, the chat, the
message box, a flat button or a tab showed nothing. Each window gets a `QFocusFrame` (Qt's own
follower of a widget: it tracks moves, parents and deletion) drawn as a ring in the palette's
highlight colour, made to stand out (3:1) from the window: WCAG's focus appearance. As
browsers do (`:focus-visible`), a click on a button or a list shows no ring; a text field
always shows one, and so does anything reached by the keyboard.
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFocusFrame,
    QLineEdit,
    QPlainTextEdit,
    QProxyStyle,
    QStyle,
    QStyleHintReturn,
    QStyleOption,
    QTextEdit,
    QWidget,
)

from assistant.ui import theme

RING_WIDTH = 2  # drawn just outside the widget
RING_CONTRAST = 3.0  # WCAG 2.2 non-text contrast, against the window around the widget
_TEXT_FIELDS = (QLineEdit, QPlainTextEdit, QTextEdit, QAbstractSpinBox, QComboBox)


def ring_colour(palette: QPalette) -> QColor:
    """The colour of the focus ring: the highlight, made to stand out from the window."""
    window = palette.color(QPalette.ColorRole.Window)
    return theme.readable(palette.color(QPalette.ColorRole.Highlight), window, RING_CONTRAST)


class _RingStyle(QProxyStyle):
    """The app's style, but the focus frame sits above its widget (as on macOS), in a band
    `RING_WIDTH` wide round it."""

    def styleHint(  # noqa: N802 (Qt's name)
        self,
        hint: QStyle.StyleHint,
        option: QStyleOption | None = None,
        widget: QWidget | None = None,
        returned: QStyleHintReturn | None = None,
    ) -> int:
        if hint == QStyle.StyleHint.SH_FocusFrame_AboveWidget:
            return 1
        return super().styleHint(hint, option, widget, returned)

    def pixelMetric(  # noqa: N802 (Qt's name)
        self,
        metric: QStyle.PixelMetric,
        option: QStyleOption | None = None,
        widget: QWidget | None = None,
    ) -> int:
        if metric in (
            QStyle.PixelMetric.PM_FocusFrameHMargin,
            QStyle.PixelMetric.PM_FocusFrameVMargin,
        ):
            return RING_WIDTH
        return super().pixelMetric(metric, option, widget)


class Ring(QFocusFrame):
    """The focus frame of one window, painted as a ring."""

    def __init__(self, window: QWidget, style: QStyle) -> None:
        super().__init__(window)
        self.setObjectName("focusRing")
        self.setStyle(style)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        """A rounded band round the widget, in the ring colour."""
        target: QWidget | None = self.widget()  # None once its widget is gone
        if target is None:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        # Its own palette, the window's: a check box's window colour is a stand-in (theme.py).
        painter.setPen(QPen(ring_colour(self.palette()), RING_WIDTH))
        half = RING_WIDTH / 2
        painter.drawRoundedRect(self.rect().toRectF().adjusted(half, half, -half, -half), 3, 3)


class FocusRings:
    """Puts the ring of each window on its focused widget; one per application."""

    def __init__(self, app: QApplication) -> None:
        self.app = app
        self._style = _RingStyle()
        self._style.setParent(app)
        app.focusChanged.connect(self._on_focus)

    def ring_of(self, window: QWidget) -> Ring | None:
        """The ring of `window`, if one was made."""
        return window.findChild(Ring, "focusRing", Qt.FindChildOption.FindDirectChildrenOnly)

    def _on_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        # `_old` is not touched: the focus leaves a widget that is being deleted, too.
        if new is None or new.isWindow():
            return
        window = new.window()
        ring = self.ring_of(window) or Ring(window, self._style)
        # A click moves the focus while its button is down.
        by_mouse = QApplication.mouseButtons() != Qt.MouseButton.NoButton
        shown = not by_mouse or isinstance(new, _TEXT_FIELDS)
        ring.setWidget(new if shown else cast(QWidget, None))  # None: on nothing, hidden


_installed: list[FocusRings] = []


def install() -> FocusRings:
    """Draw focus rings in every window of the application (once; later calls return it)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication), "a QApplication comes first"
    if not _installed or _installed[0].app is not app:
        _installed[:] = [FocusRings(app)]
    return _installed[0]
