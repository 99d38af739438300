"""Draws the conversation list's group headings ("Pinned", "Today", "Yesterday", "March
2025"…) above the first row of each group, so the model stays one flat list."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QPainter
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from assistant.ui import theme

Index = QModelIndex | QPersistentModelIndex
GroupRole = Qt.ItemDataRole.UserRole + 10
HEADING_SPACE = 8  # above a heading, below the group before it


def heading(index: Index) -> str | None:
    """The heading to draw above this row: its group's, if the row before is of another."""
    group = index.data(GroupRole)
    if not isinstance(group, str):
        return None
    if index.row() == 0:
        return group
    before = index.model().index(index.row() - 1, index.column(), index.parent())
    return group if before.data(GroupRole) != group else None


class GroupDelegate(QStyledItemDelegate):
    """A row as usual, under its group's heading when it is the group's first."""

    def _heading_height(self, option: QStyleOptionViewItem) -> int:
        return option.fontMetrics.height() + HEADING_SPACE

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        """One row, and room for a heading above it when it has one."""
        size = super().sizeHint(option, index)
        if heading(index) is not None:
            size.setHeight(size.height() + self._heading_height(option))
        return size

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """The heading in small bold muted letters, then the row below it."""
        title = heading(index)
        if title is None:
            super().paint(painter, option, index)
            return
        rect: QRect = option.rect
        room = self._heading_height(option)
        painter.save()
        font = QFont(option.font)
        font.setBold(True)
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        painter.setFont(font)
        painter.setPen(theme.muted(option.palette))
        painter.drawText(rect.left() + 6, rect.top() + room - 4, title)
        painter.restore()
        row = QStyleOptionViewItem(option)
        row.rect = QRect(rect.left(), rect.top() + room, rect.width(), rect.height() - room)
        super().paint(painter, row, index)
