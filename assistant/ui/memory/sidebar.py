"""The memory sidebar: four tabs, the long-term memories, the working memory, this
conversation's summary and topics, and the memories waiting for review (with their count)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from assistant.memory import Conversation, WorkingMemory
from assistant.ui.bridge import StoreBridge
from assistant.ui.memory.page import MemoriesPage
from assistant.ui.memory.pages import ConversationView, WorkingMemoryView
from assistant.ui.memory.review_page import ReviewPage
from assistant.ui.memory.timeline import MemoryTimeline
from assistant.workspace import Workspace

# "Chat" at every width: help texts and the README name the tab by it.
TAB_LABELS = ("Memories", "Working memory", "Chat", "Review")
TAB_SHORT_LABELS = ("Memories", "Working", "Chat", "Review")  # the Review count must show
REVIEW_TAB = 3


def review_label(label: str, waiting: int) -> str:
    """The Review tab's title: with the number of memories waiting, if any."""
    return f"{label} ({waiting})" if waiting else label


class MemorySidebar(QWidget):
    """The right-hand pane: the memories, the working memory and the conversation's summary,
    each on a tab, following the conversation shown."""

    source_requested = Signal(str, str)  # conversation id, message id ("" if unknown)
    file_requested = Signal(object)  # a Citation: a file passage its search found

    def __init__(
        self, workspace: Workspace, bridge: StoreBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memorySidebar")
        self._workspace = workspace
        self._conversation: Conversation | None = None

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("memoryTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.tabBar().setExpanding(True)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)  # the pane may be narrow
        self.tabs.setUsesScrollButtons(False)
        self.memories = MemoriesPage(workspace, bridge, self)
        self.memories.source_requested.connect(self.source_requested)
        self.memories.file_requested.connect(self.file_requested)
        self.working_view = WorkingMemoryView(self)
        self.conversation_view = ConversationView(self)
        self.review = ReviewPage(workspace, self)
        self.tabs.addTab(self.memories, TAB_LABELS[0])
        self.tabs.addTab(self.working_view, TAB_LABELS[1])
        self.tabs.addTab(self.conversation_view, TAB_LABELS[2])
        self.tabs.addTab(self.review, TAB_LABELS[3])
        self.tabs.setTabToolTip(REVIEW_TAB, "Memories waiting for you to accept or reject them")
        self._waiting = 0
        self.review.count_changed.connect(self._on_waiting)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        bridge.working_changed.connect(self._on_working_changed)
        bridge.topics_changed.connect(self._refresh_conversation)
        bridge.inbox_changed.connect(self.review.refresh)
        self.review.refresh()
        self._refresh_working()
        self._refresh_conversation()

    def set_conversation(self, conversation: Conversation | None) -> None:
        """Show the working memory and summary of this conversation (None: no conversation);
        called again whenever it changes."""
        self._conversation = conversation
        self._refresh_working()
        self._refresh_conversation()

    def conversation_id(self) -> str | None:
        """The conversation shown in the working memory and conversation pages."""
        return None if self._conversation is None else self._conversation.id

    def refresh_instructions(self) -> None:
        """Show the custom instructions again (they were edited)."""
        self._refresh_conversation()

    def show_memory(self, memory_id: str) -> bool:
        """Select and reveal a memory on the Memories tab (False if there is no such memory)."""
        self.tabs.setCurrentIndex(0)
        return self.memories.show_memory(memory_id)

    def show_review(self) -> None:
        """Show the Review tab (the proposals waiting for the user)."""
        self.tabs.setCurrentWidget(self.review)

    def show_timeline(self) -> MemoryTimeline:
        """Open (or bring up) the memory timeline window."""
        return self.memories.show_timeline()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Shorter tab titles where the pane is too narrow for them."""
        super().resizeEvent(event)
        self._label_tabs()

    def _label_tabs(self) -> None:
        metrics = self.tabs.tabBar().fontMetrics()

        def fits(labels: tuple[str, ...]) -> bool:
            shown = [*labels[:REVIEW_TAB], review_label(labels[REVIEW_TAB], self._waiting)]
            return sum(metrics.horizontalAdvance(s) + 28 for s in shown) <= self.tabs.width()

        labels = TAB_LABELS if fits(TAB_LABELS) else TAB_SHORT_LABELS
        for n, label in enumerate(labels):
            self.tabs.setTabText(
                n, review_label(label, self._waiting) if n == REVIEW_TAB else label
            )
        self.tabs.tabBar().setAccessibleName(f"Memory panel, {self._waiting} waiting for review")

    def _on_waiting(self, waiting: int) -> None:
        self._waiting = waiting
        self._label_tabs()

    def _on_working_changed(self, conversation_id: str) -> None:
        if conversation_id == self.conversation_id():
            self._refresh_working()

    def _refresh_working(self) -> None:
        cid = self.conversation_id()
        self.working_view.show_working(self._workspace.working.get(cid) if cid else WorkingMemory())

    def _refresh_conversation(self) -> None:
        self.conversation_view.show_conversation(
            self._conversation,
            self._workspace.topics.all(),
            self._workspace.memory.get,
            self._workspace.instructions_for(self._conversation),
        )
