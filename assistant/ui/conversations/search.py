"""Search all conversations (Ctrl+K): type, pick a hit, the chat opens at that message.

Passages of the knowledge folders' files show among the messages, by score, marked "▤ File:"
with the file and place (a message's hit names its conversation); picking one opens the file
there. The search runs in the background (embedding the query may wait for the embedding
server); the hits shown stay until the new ones arrive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from assistant.memory import ConversationHit, ConversationStore
from assistant.ui.chat.markdown import plain_text
from assistant.ui.conversations.hit_delegate import HIT_TEXT_ROLE, HitDelegate
from assistant.ui.debounce import Debounced
from assistant.ui.jobs import LatestJob, Progress

if TYPE_CHECKING:
    from assistant.knowledge import FileHit, Knowledge

SEARCH_DELAY_MS = 150
HITS = 30
FILE_HITS = 8
# A hit under this share of the best hit's score is not shown. On LoCoMo (130 sessions as
# conversations, 999 questions; tests/bench/quick_search_bench.py) half keeps 96 % of the
# answering messages found, and shows 16 hits a question instead of 30 (off-topic queries:
# 8 instead of 13).
WEAK_SHARE = 0.5
FILE_MARK = "▤ File: "
_HIT = Qt.ItemDataRole.UserRole + 1


class _QueryField(QLineEdit):
    """Up and Down move through the hits while typing."""

    def __init__(self, hits: QListWidget, parent: QWidget) -> None:
        super().__init__(parent)
        self._hits = hits

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self._hits.count():
            step = 1 if event.key() == Qt.Key.Key_Down else -1
            row = max(0, min(self._hits.count() - 1, self._hits.currentRow() + step))
            self._hits.setCurrentRow(row)
        else:
            super().keyPressEvent(event)


class ChatSearchDialog(QDialog):
    """Finds messages in every (non-temporary) conversation with the store's search."""

    chosen = Signal(str, str)  # conversation id, message id
    file_chosen = Signal(object)  # the Citation of a file passage

    def __init__(
        self,
        store: ConversationStore,
        parent: QWidget | None = None,
        files: Knowledge | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chatSearchDialog")
        self.setWindowTitle("Search all conversations")
        self._store = store
        self._files = files
        self.hits = QListWidget(self)
        self.hits.setObjectName("chatSearchHits")
        self.hits.setAccessibleName("Messages found")
        self.hits.setWordWrap(True)
        self.hits.setItemDelegate(HitDelegate(self.hits))
        self._searched = ""  # the words of the search under way, to mark in its hits
        self.hits.itemActivated.connect(self._open)
        self.field = _QueryField(self.hits, self)
        self.field.setObjectName("chatSearchField")
        self.field.setAccessibleName("Search all conversations")
        self.field.setPlaceholderText("Search the messages of all conversations")
        self.field.setClearButtonEnabled(True)
        self.field.returnPressed.connect(self._open_current)
        self.status = QLabel(self)
        self.status.setAccessibleName("Search result")
        self._search: LatestJob[list[ConversationHit | FileHit]] = LatestJob(
            self._on_found, self._on_failed, self
        )
        self._open_when_found = False  # Enter was pressed while searching
        self._delay = Debounced(SEARCH_DELAY_MS, self.run_search, self)
        self.field.textChanged.connect(self._delay.trigger)
        layout = QVBoxLayout(self)
        layout.addWidget(self.field)
        layout.addWidget(self.hits, 1)
        layout.addWidget(self.status)
        self.setTabOrder(self.field, self.hits)
        self.field.setFocus()
        self.resize(560, 420)

    def run_search(self) -> None:
        """Search for the typed words now; the hits, best first, replace the list when found."""
        self._delay.cancel()
        self._open_when_found = False
        query = self.field.text().strip()
        if not query:
            self._search.cancel()
            self.hits.clear()
            self.status.clear()
            return
        store, files = self._store, self._files

        def search(_progress: Progress) -> list[ConversationHit | FileHit]:
            found: list[ConversationHit | FileHit] = list(store.search(query, k=HITS))
            if files is not None:
                found += files.search(query, FILE_HITS)
            return sorted(found, key=lambda hit: -hit.score)

        self._search.run(search)
        self._searched = query
        self.status.setText("Searching…")

    @property
    def searching(self) -> bool:
        """Whether a search is under way."""
        return self._search.running

    def _on_found(self, found: list[ConversationHit | FileHit]) -> None:
        from assistant.knowledge import Citation

        self.hits.clear()
        everything, found = len(found), strong_hits(found)
        weak = everything - len(found)
        for hit in found:
            snippet = " ".join(plain_text(hit.snippet).split())  # the words, not the Markdown
            data: tuple[str, str] | Citation
            if isinstance(hit, ConversationHit):
                title, data = hit.title, (hit.conversation_id, hit.message_id)
            else:
                title, data = f"{FILE_MARK}{hit.source()}", Citation(hit.path, hit.place)
            item = QListWidgetItem(f"{title}\n{snippet}", self.hits)  # what is read aloud
            item.setData(_HIT, data)
            item.setData(HIT_TEXT_ROLE, (title, snippet, self._searched))
            item.setToolTip(snippet if isinstance(hit, ConversationHit) else hit.path)
        if found:
            self.hits.setCurrentRow(0)
        hidden = f" ({weak} weaker not shown)" if weak else ""
        self.status.setText(
            "No message matches." if not found else f"{len(found)} found{hidden}; Enter opens one."
        )
        open_best, self._open_when_found = self._open_when_found, False
        if open_best and found:
            self._open(self.hits.item(0))

    def _on_failed(self, message: str) -> None:
        self._open_when_found = False
        self.hits.clear()
        self.status.setText(f"The search failed: {message}")

    def _open_current(self) -> None:
        """Enter: open the selected hit; while searching, the best hit once it is found."""
        self._delay.flush()
        if self._search.running:
            self._open_when_found = True
            return
        item = self.hits.currentItem()
        if item is not None:
            self._open(item)

    def _open(self, item: QListWidgetItem) -> None:
        data = item.data(_HIT)
        if isinstance(data, tuple):
            self.chosen.emit(*data)
        else:
            self.file_chosen.emit(data)
        self.accept()

    def done(self, result: int) -> None:
        """Closing drops the search under way: nothing opens after the dialog is gone."""
        self._search.cancel()
        self._open_when_found = False
        super().done(result)


def strong_hits(found: list[ConversationHit | FileHit]) -> list[ConversationHit | FileHit]:
    """The hits (best first) whose score is at least `WEAK_SHARE` of the best one's."""
    if not found:
        return found
    floor = WEAK_SHARE * max(hit.score for hit in found)
    return [hit for hit in found if hit.score >= floor]
