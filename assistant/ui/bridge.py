"""Store change notifications, delivered as Qt signals on the GUI thread."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from assistant.memory import ConversationWrite, MemoryChange
from assistant.workspace import Workspace


class StoreBridge(QObject):
    """Subscribes to the workspace's stores; emits from any thread, Qt queues to receivers."""

    memory_changed = Signal(object)  # MemoryChange
    working_changed = Signal(str)  # conversation id
    conversation_changed = Signal(str)  # conversation id
    conversation_written = Signal(object)  # ConversationWrite: what changed in it
    topics_changed = Signal()
    inbox_changed = Signal()  # proposals came into the review inbox or left it
    projects_changed = Signal(str)  # project id (created, changed or deleted)
    notice = Signal(str)  # something the core wants the user to know, for the status bar

    def __init__(self, workspace: Workspace, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe = [
            workspace.memory.subscribe(self._on_memory),
            workspace.working.subscribe(self.working_changed.emit),
            workspace.conversations.subscribe(self.conversation_changed.emit),
            workspace.conversations.subscribe_writes(self._on_written),
            workspace.topics.subscribe(self.topics_changed.emit),
            workspace.inbox.subscribe(self.inbox_changed.emit),
            workspace.projects.subscribe(self.projects_changed.emit),
            workspace.notices.subscribe(self.notice.emit),
        ]

    def _on_memory(self, change: MemoryChange) -> None:
        self.memory_changed.emit(change)

    def _on_written(self, write: ConversationWrite) -> None:
        self.conversation_written.emit(write)

    def disconnect_stores(self) -> None:
        """Stop listening (before the workspace closes)."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
