"""The conversation list's filter: by title at once, and by content once the messages were
searched for the typed text."""

from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtWidgets import QWidget

from assistant.ui.conversations.model import IdRole, Index


class TitleOrContentFilter(QSortFilterProxyModel):
    """Keeps rows whose title has the text, or whose messages matched a search for it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.text = ""
        self.content_hits: dict[str, str] = {}  # conversation id -> its best matching message

    def set_filter(self, text: str, content_hits: dict[str, str]) -> None:
        """Filter by `text`, also keeping the conversations in `content_hits`."""
        self.text = text.strip().casefold()
        self.content_hits = content_hits
        self.invalidate()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802
        if not self.text:
            return True
        index = self.sourceModel().index(source_row, 0, source_parent)
        title = str(index.data(Qt.ItemDataRole.AccessibleTextRole) or "")
        return self.text in title.casefold() or index.data(IdRole) in self.content_hits
