"""The memory list's item delegate: wrapped text, a grey caption with the kind's dot, a pin."""

from __future__ import annotations

from typing import Any, cast

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QCursor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QTextLayout,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

from assistant.memory import MemoryItem
from assistant.ui.memory.look import KIND_COLORS
from assistant.ui.memory.model import ItemRole, ScopeRole, caption
from assistant.ui.memory.wording import ORIGIN_ICONS
from assistant.ui.theme import muted as muted_color


def _pin_path() -> QPainterPath:
    """A push pin drawn in a 24 by 24 box."""
    path = QPainterPath()
    path.moveTo(16, 9)
    path.lineTo(16, 4)
    path.lineTo(17, 4)
    path.quadTo(18, 4, 18, 3)
    path.quadTo(18, 2, 17, 2)
    path.lineTo(7, 2)
    path.quadTo(6, 2, 6, 3)
    path.quadTo(6, 4, 7, 4)
    path.lineTo(8, 4)
    path.lineTo(8, 9)
    path.cubicTo(8, 10.66, 6.66, 12, 5, 12)
    path.lineTo(5, 14)
    path.lineTo(11, 14)
    path.lineTo(11, 21)
    path.lineTo(12, 22)
    path.lineTo(13, 21)
    path.lineTo(13, 14)
    path.lineTo(19, 14)
    path.lineTo(19, 12)
    path.cubicTo(17.34, 12, 16, 10.66, 16, 9)
    path.closeSubpath()
    return path


_PIN = _pin_path()


_WIDE_CAPTION = "✎ preference · importance 0.7 · used 3 days ago"
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_MOUSE_CLICKS = (
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonRelease,
    QEvent.Type.MouseButtonDblClick,
)


