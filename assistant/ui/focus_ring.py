"""A focus ring on whichever widget has the keyboard focus, in every window of the app.

Qt's Fusion style marks focus on line edits and default buttons only; a list, the chat, the
message box, a flat button or a tab showed nothing. One overlay per window draws a ring in the
palette's highlight colour (made to stand out, 3:1, from the window: WCAG's focus appearance)
around the focused widget. As browsers do (`:focus-visible`), a click on a button or a list
shows no ring; a text field always shows one, and so does anything reached by the keyboard.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen, QRegion
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from assistant.ui import theme

RING_WIDTH = 2
RING_CONTRAST = 3.0  # WCAG 2.2 non-text contrast, against the window around the widget
_TEXT_FIELDS = (QLineEdit, QPlainTextEdit, QTextEdit, QAbstractSpinBox, QComboBox)
_MOVES = (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Hide)


def ring_colour(palette: QPalette) -> QColor:
    """The colour of the focus ring: the highlight, made to stand out from the window."""
    window = palette.color(QPalette.ColorRole.Window)
    return theme.readable(palette.color(QPalette.ColorRole.Highlight), window, RING_CONTRAST)


class _Ring(QWidget):
    """The overlay of one window: a frame drawn over the edge of its focused widget."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self.setObjectName("focusRing")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.target: QWidget | None = None
        self._clip = QRect()
        self.hide()

    def follow(self, widget: QWidget | None) -> None:
        """Frame `widget` (None: nothing), tracking it and its parents as they move."""
        if self.target is not None:
            self.target.destroyed.disconnect(self._on_gone)
            for watched in _chain(self.target):
                watched.removeEventFilter(self)
        self.target = widget
        if widget is not None:
            widget.destroyed.connect(self._on_gone)
            for watched in _chain(widget):
                watched.installEventFilter(self)
        self.place()

    def _on_gone(self) -> None:
        """The widget (or a parent of it) was deleted: its filters went with it."""
        self.target = None
        self.hide()

    def place(self) -> None:
        """Put the ring on the visible part of the target, above everything in the window."""
        target = self.target
        if target is None or not target.isVisible():
            self.hide()
            return
        visible = _unclipped(target)
        if visible.isEmpty():
            self.hide()
            return
        top_left = target.mapTo(self._window, visible.topLeft())
        self.setGeometry(QRect(top_left, visible.size()))
        self._clip = QRect(visible.topLeft() - target.rect().topLeft(), visible.size())
        # Only the ring's pixels: what repaints inside the widget never repaints the overlay.
        whole = QRect(-self._clip.x(), -self._clip.y(), target.width(), target.height())
        inner = whole.adjusted(RING_WIDTH + 1, RING_WIDTH + 1, -RING_WIDTH - 1, -RING_WIDTH - 1)
        self.setMask(QRegion(self.rect()) - QRegion(inner))
        self.raise_()
        self.show()
        self.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() in _MOVES:
            self.place()
        return False

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        """The ring: a rounded frame just inside the widget's edge."""
        target = self.target
        if target is None:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(ring_colour(target.palette()), RING_WIDTH)
        painter.setPen(pen)
        whole = QRect(-self._clip.x(), -self._clip.y(), target.width(), target.height())
        half = RING_WIDTH / 2
        painter.drawRoundedRect(whole.toRectF().adjusted(half, half, -half, -half), 3.0, 3.0)


def _unclipped(widget: QWidget) -> QRect:
    """The part of `widget` (in its coordinates) that its parents do not clip away (a scroll
    area's viewport, a splitter); siblings above it do not count, the ring itself among them."""
    visible = widget.rect()
    child, parent = widget, widget.parentWidget()
    while parent is not None and not child.isWindow():
        inside = QRect(widget.mapFrom(parent, QPoint(0, 0)), parent.size())
        visible = visible.intersected(inside)
        child, parent = parent, parent.parentWidget()
    return visible


def _chain(widget: QWidget | None) -> list[QWidget]:
    """`widget` and its parents up to (not including) its window: any of them may move it."""
    chain: list[QWidget] = []
    while widget is not None and not widget.isWindow():
        chain.append(widget)
        widget = widget.parentWidget()
    return chain


class FocusRings(QObject):
    """Draws the ring of the focused widget in each window; install once per application."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self.app = app
        app.focusChanged.connect(self._on_focus)

    def ring_of(self, window: QWidget) -> _Ring | None:
        """The ring overlay of `window`, if one was made."""
        return window.findChild(_Ring, "focusRing", Qt.FindChildOption.FindDirectChildrenOnly)

    def _on_focus(self, old: QWidget | None, new: QWidget | None) -> None:
        if old is not None and (new is None or old.window() is not new.window()):
            previous = self.ring_of(old.window())
            if previous is not None:
                previous.follow(None)
        if new is None or new.isWindow():
            return
        ring = self._ring_for(new.window())
        # A click moves the focus while its button is down (no app-wide event filter needed).
        by_mouse = QApplication.mouseButtons() != Qt.MouseButton.NoButton
        shown = not by_mouse or isinstance(new, _TEXT_FIELDS)
        ring.follow(new if shown else None)

    def _ring_for(self, window: QWidget) -> _Ring:
        return self.ring_of(window) or _Ring(window)


_installed: list[FocusRings] = []


def install() -> FocusRings:
    """Draw focus rings in every window of the application (once; later calls return the same)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication), "a QApplication comes first"
    if not _installed or _installed[0].app is not app:
        _installed[:] = [FocusRings(app)]
    return _installed[0]
