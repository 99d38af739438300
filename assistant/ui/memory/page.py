"""The sidebar's Memories tab: search and filters, the list, the selected memory's detail, and
the bar of actions (`controller.py` does what they do, `search.py` finds what the list shows)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from assistant.memory import MemoryChange, MemoryItem, SearchHit
from assistant.ui.bridge import StoreBridge
from assistant.ui.debounce import Debounced
from assistant.ui.memory.controller import MemoryController
from assistant.ui.memory.delegate import MemoryDelegate
from assistant.ui.memory.detail import WHY_ANCHOR, DetailFacts, MemoryDetailView
from assistant.ui.memory.file_hits import FileHitsList
from assistant.ui.memory.filters import MemoryFilterBar
from assistant.ui.memory.list_view import MemoryListFrame, empty_text
from assistant.ui.memory.model import GLOBAL, MemoryListModel
from assistant.ui.memory.search import MemorySearch
from assistant.ui.memory.timeline import MemoryTimeline
from assistant.ui.notice_bar import NoticeBar
from assistant.ui.theme import set_muted
from assistant.ui.wording import count
from assistant.workspace import Workspace


class MemoriesPage(QWidget):
    """Long-term memories: search, filter, pin, edit, add, forget, and the selected one in full.

    Store changes, also those the agent makes on its own thread, arrive through the bridge.
    """

    source_requested = Signal(str, str)  # conversation id, message id ("" if unknown)
    file_requested = Signal(object)  # a Citation: a passage of a file that the search found

    def __init__(
        self, workspace: Workspace, bridge: StoreBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoriesPage")
        self._workspace = workspace
        self._bridge = bridge
        self._memory = workspace.memory
        self._conversation_titles: dict[str, str] | None = None
        # Selection, data and store signals come in bursts: the detail is drawn once per burst.
        self._detail_due = Debounced(0, self._refresh_detail, self)
        self._show_numbers = False  # the detail shows the numbers behind the selected hit

        self.model = MemoryListModel(workspace.memory, self, workspace.projects)
        self.delegate = MemoryDelegate(self)
        self.search = MemorySearch(workspace.memory, self.model, self, workspace.knowledge)
        self.search.found.connect(self._on_search_found)
        self.search.shown.connect(self._on_rows_changed)
        self.search.failed.connect(self._on_search_failed)
        self.search.again.connect(self._apply_query)

        self._build()
        self.controller = MemoryController(workspace, self, self)
        self.controller.undo_changed.connect(self._update_actions)
        self.delegate.pin_clicked.connect(self.controller.toggle_pin)
        self.list_frame.empty_add.clicked.connect(self.controller.add_memory_dialog)
        self.list_frame.empty_clear.clicked.connect(self.filters.clear_filters)
        self._connect_actions()
        self.model.modelReset.connect(self._on_rows_changed)
        self.model.rowsInserted.connect(self._on_rows_changed)
        self.model.rowsRemoved.connect(self._on_rows_changed)
        self.list_view.selectionModel().currentChanged.connect(self._on_current_changed)
        # A mouse click makes the row current before it selects it: follow the selection too.
        self.list_view.selectionModel().selectionChanged.connect(self._update_actions)
        self.model.dataChanged.connect(self._update_actions)

        bridge.memory_changed.connect(self._on_memory_changed)
        bridge.conversation_changed.connect(self._forget_titles)

        self.projects_changed()
        self._refresh_keyword_note()
        self._on_rows_changed()

    # -- building -----------------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 6)
        layout.setSpacing(6)
        self.filters = MemoryFilterBar(self)
        self.filters.query_changed.connect(self._apply_query)
        self.filters.filter_changed.connect(self._on_filter_changed)
        self.list_frame = MemoryListFrame(self.model, self.delegate, self)
        self.list_view = self.list_frame.list_view
        self.list_view.customContextMenuRequested.connect(self._on_context_menu)
        self.list_view.doubleClicked.connect(self._on_double_clicked)
        self.detail = MemoryDetailView(self)
        self.detail.source_requested.connect(self.source_requested)
        self.detail.memory_requested.connect(self.show_memory)
        self.detail.numbers_toggled.connect(self._toggle_numbers)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("memorySplitter")
        self.splitter.setChildrenCollapsible(True)
        self.file_hits = FileHitsList(self)
        self.file_hits.chosen.connect(self.file_requested)
        self.search.files_found.connect(self.file_hits.show_hits)
        self.splitter.addWidget(self.list_frame)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.timeline_button = QToolButton(self)
        self.timeline_button.setObjectName("memoryTimelineButton")
        self.timeline_button.setAutoRaise(True)
        self.filters.add_to_row(self.timeline_button)
        self._timeline: MemoryTimeline | None = None
        self.notice = NoticeBar(self)
        bar = self._build_bar()
        layout.addWidget(self.filters)
        layout.addWidget(self.notice)  # above the list: it never moves the buttons under a click
        layout.addWidget(self.file_hits)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bar)

    def _build_bar(self) -> QHBoxLayout:
        self.add_button = QToolButton(self)
        self.add_button.setObjectName("memoryAddButton")
        self.edit_button = QToolButton(self)
        self.edit_button.setObjectName("memoryEditButton")
        self.forget_button = QToolButton(self)
        self.forget_button.setObjectName("memoryForgetButton")
        self.count_label = QLabel(self)
        self.count_label.setObjectName("memoryCount")
        set_muted(self.count_label)
        bar = QHBoxLayout()
        bar.setSpacing(2)
        bar.addWidget(self.add_button)
        bar.addWidget(self.edit_button)
        bar.addWidget(self.forget_button)
        bar.addStretch(1)
        bar.addWidget(self.count_label)
        return bar

    def _connect_actions(self) -> None:
        controller = self.controller
        self.timeline_button.setDefaultAction(controller.timeline)
        self.timeline_button.setAccessibleName("Memory Timeline")
        self.timeline_button.setAccessibleDescription(
            "Opens what Assistant learned, changed and forgot, by day"
        )
        self.list_view.installEventFilter(self)
        self.add_button.setDefaultAction(controller.add)
        self.edit_button.setDefaultAction(controller.edit)
        self.forget_button.setDefaultAction(controller.forget)
        for button in (self.add_button, self.edit_button, self.forget_button):
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._update_actions()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Keys on the list: Delete forgets, Enter edits, Undo restores the last forgotten."""
        if watched is not self.list_view or not isinstance(event, QKeyEvent):
            return super().eventFilter(watched, event)
        key = event.key()
        handler: Callable[[], object] | None = None
        if key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            handler = self.controller.forget_selected
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            handler = self.controller.edit_selected
        elif event.matches(QKeySequence.StandardKey.Undo):
            handler = self.controller.undo_forget
        if handler is None:
            return False
        if event.type() == QEvent.Type.ShortcutOverride:
            event.accept()  # the list's keys win over window shortcuts while it has focus
            return True
        if event.type() == QEvent.Type.KeyPress:
            handler()
            return True
        return False

    # -- what the actions ask of the view -------------------------------------------------------

    def projects_changed(self) -> None:
        """The projects changed: list them in the scope filter, and the scopes again."""
        self.filters.set_projects(self._workspace.projects.all())
        self.model.refresh()

    def show_memory(self, memory_id: str) -> bool:
        """Select and reveal a memory, clearing the search or filters that hide it."""
        item = self._memory.get(memory_id)
        if item is None:
            return False
        if self.model.row_of(memory_id) < 0:
            if self.filters.search.text():
                self.filters.search.clear()
                self._apply_query()
            self.filters.reveal(item.kind, item.state, item.origin, item.project or GLOBAL)
        return self.select(memory_id)

    def selected_item(self) -> MemoryItem | None:
        """The memory selected in the list, if any."""
        index = self.list_view.currentIndex()
        if not self.list_view.selectionModel().isSelected(index):
            return None
        return self.model.item_at(index)

    def select(self, memory_id: str) -> bool:
        """Select a memory listed now and scroll to it; False if it is not listed."""
        index = self.model.index_of(memory_id)
        if not index.isValid():
            return False
        self.list_view.setCurrentIndex(index)
        self.list_view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)
        self._detail_due.flush()  # shown at once when chosen from elsewhere (a link, a chip)
        return True

    def row_of(self, memory_id: str) -> int:
        """The memory's row in the list, or -1."""
        return self.model.row_of(memory_id)

    def select_row(self, row: int) -> None:
        """Make the row nearest to `row` current (after the one there went)."""
        if self.model.rowCount():
            self.list_view.setCurrentIndex(self.model.index(min(row, self.model.rowCount() - 1)))

    def show_source(self, item: MemoryItem) -> None:
        """Ask for the message `item` came from, if its conversation is still there."""
        if item.source is not None and self._source_exists(item):
            self.source_requested.emit(item.source.conversation_id, item.source.message_id or "")

    def reflection_notice(self) -> NoticeBar:
        """Where Reflect Now answers: the timeline's notice while it is open, else the page's."""
        timeline = self._timeline
        return timeline.notice if timeline is not None and timeline.isVisible() else self.notice

    def show_timeline(self) -> MemoryTimeline:
        """Open (or bring up) the memory timeline window."""
        if self._timeline is None:
            self._timeline = MemoryTimeline(
                self._memory, self._bridge, self._titles, self, actions=(self.controller.reflect,)
            )
            self._timeline.memory_requested.connect(self.show_memory)
            self._timeline.source_requested.connect(self.source_requested)
        self._timeline.show()
        self._timeline.raise_()
        self._timeline.activateWindow()
        return self._timeline

    def explain_selected(self) -> None:
        """Show the numbers behind the selected search result's rank, in the detail view."""
        if self.model.hit_at(self.list_view.currentIndex()) is not None:
            self._show_numbers = True
            self._refresh_detail()
            self.detail.scrollToAnchor(WHY_ANCHOR)

    def _toggle_numbers(self) -> None:
        self._show_numbers = not self._show_numbers
        self._refresh_detail()

    # -- slots --------------------------------------------------------------------------------

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.controller.edit_selected()

    def _on_context_menu(self, pos: QPoint) -> None:
        menu = self.context_menu(pos)
        menu.exec(self.list_view.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def context_menu(self, pos: QPoint) -> QMenu:
        """The menu for a right-click at `pos` in the list (selecting the row under it)."""
        index = self.list_view.indexAt(pos)
        if index.isValid():
            self.list_view.setCurrentIndex(index)
        self._update_actions()
        return self.controller.menu(index.isValid())

    def _on_current_changed(self, *_args: object) -> None:
        self._show_numbers = False
        self._update_actions()

    def _on_filter_changed(self) -> None:
        kind = self.filters.kind()
        state = self.filters.state()
        previous = self.model.state
        self.model.set_scope(self.filters.scope())
        self.model.set_filter(state, kind, self.filters.origins())
        if state != previous:
            self._apply_query()
        self._on_rows_changed()

    def _apply_query(self) -> None:
        """Search now: semantic search for active memories, a word filter for the others."""
        self.filters.cancel_typing()
        self.search.apply(self.filters.query())

    def _on_search_found(self, hits: list[SearchHit]) -> None:
        kept = self.selected_item()
        self.model.set_hits(hits)
        if kept is not None:
            self.select(kept.id)
        self._on_rows_changed()

    def _on_search_failed(self, message: str) -> None:
        self.notice.show_notice(f"Search failed: {message}")

    def _on_memory_changed(self, change: MemoryChange) -> None:
        self.model.on_memory_changed(change)
        if change.kind == "added":
            self.search.memories_added()
        if change.kind in ("added", "updated", "embeddings"):
            self._refresh_keyword_note()
        if change.kind in ("added", "updated"):
            self.controller.check_pinned_budget()
        self._update_actions()

    def _forget_titles(self, conversation_id: str) -> None:
        """A conversation changed (most often: a message was added); the titles are read
        again when next needed, at once only if the selected memory came from it."""
        self._conversation_titles = None
        source = (item := self.selected_item()) and item.source
        if source and source.conversation_id == conversation_id:
            self._update_actions()

    def _on_rows_changed(self, *_args: object) -> None:
        self._update_empty_state()
        self._update_count()
        self._update_actions()

    # -- refreshing ---------------------------------------------------------------------------

    def _update_actions(self, *_args: object) -> None:
        item = self.selected_item()
        self.controller.update(
            item, source_exists=self._source_exists(item), searching=self.model.is_searching()
        )
        self._detail_due.trigger()

    def _source_exists(self, item: MemoryItem | None) -> bool:
        """Whether the conversation `item` came from is still there."""
        source = item.source if item is not None else None
        return source is not None and source.conversation_id in self._titles()

    def _refresh_detail(self) -> None:
        item = self.selected_item()
        if item is None:
            self.detail.show_facts(None)
            return
        self.detail.show_facts(
            DetailFacts.gather(
                item,
                self.model.hit_at(self.list_view.currentIndex()),
                self._memory,
                self._titles(),
                show_numbers=self._show_numbers,
                projects={p.id: p.name for p in self._workspace.projects.all()},
            )
        )

    def _titles(self) -> dict[str, str]:
        """The conversations' titles by id (kept until a conversation changes)."""
        if self._conversation_titles is None:
            self._conversation_titles = {c.id: c.title for c in self._workspace.conversations.all()}
        return self._conversation_titles

    def _update_count(self) -> None:
        n = self.model.rowCount()
        if self.model.is_searching() or self.search.query:
            label = count(n, "result")
        else:
            label = count(n, "memory", "memories")
        self.count_label.setText(label if n else "")
        self._fit_bar()

    def _fit_bar(self) -> None:
        """No count where the page is too narrow for it."""
        buttons = sum(
            b.sizeHint().width() for b in (self.add_button, self.edit_button, self.forget_button)
        )
        room = self.width() - 16 - buttons - 12
        self.count_label.setVisible(
            bool(self.count_label.text()) and room >= self.count_label.sizeHint().width()
        )

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Refit the bottom bar."""
        super().resizeEvent(event)
        self._fit_bar()

    def _update_empty_state(self) -> None:
        if self.model.rowCount():
            self.list_frame.show_list()
            self.detail.show()
        elif not self.search.running:  # else keep what is shown until the results arrive
            filtered = self.filters.filtered()
            self.list_frame.show_empty(
                *empty_text(self.search.query, self.model.state, self.model.kind, filtered)
            )
            self.detail.hide()  # nothing to select: the empty list has the room

    def _refresh_keyword_note(self) -> None:
        self.filters.show_embedding_status(self._memory.embedding_status())