class MemoryDelegate(QStyledItemDelegate):
    """Draws a memory as up to three lines of text, a grey caption and a clickable pin."""

    pin_clicked = Signal(str)  # memory id

    MAX_LINES = 3
    H_MARGIN = 12
    V_MARGIN = 9
    PIN_SIZE = 16
    PIN_AREA = 30  # room on the right for the pin
    GAP = 3  # between the text and the caption

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lines: dict[tuple[str, int, str], list[str]] = {}

    # -- geometry -----------------------------------------------------------------------------

    @staticmethod
    def caption_font(font: QFont) -> QFont:
        """The smaller font of the caption line."""
        small = QFont(font)
        small.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        return small

    def _text_width(self, option: QStyleOptionViewItem) -> int:
        width = option.rect.width()
        widget = option.widget
        if width <= 0 and isinstance(widget, QAbstractItemView):
            width = widget.viewport().width()
        return max(40, width - 2 * self.H_MARGIN - self.PIN_AREA)

    def _wrap(self, text: str, font: QFont, width: int) -> list[str]:
        """`text` on at most MAX_LINES lines of `width` pixels, the last one elided."""
        key = (text, width, font.key())
        cached = self._lines.get(key)
        if cached is not None:
            return cached
        flat = " ".join(text.split())
        layout = QTextLayout(flat, font)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        layout.setTextOption(option)
        spans: list[tuple[int, int]] = []
        layout.beginLayout()
        while len(spans) < self.MAX_LINES:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width)
            spans.append((line.textStart(), line.textLength()))
        layout.endLayout()
        lines = [flat[start : start + length].rstrip() for start, length in spans] or [""]
        if spans and spans[-1][0] + spans[-1][1] < len(flat):
            rest = flat[spans[-1][0] :]
            lines[-1] = QFontMetrics(font).elidedText(rest, Qt.TextElideMode.ElideRight, width)
        if len(self._lines) > 4000:
            self._lines.clear()
        self._lines[key] = lines
        return lines

    def sizeHint(  # noqa: N802
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """Room for the wrapped text and the caption."""
        font = option.font
        lines = self._wrap(str(index.data()), font, self._text_width(option))
        height = (
            2 * self.V_MARGIN
            + len(lines) * QFontMetrics(font).lineSpacing()
            + self.GAP
            + QFontMetrics(self.caption_font(font)).lineSpacing()
        )
        return QSize(self._text_width(option) + 2 * self.H_MARGIN + self.PIN_AREA, height)

    def pin_rect(self, rect: QRect) -> QRect:
        """Where the pin of a row drawn in `rect` is."""
        size = self.PIN_SIZE
        return QRect(
            rect.right() - self.H_MARGIN - size + 4, rect.top() + self.V_MARGIN, size, size
        )

    # -- painting -----------------------------------------------------------------------------

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """Selection background, text, caption, separator and pin."""
        item = cast(MemoryItem | None, index.data(ItemRole))
        if item is None:
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        rect = opt.rect
        palette = opt.palette
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = (
            QPalette.ColorGroup.Active
            if opt.state & QStyle.StateFlag.State_Active
            else QPalette.ColorGroup.Inactive
        )
        text_color = palette.color(
            group, QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        muted = QColor(text_color) if selected else muted_color(palette)
        if selected:
            muted.setAlphaF(0.78)

        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, opt, painter, widget)
        if not selected:
            line = QColor(palette.color(QPalette.ColorRole.Text))
            line.setAlphaF(0.09)
            painter.setPen(QPen(line, 1))
            y = rect.bottom()
            painter.drawLine(rect.left() + self.H_MARGIN, y, rect.right() - self.H_MARGIN, y)
        y = self._draw_text(painter, opt, item.text, text_color)
        scope = index.data(ScopeRole)
        self._draw_caption(
            painter, opt, item, y, muted, scope=scope if isinstance(scope, str) else None
        )
        if item.pinned or selected or opt.state & QStyle.StateFlag.State_MouseOver:
            pin = self.pin_rect(rect)
            accent = text_color if selected else palette.color(group, QPalette.ColorRole.Highlight)
            strong = item.pinned or self._under_mouse(widget, pin)
            self._draw_pin(painter, pin, item.pinned, accent if strong else muted)
        painter.restore()

    def _draw_text(
        self, painter: QPainter, opt: QStyleOptionViewItem, text: str, color: QColor
    ) -> int:
        """Draw the wrapped text; returns where the caption goes."""
        font = opt.font
        line_height = QFontMetrics(font).lineSpacing()
        width = self._text_width(opt)
        x, y = opt.rect.left() + self.H_MARGIN, opt.rect.top() + self.V_MARGIN
        painter.setFont(font)
        painter.setPen(color)
        for line in self._wrap(text, font, width):
            painter.drawText(QRect(x, y, width, line_height), _LEFT, line)
            y += line_height
        return y + self.GAP

    def _draw_caption(
        self,
        painter: QPainter,
        opt: QStyleOptionViewItem,
        item: MemoryItem,
        y: int,
        color: QColor,
        *,
        scope: str | None,
    ) -> None:
        """Draw the kind's coloured dot and the grey caption (its scope first, if given)."""
        small = self.caption_font(opt.font)
        metrics = QFontMetrics(small)
        x = opt.rect.left() + self.H_MARGIN
        dot = 6
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(KIND_COLORS.get(item.kind, "#888888")))
        painter.drawEllipse(QRectF(x + 0.5, y + (metrics.lineSpacing() - dot) / 2, dot, dot))
        width = self._text_width(opt) - dot - 6
        painter.setFont(small)
        painter.setPen(color)
        compact = width < metrics.horizontalAdvance(_WIDE_CAPTION)  # the same form on every row
        where = f"{scope} · " if scope else ""
        text = metrics.elidedText(
            f"{ORIGIN_ICONS.get(item.origin, '')} {where}{caption(item, compact=compact)}",
            Qt.TextElideMode.ElideRight,
            width,
        )
        painter.drawText(QRect(x + dot + 6, y, width, metrics.lineSpacing()), _LEFT, text)

    @staticmethod
    def _under_mouse(widget: QWidget | None, rect: QRect) -> bool:
        if isinstance(widget, QAbstractItemView):
            widget = widget.viewport()
        return widget is not None and rect.contains(widget.mapFromGlobal(QCursor.pos()))

    @staticmethod
    def _draw_pin(painter: QPainter, rect: QRect, filled: bool, color: QColor) -> None:
        painter.save()
        painter.translate(QPointF(rect.topLeft()))
        painter.scale(rect.width() / 24, rect.height() / 24)
        pen = QPen(color, 1.3)
        pen.setCosmetic(True)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        painter.setBrush(color if filled else Qt.BrushStyle.NoBrush)
        painter.drawPath(_PIN)
        painter.restore()

    # -- interaction --------------------------------------------------------------------------

    def _pin_hit(self, option: QStyleOptionViewItem, pos: QPoint) -> bool:
        return self.pin_rect(option.rect).adjusted(-6, -6, 6, 6).contains(pos)

    def editorEvent(  # noqa: N802
        self,
        event: QEvent,
        model: Any,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """A click on the pin toggles it (and does not select the row)."""
        if (
            event.type() in _MOUSE_CLICKS
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
            and self._pin_hit(option, event.position().toPoint())
        ):
            item = cast(MemoryItem | None, index.data(ItemRole))
            if item is not None and event.type() == QEvent.Type.MouseButtonRelease:
                self.pin_clicked.emit(item.id)
            return True
        return super().editorEvent(event, model, option, index)

    def helpEvent(  # noqa: N802
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """Over the pin, say what a click does."""
        item = cast(MemoryItem | None, index.data(ItemRole))
        if item is not None and self._pin_hit(option, event.pos()):
            tip = "Unpin" if item.pinned else "Pin: always keep this in mind"
            QToolTip.showText(event.globalPos(), tip, view)
            return True
        return super().helpEvent(event, view, option, index)
