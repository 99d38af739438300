"""Ctrl+K hits drawn as two lines: the conversation's title, and the message with the words
that were searched for in bold."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from assistant.ui import theme

Index = QModelIndex | QPersistentModelIndex
HIT_TEXT_ROLE = Qt.ItemDataRole.UserRole + 2  # (title, snippet, query)
PADDING = 6
MIN_WORD = 2  # shorter query words ("a", "I") would mark half the snippet


def hit_html(title: str, snippet: str, query: str, snippet_colour: str) -> str:
    """The hit as HTML: the title, then the snippet with the query's words (and the words that
    start with them: "lisbon" marks "Lisbon's") in bold."""
    words = {w for w in re.findall(r"\w+", query.casefold()) if len(w) >= MIN_WORD}
    text = html.escape(snippet)
    if words:  # marked before escaping, so that no entity ("&amp;") is cut by a mark
        longest_first = sorted(words, key=len, reverse=True)
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, longest_first)) + ")", re.IGNORECASE)
        pieces = pattern.split(snippet)  # the words found are at the odd places
        text = "".join(
            f"<b>{html.escape(p)}</b>" if i % 2 else html.escape(p) for i, p in enumerate(pieces)
        )
    return f"<div><b>{html.escape(title)}</b></div><div style='color:{snippet_colour}'>{text}</div>"


class HitDelegate(QStyledItemDelegate):
    """Paints an item's title and snippet (`HIT_TEXT_ROLE`), wrapped to the view's width."""

    def _document(
        self, option: QStyleOptionViewItem, index: Index, width: int, selected: bool = False
    ) -> QTextDocument:
        title, snippet, query = index.data(HIT_TEXT_ROLE) or ("", "", "")
        palette = option.palette
        colour = (
            palette.color(QPalette.ColorRole.HighlightedText).name()
            if selected
            else theme.muted(palette).name()
        )
        document = QTextDocument()
        document.setDefaultFont(option.font)
        document.setHtml(hit_html(title, snippet, query, colour))
        document.setTextWidth(max(50, width - 2 * PADDING))
        return document

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        """As tall as the wrapped text."""
        view = option.widget
        width = view.viewport().width() if isinstance(view, QAbstractItemView) else 400
        document = self._document(option, index, width)
        return QSize(width, int(document.size().height()) + 2 * PADDING)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """The item's background (selected or not), then the text in matching colours."""
        self.initStyleOption(option, index)
        view = option.widget
        option.text = ""
        if isinstance(view, QAbstractItemView):
            view.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, view)
        rect = option.rect
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        document = self._document(option, index, rect.width(), selected)
        context = QAbstractTextDocumentLayout.PaintContext()
        palette: QPalette = option.palette
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, palette.color(role))
        painter.save()
        painter.translate(rect.left() + PADDING, rect.top() + PADDING)
        painter.setClipRect(QRectF(0, 0, rect.width(), rect.height()))
        document.documentLayout().draw(painter, context)
        painter.restore()
