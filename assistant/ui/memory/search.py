"""What the memories list shows for a query: a hybrid search of the active memories, run in
the background (only the latest counts), or a word filter over the archived or forgotten ones."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from assistant.memory import SearchHit, SemanticMemory
from assistant.ui.debounce import Debounced
from assistant.ui.jobs import LatestJob, Progress
from assistant.ui.memory.filters import SEARCH_DELAY_MS
from assistant.ui.memory.model import MemoryListModel

SEARCH_RESULTS = 50


class MemorySearch(QObject):
    """Searches for the memories list and puts what it finds in its model."""

    found = Signal(list)  # the hits of a search, for the page to show (keeping its selection)
    shown = Signal()  # the list shows the query's rows (a filter: at once)
    failed = Signal(str)
    again = Signal()  # memories were added while searching: apply the query again

    def __init__(self, memory: SemanticMemory, model: MemoryListModel, parent: QObject) -> None:
        super().__init__(parent)
        self._memory = memory
        self._model = model
        self._job: LatestJob[tuple[str, list[SearchHit]]] = LatestJob(
            self._on_done, self.failed.emit, self
        )
        self.query = ""  # the text of the rows shown
        # Memories added while search results show (an import, the curator) are searched for
        # again once they stop arriving.
        self._again = Debounced(SEARCH_DELAY_MS, self._repeat, self)

    @property
    def running(self) -> bool:
        """Whether a search is under way (its results are not shown yet)."""
        return self._job.running

    def apply(self, text: str) -> None:
        """Show the memories that match `text` (all of them for "")."""
        self._job.cancel()
        model = self._model
        if model.state != "active":
            model.clear_hits()
            model.set_text_filter(text)
            self.query = text
            self.shown.emit()
            return
        model.set_text_filter("")
        if not text:
            self.query = ""
            model.clear_hits()
            self.shown.emit()
            return
        memory = self._memory

        def search(_progress: Progress) -> tuple[str, list[SearchHit]]:
            return text, memory.search(text, k=SEARCH_RESULTS, prefix=True)

        self._job.run(search)

    def memories_added(self) -> None:
        """Search again soon if search results show (the new memories may be among them)."""
        if self._model.is_searching():
            self._again.trigger()

    def _repeat(self) -> None:
        if self._model.is_searching():
            self.again.emit()

    def _on_done(self, result: tuple[str, list[SearchHit]]) -> None:
        text, hits = result
        self.query = text
        self.found.emit(hits)
