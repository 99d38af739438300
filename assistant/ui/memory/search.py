"""What the memories list shows for a query: a hybrid search of the active memories, run in
the background (only the latest counts), or a word filter over the archived or forgotten ones;
the knowledge folders' passages that match are found with the memories, to show apart."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from assistant.memory import SearchHit, SemanticMemory
from assistant.ui.debounce import Debounced
from assistant.ui.jobs import LatestJob, Progress
from assistant.ui.memory.filters import SEARCH_DELAY_MS
from assistant.ui.memory.model import MemoryListModel

if TYPE_CHECKING:
    from assistant.knowledge import FileHit, Knowledge

SEARCH_RESULTS = 50
FILE_RESULTS = 5
_Found = tuple[str, list[SearchHit], list["FileHit"]]


class MemorySearch(QObject):
    """Searches for the memories list and puts what it finds in its model."""

    found = Signal(list)  # the hits of a search, for the page to show (keeping its selection)
    files_found = Signal(list)  # the FileHits of the knowledge folders for the same search
    shown = Signal()  # the list shows the query's rows (a filter: at once)
    failed = Signal(str)
    again = Signal()  # memories were added while searching: apply the query again

    def __init__(
        self,
        memory: SemanticMemory,
        model: MemoryListModel,
        parent: QObject,
        files: Knowledge | None = None,
    ) -> None:
        super().__init__(parent)
        self._memory = memory
        self._model = model
        self._files = files
        self._job: LatestJob[_Found] = LatestJob(self._on_done, self.failed.emit, self)
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
        if model.state != "active" or not text:
            self.files_found.emit([])
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
        memory, files = self._memory, self._files

        def search(_progress: Progress) -> _Found:
            hits = memory.search(text, k=SEARCH_RESULTS, prefix=True)
            return text, hits, files.search(text, FILE_RESULTS) if files is not None else []

        self._job.run(search)

    def memories_added(self) -> None:
        """Search again soon if search results show (the new memories may be among them)."""
        if self._model.is_searching():
            self._again.trigger()

    def _repeat(self) -> None:
        if self._model.is_searching():
            self.again.emit()

    def _on_done(self, result: _Found) -> None:
        text, hits, file_hits = result
        self.query = text
        self.found.emit(hits)
        self.files_found.emit(file_hits)
