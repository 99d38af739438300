"""Passages of the user's files that match the memory search, under the memories: a list of its
own, headed "In your files", so that a file is never taken for a memory. Activating one opens
the file at that place."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from assistant.knowledge import Citation, FileHit
from assistant.ui.theme import set_muted

FILE_HITS = 5  # the memories stay the sidebar's subject: only the best passages show
ROWS_SHOWN = 3  # the list's height, in rows (it scrolls for more)
_CITATION = Qt.ItemDataRole.UserRole + 1


def hit_line(hit: FileHit) -> str:
    """A file hit as one line: "▤ report.pdf p. 4 — the words around the match"."""
    return f"▤ {hit.source()} — {' '.join(hit.snippet.split())}"


class FileHitsList(QWidget):
    """The file passages a search found; hidden while there are none."""

    chosen = Signal(object)  # the Citation of the passage to open

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryFileHits")
        self.heading = QLabel("In your files", self)
        set_muted(self.heading)
        self.list = QListWidget(self)
        self.list.setObjectName("memoryFileHitList")
        self.list.setAccessibleName("Passages of your files that match")
        self.list.setAccessibleDescription("Enter or a click opens the file at that place")
        self.list.setWordWrap(False)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.itemActivated.connect(self._open)
        self.list.itemClicked.connect(self._open)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        layout.addWidget(self.list)
        self.hide()

    def show_hits(self, hits: Sequence[FileHit]) -> None:
        """Show these passages (none: hide the list)."""
        self.list.clear()
        for hit in hits[:FILE_HITS]:
            item = QListWidgetItem(hit_line(hit), self.list)
            item.setData(_CITATION, Citation(hit.path, hit.place))
            item.setToolTip(f"{hit.path}\n\n{hit.snippet}")
        rows = min(ROWS_SHOWN, self.list.count())
        self.list.setFixedHeight(self.list.sizeHintForRow(0) * rows + 2 * self.list.frameWidth()
                                 if rows else 0)  # fmt: skip
        self.setVisible(self.list.count() > 0)

    def _open(self, item: QListWidgetItem) -> None:
        self.chosen.emit(item.data(_CITATION))
