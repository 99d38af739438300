"""Small icons drawn in the palette's colours, for where a theme has none (and no font glyph
can be counted on). They are drawn as they are painted, so a change of theme recolours them."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QIcon,
    QIconEngine,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
)

Draw = Callable[[QPainter], None]
ColorOf = Callable[[QPalette], QColor]  # the icon's colour in a palette


def drawn_icon(theme: str, draw: Draw, color: QColor | ColorOf) -> QIcon:
    """The theme's icon `theme` if there is one ("" for none), else `draw` on a 16 by 16
    canvas in `color` (or the colour it gives for the application's palette at each paint)."""
    if theme and QIcon.hasThemeIcon(theme):
        return QIcon.fromTheme(theme)
    return QIcon(_Drawn(draw, color))


class _Drawn(QIconEngine):
    """Paints `draw` in the colour of the palette in use (dimmed when disabled)."""

    def __init__(self, draw: Draw, color: QColor | ColorOf) -> None:
        super().__init__()
        self._draw = draw
        self._color = color

    def colour(self, mode: QIcon.Mode) -> QColor:
        """The colour it is drawn in now, in `mode`."""
        palette = QGuiApplication.palette()
        color = QColor(self._color) if isinstance(self._color, QColor) else self._color(palette)
        if mode == QIcon.Mode.Disabled:
            disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText)
            color = QColor(disabled.red(), disabled.green(), disabled.blue(), color.alpha())
        return color

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.translate(rect.topLeft())
        painter.scale(rect.width() / 16, rect.height() / 16)
        pen = QPen(self.colour(mode), 1.6)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        self._draw(painter)
        painter.restore()

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        pixmap = QPixmap(size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        self.paint(painter, QRect(QPoint(0, 0), size), mode, state)
        painter.end()
        return pixmap

    def clone(self) -> QIconEngine:
        return _Drawn(self._draw, self._color)


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
