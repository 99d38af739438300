"""The knowledge service for the window: its events as a Qt signal on the GUI thread."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from assistant.knowledge import Knowledge, KnowledgeEvent, KnowledgeService


class KnowledgeBridge(QObject):
    """Runs a `KnowledgeService` for the window's life; `changed` carries its `KnowledgeEvent`s."""

    changed = Signal(object)  # a KnowledgeEvent, queued to the GUI thread

    def __init__(self, knowledge: Knowledge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.knowledge = knowledge
        self.last: KnowledgeEvent | None = None  # for a page opened while work is under way
        self.changed.connect(self._remember)
        self._service = KnowledgeService(knowledge, self.changed.emit)
        self._started = False

    def start(self) -> None:
        """Load the index, rescan the folders, then follow changes (in the background)."""
        if not self._started:
            self._started = True
            self._service.start()

    def rescan(self) -> None:
        """Apply changed folders or rules: scan every folder again."""
        self._service.rescan()

    def stop(self) -> None:
        """End the service (the file being read is finished first)."""
        self._service.stop()

    def _remember(self, event: KnowledgeEvent) -> None:
        self.last = event
