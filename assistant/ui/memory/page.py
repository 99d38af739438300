"""The sidebar's Memories tab: search and filters, the list, the selected memory's detail, and
the actions on memories (pin, edit, add, forget with Undo, reflect, the timeline)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QPalette, QResizeEvent
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

from assistant.errors import AssistantError
from assistant.memory import MemoryChange, MemoryItem, SearchHit
from assistant.ui.bridge import StoreBridge
from assistant.ui.debounce import Debounced
from assistant.ui.icons import draw_plus, drawn_icon
from assistant.ui.jobs import LatestJob, Progress, run_job
from assistant.ui.memory.delegate import MemoryDelegate
from assistant.ui.memory.detail import WHY_ANCHOR, DetailFacts, MemoryDetailView
from assistant.ui.memory.dialogs import MemoryDialog, MemoryValues
from assistant.ui.memory.filters import SEARCH_DELAY_MS, MemoryFilterBar
from assistant.ui.memory.list_view import MemoryListFrame, empty_text
from assistant.ui.memory.model import MemoryListModel
from assistant.ui.memory.timeline import MemoryTimeline
from assistant.ui.memory.wording import no_source_reason
from assistant.ui.notice_bar import NoticeBar
from assistant.ui.theme import set_muted
from assistant.ui.wording import count
from assistant.workspace import Workspace

SEARCH_RESULTS = 50


class Reflected(Protocol):
    """What `Workspace.reflect` returns: the insights written, or why there are none."""

    @property
    def insights(self) -> Sequence[MemoryItem]:
        """The insights written."""
        ...

    @property
    def note(self) -> str:
        """Why nothing was written, in words."""
        ...


class MemoriesPage(QWidget):
    """Long-term memories: search, filter, pin, edit, add, forget, and the selected one in full.

    Store changes, also those the agent makes on its own thread, arrive through the bridge.
    Calls that may reach the embedding server (add, edit, restore, search) run as jobs.
    """

    source_requested = Signal(str, str)  # conversation id, message id ("" if unknown)

    def __init__(
        self, workspace: Workspace, bridge: StoreBridge, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoriesPage")
        self._workspace = workspace
        self._bridge = bridge
        self._memory = workspace.memory
        self._forgotten: list[str] = []  # undo stack, newest last
        self._search: LatestJob[tuple[str, list[SearchHit]]] = LatestJob(
            self._on_search_done, self._on_search_failed, self
        )
        self._query = ""  # the text of the hits shown
        self._conversation_titles: dict[str, str] | None = None
        # Memories added while search results show (an import, the curator) are searched for
        # again once they stop arriving.
        self._search_again = Debounced(SEARCH_DELAY_MS, self._repeat_search, self)
        # Selection, data and store signals come in bursts: the detail is drawn once per burst.
        self._detail_due = Debounced(0, self._refresh_detail, self)
        self._show_numbers = False  # the detail shows the numbers behind the selected hit

        self.model = MemoryListModel(workspace.memory, self)
        self.delegate = MemoryDelegate(self)
        self.delegate.pin_clicked.connect(self._on_pin_clicked)

        self._build()
        self._build_actions()
        self.model.modelReset.connect(self._on_rows_changed)
        self.model.rowsInserted.connect(self._on_rows_changed)
        self.model.rowsRemoved.connect(self._on_rows_changed)
        self.list_view.selectionModel().currentChanged.connect(self._on_current_changed)
        # A mouse click makes the row current before it selects it: follow the selection too.
        self.list_view.selectionModel().selectionChanged.connect(self._update_actions)
        self.model.dataChanged.connect(self._update_actions)

        bridge.memory_changed.connect(self._on_memory_changed)
        bridge.conversation_changed.connect(self._forget_titles)

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
        self.search = self.filters.search
        self.kind_filter = self.filters.kind_filter
        self.state_filter = self.filters.state_filter
        self.keyword_note = self.filters.keyword_note
        self.list_frame = MemoryListFrame(self.model, self.delegate, self)
        self.list_view = self.list_frame.list_view
        self.list_stack = self.list_frame.list_stack
        self.empty_label = self.list_frame.empty_label
        self.empty_add = self.list_frame.empty_add
        self.list_view.customContextMenuRequested.connect(self._on_context_menu)
        self.list_view.doubleClicked.connect(self._on_double_clicked)
        self.empty_add.clicked.connect(self.add_memory_dialog)
        self.detail = MemoryDetailView(self)
        self.detail.source_requested.connect(self.source_requested)
        self.detail.memory_requested.connect(self.show_memory)
        self.detail.numbers_toggled.connect(self._toggle_numbers)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("memorySplitter")
        self.splitter.setChildrenCollapsible(True)
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
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.notice)
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

    def _build_actions(self) -> None:
        def action(text: str, slot: Callable[[], object], name: str) -> QAction:
            act = QAction(text, self)
            act.setObjectName(name)
            act.triggered.connect(slot)
            return act

        self.action_pin = action("Pin", self._toggle_pin_selected, "actionMemoryPin")
        self.action_edit = action("Edit…", self.edit_selected, "actionMemoryEdit")
        self.action_forget = action("Forget", self.forget_selected, "actionMemoryForget")
        self.action_restore = action("Restore", self.restore_selected, "actionMemoryRestore")
        self.action_add = action("Add memory…", self.add_memory_dialog, "actionMemoryAdd")
        self.action_source = action("Show source", self.show_source_selected, "actionMemorySource")
        self.action_why = action("Why this result", self.explain_selected, "actionMemoryWhy")
        self.action_undo = action("Undo forget", self.undo_forget, "actionMemoryUndo")
        self.action_timeline = action("Timeline", self.show_timeline, "actionMemoryTimeline")
        self.action_reflect = action("Reflect now", self.reflect_now, "actionMemoryReflect")
        self.action_reflect.setToolTip(
            "Read recent related memories and write up to three insights from them"
        )
        self.timeline_button.setDefaultAction(self.action_timeline)
        self.timeline_button.setAccessibleName("Memory timeline")
        self.timeline_button.setAccessibleDescription(
            "Opens what Assistant learned, changed and forgot, by day"
        )
        self.action_timeline.setToolTip("What Assistant learned, changed and forgot, by day")
        # The list's event filter handles the keys; these shortcuts only label the menu.
        self.action_forget.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.action_undo.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        for act in (self.action_forget, self.action_undo):
            act.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.list_view.installEventFilter(self)
        self.add_button.setDefaultAction(self.action_add)
        self.edit_button.setDefaultAction(self.action_edit)
        self.forget_button.setDefaultAction(self.action_forget)
        self.action_add.setIcon(
            drawn_icon("list-add", draw_plus, self.palette().color(QPalette.ColorRole.ButtonText))
        )
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
            handler = self.forget_selected
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            handler = self.edit_selected
        elif event.matches(QKeySequence.StandardKey.Undo):
            handler = self.undo_forget
        if handler is None:
            return False
        if event.type() == QEvent.Type.ShortcutOverride:
            event.accept()  # the list's keys win over window shortcuts while it has focus
            return True
        if event.type() == QEvent.Type.KeyPress:
            handler()
            return True
        return False

    # -- public API ---------------------------------------------------------------------------

    def show_memory(self, memory_id: str) -> bool:
        """Select and reveal a memory, clearing the search or filters that hide it."""
        item = self._memory.get(memory_id)
        if item is None:
            return False
        if self.model.row_of(memory_id) < 0:
            if self.search.text():
                self.search.clear()
                self._apply_query()
            self.filters.reveal(item.kind, item.state)
        return self._select(memory_id)

    def selected_item(self) -> MemoryItem | None:
        """The memory selected in the list, if any."""
        index = self.list_view.currentIndex()
        if not self.list_view.selectionModel().isSelected(index):
            return None
        return self.model.item_at(index)

    def add_memory(self, values: MemoryValues) -> None:
        """Add a memory in the background; it appears (and is selected) when saved."""
        memory = self._memory
        run_job(
            lambda _p: memory.add(values.text, values.kind, values.importance),
            on_done=self._on_added,
            on_error=self._on_job_error,
        )

    def edit_memory(self, memory_id: str, values: MemoryValues) -> None:
        """Change a memory's text, kind and importance in the background."""
        memory = self._memory
        run_job(
            lambda _p: memory.update(
                memory_id, text=values.text, kind=values.kind, importance=values.importance
            ),
            on_done=self._on_saved,
            on_error=self._on_job_error,
        )

    def set_pinned(self, memory_id: str, pinned: bool) -> None:
        """Pin or unpin a memory."""
        try:
            self._memory.pin(memory_id, pinned)
        except (KeyError, AssistantError) as exc:
            self.notice.show_notice(f"Could not change the pin: {exc}")

    def forget_memory(self, memory_id: str) -> None:
        """Forget a memory now, with an Undo that works until the app quits."""
        row = self.model.row_of(memory_id)
        try:
            self._memory.forget(memory_id)
        except (KeyError, AssistantError) as exc:
            self.notice.show_notice(f"Could not forget the memory: {exc}")
            return
        self._forgotten.append(memory_id)
        self.notice.show_notice("Memory forgotten.", "Undo", self.undo_forget)
        self._update_actions()
        if row >= 0 and self.model.rowCount():
            self.list_view.setCurrentIndex(self.model.index(min(row, self.model.rowCount() - 1)))

    def undo_forget(self) -> bool:
        """Restore the most recently forgotten memory that is still forgotten."""
        while self._forgotten:
            memory_id = self._forgotten.pop()
            item = self._memory.get(memory_id)
            if item is not None and item.state == "forgotten":
                self.restore_memory(memory_id)
                self._update_actions()
                return True
        self._update_actions()
        return False

    def restore_memory(self, memory_id: str) -> None:
        """Bring a forgotten or archived memory back, in the background."""
        memory = self._memory
        run_job(
            lambda _p: memory.restore(memory_id),
            on_done=self._on_restored,
            on_error=self._on_job_error,
        )

    # -- actions on the selection -------------------------------------------------------------

    def add_memory_dialog(self) -> None:
        """Ask for a new memory and add it."""
        values = MemoryDialog.ask(self)
        if values is not None:
            self.add_memory(values)

    def edit_selected(self) -> None:
        """Edit the selected memory in a dialog."""
        item = self.selected_item()
        if item is None:
            return
        values = MemoryDialog.ask(self, item)
        if values is not None and values != MemoryValues(item.text, item.kind, item.importance):
            self.edit_memory(item.id, values)

    def forget_selected(self) -> None:
        """Forget the selected memory (Delete)."""
        item = self.selected_item()
        if item is not None and item.state != "forgotten":
            self.forget_memory(item.id)

    def restore_selected(self) -> None:
        """Restore the selected forgotten or archived memory."""
        item = self.selected_item()
        if item is not None and item.state != "active":
            if item.id in self._forgotten:
                self._forgotten.remove(item.id)
            self.restore_memory(item.id)

    def show_source_selected(self) -> None:
        """Ask for the message the selected memory came from."""
        item = self.selected_item()
        if item is not None and item.source is not None and self._source_exists(item):
            self.source_requested.emit(item.source.conversation_id, item.source.message_id or "")

    def show_timeline(self) -> MemoryTimeline:
        """Open (or bring up) the memory timeline window."""
        if self._timeline is None:
            self._timeline = MemoryTimeline(
                self._memory, self._bridge, self._titles, self, actions=(self.action_reflect,)
            )
            self._timeline.memory_requested.connect(self.show_memory)
            self._timeline.source_requested.connect(self.source_requested)
        self._timeline.show()
        self._timeline.raise_()
        self._timeline.activateWindow()
        return self._timeline

    def reflect_now(self) -> None:
        """Write insights from recent related memories now, in the background."""
        if not self.action_reflect.isEnabled():  # one is under way
            return
        self.action_reflect.setEnabled(False)
        self.notice.show_notice("Reflecting on recent memories…", timeout_ms=0)
        workspace = self._workspace
        run_job(
            lambda _p: workspace.reflect(),
            on_done=self._on_reflected,
            on_error=self._on_reflect_failed,
        )

    def _on_reflected(self, reflection: Reflected) -> None:
        self.action_reflect.setEnabled(True)
        insights = list(reflection.insights)
        if not insights:
            self.notice.show_notice(reflection.note or "No new insight.", title="Reflect now")
            return
        first = insights[0].id
        self.notice.show_notice(
            f"Wrote {count(len(insights), 'insight')}.", "Show", lambda: self.show_memory(first)
        )

    def _on_reflect_failed(self, message: str) -> None:
        self.action_reflect.setEnabled(True)
        self.notice.show_notice(f"Could not reflect: {message}")

    def explain_selected(self) -> None:
        """Show the numbers behind the selected search result's rank, in the detail view."""
        if self.model.hit_at(self.list_view.currentIndex()) is not None:
            self._show_numbers = True
            self._refresh_detail()
            self.detail.scrollToAnchor(WHY_ANCHOR)

    def _toggle_numbers(self) -> None:
        self._show_numbers = not self._show_numbers
        self._refresh_detail()

    def _toggle_pin_selected(self) -> None:
        item = self.selected_item()
        if item is not None:
            self.set_pinned(item.id, not item.pinned)

    # -- slots --------------------------------------------------------------------------------

    def _on_pin_clicked(self, memory_id: str) -> None:
        item = self._memory.get(memory_id)
        if item is not None:
            self.set_pinned(memory_id, not item.pinned)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.edit_selected()

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
        menu = QMenu(self)
        if index.isValid():
            menu.addAction(self.action_pin)
            menu.addAction(self.action_edit)
            menu.addSeparator()
            if self.action_restore.isEnabled():
                menu.addAction(self.action_restore)
            if self.action_forget.isEnabled():
                menu.addAction(self.action_forget)
            menu.addSeparator()
            menu.addAction(self.action_source)
            menu.addAction(self.action_why)
            menu.addSeparator()
        menu.addAction(self.action_add)
        menu.addAction(self.action_reflect)
        if self._forgotten:
            menu.addAction(self.action_undo)
        return menu

    def _on_current_changed(self, *_args: object) -> None:
        self._show_numbers = False
        self._update_actions()

    def _on_filter_changed(self) -> None:
        kind = self.filters.kind()
        state = self.filters.state()
        previous = self.model.state
        self.model.set_filter(state, kind)
        if state != previous:
            self._apply_query()
        self._on_rows_changed()

    def _apply_query(self) -> None:
        """Search now: semantic search for active memories, a word filter for the others."""
        self.filters.cancel_typing()
        text = self.filters.query()
        self._search.cancel()
        if self.model.state != "active":
            self.model.clear_hits()
            self.model.set_text_filter(text)
            self._query = text
            self._on_rows_changed()
            return
        self.model.set_text_filter("")
        if not text:
            self._query = ""
            self.model.clear_hits()
            self._on_rows_changed()
            return
        memory = self._memory

        def search(_progress: Progress) -> tuple[str, list[SearchHit]]:
            return text, memory.search(text, k=SEARCH_RESULTS, prefix=True)

        self._search.run(search)

    def _on_search_done(self, result: tuple[str, list[SearchHit]]) -> None:
        text, hits = result
        self._query = text
        kept = self.selected_item()
        self.model.set_hits(hits)
        if kept is not None:
            self._select(kept.id)
        self._on_rows_changed()

    def _repeat_search(self) -> None:
        if self.model.is_searching():
            self._apply_query()

    def _on_search_failed(self, message: str) -> None:
        self.notice.show_notice(f"Search failed: {message}")

    def _on_added(self, item: MemoryItem) -> None:
        self.show_memory(item.id)  # clears a search or filter that would hide it

    def _on_saved(self, item: MemoryItem) -> None:
        self._select(item.id)

    def _on_restored(self, item: MemoryItem) -> None:
        self.notice.dismiss()
        self._select(item.id)

    def _on_job_error(self, message: str) -> None:
        self.notice.show_notice(message)

    def _on_memory_changed(self, change: MemoryChange) -> None:
        self.model.on_memory_changed(change)
        if change.kind == "added" and self.model.is_searching():
            self._search_again.trigger()
        if change.kind in ("added", "updated", "embeddings"):
            self._refresh_keyword_note()
        if change.kind in ("added", "updated"):
            self.check_pinned_budget()
        self._update_actions()

    def check_pinned_budget(self) -> None:
        """Warn when the pinned memories alone no longer fit in their share of a prompt."""
        overflow = self._workspace.pinned_overflow()
        if overflow is not None:
            used, allowed = overflow
            self.notice.show_notice(
                f"Pinned memories need about {used:,} tokens, more than the "
                f"{allowed:,} a prompt keeps for memories: the oldest "
                "pinned ones are left out. Unpin some, or raise the prompt budget in Settings.",
                timeout_ms=0,
                title="Too much pinned",
            )

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

    def _select(self, memory_id: str) -> bool:
        index = self.model.index_of(memory_id)
        if not index.isValid():
            return False
        self.list_view.setCurrentIndex(index)
        self.list_view.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)
        self._detail_due.flush()  # shown at once when chosen from elsewhere (a link, a chip)
        return True

    def _update_actions(self, *_args: object) -> None:
        item = self.selected_item()
        has = item is not None
        self.action_pin.setEnabled(has)
        self.action_pin.setText("Unpin" if item is not None and item.pinned else "Pin")
        self.action_edit.setEnabled(has)
        self.action_forget.setEnabled(item is not None and item.state != "forgotten")
        self.action_restore.setEnabled(item is not None and item.state != "active")
        source_exists = self._source_exists(item)
        self.action_source.setEnabled(source_exists)
        self.action_source.setText(
            "Show source"
            if item is None or source_exists
            else no_source_reason(item, conversation_exists=False)
        )
        self.action_why.setEnabled(has and self.model.is_searching())
        self._detail_due.trigger()
        self.action_undo.setEnabled(bool(self._forgotten))

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
            )
        )

    def _titles(self) -> dict[str, str]:
        """The conversations' titles by id (kept until a conversation changes)."""
        if self._conversation_titles is None:
            self._conversation_titles = {c.id: c.title for c in self._workspace.conversations.all()}
        return self._conversation_titles

    def _update_count(self) -> None:
        n = self.model.rowCount()
        if self.model.is_searching() or self._query:
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
        elif not self._search.running:  # else keep what is shown until the results arrive
            self.list_frame.show_empty(*empty_text(self._query, self.model.state, self.model.kind))
            self.detail.hide()  # nothing to select: the empty list has the room

    def _refresh_keyword_note(self) -> None:
        self.filters.show_embedding_status(self._memory.embedding_status())
