"""Small icons drawn in the palette's colours, for where a theme has none (and no font glyph
can be counted on)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap


def drawn_icon(theme: str, draw: Callable[[QPainter], None], color: QColor) -> QIcon:
    """The theme's icon `theme` if there is one ("" for none), else `draw` on a 16 by 16
    canvas in `color`."""
    if theme and QIcon.hasThemeIcon(theme):
        return QIcon.fromTheme(theme)
    pixmap = QPixmap(32, 32)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(color, 1.6)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    draw(painter)
    painter.end()
    return QIcon(pixmap)


def draw_search(painter: QPainter) -> None:
    """A magnifying glass."""
    painter.drawEllipse(QRectF(2.5, 2.5, 8, 8))
    painter.drawLine(QPointF(9.8, 9.8), QPointF(13.5, 13.5))


def draw_plus(painter: QPainter) -> None:
    """A plus sign."""
    painter.drawLine(QPointF(8, 3), QPointF(8, 13))
    painter.drawLine(QPointF(3, 8), QPointF(13, 8))


def draw_clock(painter: QPainter) -> None:
    """A clock face at ten past: a temporary chat."""
    painter.drawEllipse(QRectF(2.5, 2.5, 11, 11))
    painter.drawLine(QPointF(8, 8), QPointF(8, 4.8))
    painter.drawLine(QPointF(8, 8), QPointF(10.6, 9.4))
