"""The memory sidebar's colours and drawn icons, derived from the palette."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap

KIND_COLORS: dict[str, str] = {
    "fact": "#3b82f6",
    "preference": "#a855f7",
    "plan": "#14b8a6",
    "decision": "#f97316",
    "task": "#22c55e",
    "event": "#ec4899",
    "insight": "#eab308",
}


def drawn_icon(theme: str, draw: Callable[[QPainter], None], color: QColor) -> QIcon:
    """The theme's icon `theme` if there is one, else `draw` on a 16 by 16 canvas in `color`."""
    if QIcon.hasThemeIcon(theme):
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
