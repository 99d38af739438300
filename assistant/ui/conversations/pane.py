"""The conversation list: grouped by project, pinned first, then newest first under date
headings; filtered by project, title and content; new / temporary chat, rename, pin, archive,
move to a project, delete (several at once)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QSignalBlocker,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from assistant.memory import (
    ConversationHit,
    ConversationInfo,
    ConversationStore,
    new_conversation,
)
from assistant.projects import ProjectStore
from assistant.ui.conversations.asking import ask_choice, ask_title, confirm_delete
from assistant.ui.conversations.group_delegate import GroupDelegate
from assistant.ui.conversations.list_edit import ListEdit
from assistant.ui.conversations.model import (
    ArchivedRole,
    ConversationListModel,
    EmptyRole,
    IdRole,
    PinnedRole,
    ProjectRole,
    TemporaryRole,
)
from assistant.ui.conversations.projects import (
    NO_PROJECT,
    NO_PROJECT_LABEL,
    ProjectPicker,
    move_menu,
)
from assistant.ui.conversations.title_filter import TitleOrContentFilter
from assistant.ui.debounce import Debounced
from assistant.ui.jobs import LatestJob, Progress
from assistant.ui.theme import set_muted
from assistant.ui.wording import shorten

FILTER_DELAY_MS = 150
CONTENT_HITS = 200
SLOW_SEARCH_MS = 400  # a message search still running after this says so under the filter


class ConversationPane(QWidget):
    """The left pane: New chat, Temporary chat, a filter and the list.

    The filter keeps the titles that have the typed text at once, and adds the conversations
    whose messages match when the search is done: it runs in the background, since embedding
    the query may wait for the embedding server.
    """

    selected = Signal(object)  # conversation id, or None
    # A new, empty Conversation, not saved: to hold and have saved (before it is selected).
    new_chat = Signal(object)
    # A ListEdit, shown in the list already, for the worker to write (it answers `on_edited`).
    edit_requested = Signal(object)

    def __init__(
        self,
        store: ConversationStore,
        parent: QWidget | None = None,
        projects: ProjectStore | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._projects = projects
        self.model = ConversationListModel(store, projects)
        self._proxy = TitleOrContentFilter(self)
        self._proxy.setSourceModel(self.model)

        self.new_button = QPushButton("New Chat", self)
        self.new_button.setObjectName("newConversationButton")
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.new_button.setAccessibleDescription("Start a new conversation")
        self.new_button.clicked.connect(self._on_new)
        self.temporary = QToolButton(self)
        self.temporary.setObjectName("temporaryChatButton")
        self.temporary.setText("Temporary Chat")
        self.temporary.setToolTip(
            "Start a temporary chat (Ctrl+Shift+N): it neither uses nor adds long-term "
            "memories, and is deleted when you leave it"
        )
        self.temporary.setAccessibleDescription("Start a temporary chat that is not remembered")
        self.temporary.clicked.connect(self._on_new_temporary)
        self.filter = self._build_filter()
        self.search_note = QLabel(self)
        self.search_note.setObjectName("conversationSearchNote")
        self.search_note.setAccessibleName("Message search")
        self.search_note.setWordWrap(True)
        set_muted(self.search_note)
        self.search_note.hide()
        self._search: LatestJob[tuple[str, list[ConversationHit]]] = LatestJob(
            self._on_content_found, self._on_content_failed, self
        )
        self._slow_search = Debounced(SLOW_SEARCH_MS, self._on_slow_search, self)
        self._hidden_current: str | None = None  # the open conversation, hidden by the filter
        self._made_from: dict[str, str | None] = {}  # new chat -> the one selected before it
        # The listing is read again off the GUI thread: it may stat every file and save itself.
        self._listing: LatestJob[list[ConversationInfo]] = LatestJob(
            self._show_rows, self._on_listing_failed, self
        )
        self.view = self._build_view()

        top = QHBoxLayout()
        top.addWidget(self.new_button, 1)
        top.addWidget(self.temporary)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        layout.addLayout(top)
        self.picker: ProjectPicker | None = None
        if projects is not None:
            self.picker = ProjectPicker(projects, self)
            self.picker.chosen.connect(self.show_project)
            layout.addWidget(self.picker)
            QWidget.setTabOrder(self.temporary, self.picker)  # Tab goes down the pane
            QWidget.setTabOrder(self.picker, self.filter)
        layout.addWidget(self.filter)
        layout.addWidget(self.search_note)
        layout.addWidget(self.view, 1)

        self._build_actions()

    def _build_actions(self) -> None:
        """Rename, pin, archive and delete, on the list's keys and its context menu."""
        self._rename_action = QAction("Rename…", self)
        self._rename_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        self._rename_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._rename_action.triggered.connect(self.rename_current)
        self._delete_action = QAction("Delete…", self)
        self._delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self._delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._delete_action.triggered.connect(self.delete_current)
        self._pin_action = QAction("Pin", self)
        self._pin_action.setShortcut(QKeySequence("Ctrl+Shift+P"))
        self._pin_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._pin_action.triggered.connect(self.toggle_pinned)
        self._archive_action = QAction("Archive", self)
        self._archive_action.setShortcut(QKeySequence("Ctrl+Shift+E"))  # A attaches files
        self._archive_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._archive_action.triggered.connect(self.toggle_archived)
        self.show_archived_action = QAction("Show Archived Conversations", self)
        self.show_archived_action.setCheckable(True)
        self.show_archived_action.toggled.connect(self.set_show_archived)
        self.move_action = QAction("Move to Project…", self)
        self.move_action.setObjectName("actionMoveToProject")
        self.move_action.setShortcut(QKeySequence("Ctrl+Alt+M"))
        self.move_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.move_action.triggered.connect(self.move_current)
        self.view.addActions(
            [self._rename_action, self._pin_action, self._archive_action, self._delete_action]
        )
        if self._projects is not None:
            self.view.addAction(self.move_action)

    def _build_filter(self) -> QLineEdit:
        field = QLineEdit(self)
        field.setObjectName("conversationFilter")
        field.setAccessibleDescription(
            "Shows only the conversations whose title or messages contain the typed words"
        )
        field.setAccessibleName("Filter conversations")
        field.setPlaceholderText("Filter by title or content")
        field.setClearButtonEnabled(True)
        self._filter_delay = Debounced(FILTER_DELAY_MS, self.apply_filter, self)
        field.textChanged.connect(self._filter_delay.trigger)
        return field

    def _build_view(self) -> QListView:
        view = QListView(self)
        view.setObjectName("conversationList")
        view.setAccessibleName("Conversations")
        view.setAccessibleDescription("Your conversations, the most recent first")
        view.setModel(self._proxy)
        view.setItemDelegate(GroupDelegate(view))  # headings make the rows' heights differ
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        # Long titles are elided at the pane's width rather than scrolled sideways.
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._menu)
        view.selectionModel().currentChanged.connect(self._on_current)
        return view

    def current_id(self) -> str | None:
        """The selected conversation's id."""
        index = self.view.currentIndex()
        value = index.data(IdRole) if index.isValid() else None
        return value if isinstance(value, str) else None

    def first_id(self) -> str | None:
        """The conversation at the top of the list."""
        value = self._proxy.index(0, 0).data(IdRole)
        return value if isinstance(value, str) else None

    def _make_current(self, index: QModelIndex) -> None:
        """Make `index` the current and only selected row, whatever keys are held down (the
        view's own setCurrentIndex extends the selection while Ctrl or Shift is down)."""
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        self.view.selectionModel().setCurrentIndex(index, flags)

    def select(self, conversation_id: str | None) -> None:
        """Select a conversation (clearing the filter if it hides it)."""
        self._hidden_current = None
        if conversation_id is None:
            self._make_current(QModelIndex())
            self.selected.emit(None)
            return
        row = self.model.row_of(conversation_id)
        if row < 0:
            return
        proxy_index = self._proxy.mapFromSource(self.model.index(row))
        if not proxy_index.isValid():
            self.filter.clear()
            self.apply_filter()
            proxy_index = self._proxy.mapFromSource(self.model.index(row))
        self._make_current(proxy_index)

    def refresh(self) -> None:
        """Re-read the list now, keeping the selection."""
        self._show_rows(self._store.all())

    def refresh_later(self) -> None:
        """Re-read the list in the background, then show it (keeping the selection)."""
        store = self._store
        self._listing.run(lambda _progress: store.all())

    @property
    def refreshing(self) -> bool:
        """Whether the list is being read again in the background."""
        return self._listing.running

    def _on_listing_failed(self, message: str) -> None:
        self._show_note(f"Could not list the conversations: {message}")

    def _show_rows(self, rows: list[ConversationInfo]) -> None:
        self._keeping_current(lambda: self.model.set_rows(rows))

    def _keeping_current(self, change: Callable[[], None]) -> None:
        """Change the rows, keeping the selected conversation selected if it is still listed."""
        current = self.current_id()
        with QSignalBlocker(self.view.selectionModel()):
            change()
            if current is not None:
                row = self.model.row_of(current)
                if row >= 0:
                    self._make_current(self._proxy.mapFromSource(self.model.index(row)))

    def new_conversation(self, temporary: bool = False) -> str:
        """Select a new, empty conversation of that kind in the project shown (a temporary chat
        is in none): the one shown if it is such, else a new one; returns its id.

        Only the chat shown is reused: an empty one left is being deleted (its row may not
        have gone yet), and a message sent there would be lost with it."""
        project = None if temporary or self.picker is None else self.picker.project_id()
        index = self.view.currentIndex()
        cid = index.data(IdRole) if index.isValid() else None
        if (
            isinstance(cid, str)
            and index.data(EmptyRole)
            and index.data(TemporaryRole) == temporary
            and index.data(ProjectRole) == project
            and self._still_empty(cid)
        ):
            return cid
        conversation = new_conversation(temporary=temporary, project=project)
        self._made_from[conversation.id] = self.current_id()
        self.new_chat.emit(conversation)
        self.model.add_new(conversation)
        self.select(conversation.id)
        return conversation.id

    def _still_empty(self, conversation_id: str) -> bool:
        """A stat (the file is read only if changed); a new chat whose file is not made yet
        is empty unless a turn was asked in it."""
        if self._store.is_empty(conversation_id):
            return True
        return self.model.is_fresh(conversation_id) and not self._store.exists(conversation_id)

    def on_saved(self, conversation_id: str) -> None:
        """A new chat's file is made: list the conversations again (their listing has it)."""
        self._made_from.pop(conversation_id, None)
        self.model.saved(conversation_id)
        self.refresh_later()

    def drop_new(self, conversation_id: str) -> None:
        """A new chat's file could not be made: its row goes; if it was selected, the
        conversation selected before it was made is again (else the first)."""
        before = self._made_from.pop(conversation_id, None)
        if self.current_id() != conversation_id:
            self._keeping_current(lambda: self.model.drop_new(conversation_id))
            return
        with QSignalBlocker(self.view.selectionModel()):
            self.model.drop_new(conversation_id)
        listed = before is not None and self.model.row_of(before) >= 0
        self.select(before if listed else self.first_id())

    def select_next(self, step: int) -> None:
        """Select the conversation `step` rows below (negative: above) the current one."""
        rows = self._proxy.rowCount()
        if rows == 0:
            return
        current = self.view.currentIndex().row()
        row = (current + step) % rows if current >= 0 else 0
        self._make_current(self._proxy.index(row, 0))

    def apply_filter(self) -> None:
        """Filter the list by the typed text now: by title at once, by message content when
        the background search is done."""
        self._filter_delay.cancel()
        text = self.filter.text().strip()
        self._set_filter(text, {})
        self._show_note("")
        if not text:
            self._search.cancel()
            return
        store = self._store

        def search(_progress: Progress) -> tuple[str, list[ConversationHit]]:
            return text, store.search(text, k=CONTENT_HITS)

        self._search.run(search)
        self._slow_search.trigger()

    @property
    def searching(self) -> bool:
        """Whether the messages are being searched for the filter's text."""
        return self._search.running

    def _on_content_found(self, result: tuple[str, list[ConversationHit]]) -> None:
        text, found = result
        self._show_note("")
        hits: dict[str, str] = {}
        for hit in found:
            hits.setdefault(hit.conversation_id, hit.message_id)  # the best hit comes first
        self._set_filter(text, hits)

    def _set_filter(self, text: str, content_hits: dict[str, str]) -> None:
        """Filter the rows; the open conversation, hidden while only titles are filtered, is
        selected again when its messages match (it stays open meanwhile)."""
        current = self.current_id() or self._hidden_current
        with QSignalBlocker(self.view.selectionModel()):
            self._proxy.set_filter(text, content_hits)
            row = -1 if current is None else self.model.row_of(current)
            index = self._proxy.mapFromSource(self.model.index(row))
            if index.isValid():
                self._make_current(index)
        self._hidden_current = None if index.isValid() else current

    def _on_content_failed(self, message: str) -> None:
        self._show_note(f"Only the titles were searched: {message}")

    def _on_slow_search(self) -> None:
        if self._search.running:
            self._show_note("Searching the messages…")

    def _show_note(self, text: str) -> None:
        self._slow_search.cancel()
        self.search_note.setText(text)
        self.search_note.setVisible(bool(text))

    def content_hit(self, conversation_id: str) -> str | None:
        """The message that made the filter keep this conversation, if its text did."""
        return self._proxy.content_hits.get(conversation_id) if self._proxy.text else None

    def _on_new(self) -> None:
        self.new_conversation()

    def _on_new_temporary(self) -> None:
        self.new_conversation(temporary=True)

    def rename_current(self) -> None:
        """Ask for a new title of the selected conversation."""
        cid = self.current_id()
        if cid is None:
            return
        title = self.ask_title(str(self.view.currentIndex().data()))
        if title is None or not title.strip():
            return
        self._edit(ListEdit((cid,), title=title))

    def ask_title(self, title: str) -> str | None:
        """Ask for a conversation's new title, in a dialog wide enough to read it (tests
        replace this); None if cancelled."""
        return ask_title(self, title)

    def selected_ids(self) -> list[str]:
        """The selected conversations, in list order (the current one if none is selected)."""
        rows = sorted(self.view.selectionModel().selectedRows(), key=lambda i: i.row())
        ids = [str(i.data(IdRole)) for i in rows]
        current = self.current_id()
        return ids or ([current] if current is not None else [])

    def toggle_pinned(self) -> None:
        """Pin the selected conversations (unpin them if the current one is pinned)."""
        pinned = not bool(self.view.currentIndex().data(PinnedRole))
        self._edit(ListEdit(tuple(self.selected_ids()), pinned=pinned))

    def toggle_archived(self) -> None:
        """Archive the selected conversations (unarchive them if the current one is); the
        current one archived leaves the list (unless archived ones are shown), and the one that
        takes its row is shown, as after Delete."""
        archived = not bool(self.view.currentIndex().data(ArchivedRole))
        edit = ListEdit(tuple(self.selected_ids()), archived=archived)
        if archived and not self.model.show_archived:
            self._edit_removing(edit)
        else:
            self._edit(edit)

    def _edit(self, edit: ListEdit) -> None:
        """Show the edit in the list at once, and have the worker write it."""
        if edit.ids:
            self._keeping_current(lambda: self.model.begin_edit(edit))
            self.edit_requested.emit(edit)

    def on_edited(self, edit: ListEdit, error: str) -> None:
        """The worker wrote an edit (`error` ""), or could not: the rows it changed are as
        listed again, and the note under the filter says why. The list is read again."""
        self._keeping_current(lambda: self.model.end_edit(edit, written=not error))
        if error:
            self._show_note(f"Could not {edit.what} the conversation: {error}")
        self.refresh_later()

    def show_project(self, choice: str) -> None:
        """List the conversations of a project (ALL: all, grouped; NO_PROJECT: those in none),
        keeping the selection if it is still listed."""
        if self.picker is not None and self.picker.choice() != choice:
            self.picker.choose(choice)  # emits again: listed then
            return
        self.model.project_filter = choice
        self.refresh()

    def projects_changed(self) -> None:
        """The projects changed (created, renamed, deleted): list them and the rows again."""
        if self.picker is not None:
            self.picker.reload()
        self.refresh()

    def move_current(self) -> None:
        """Ask which project the selected conversations go to, then move them."""
        ids = [i for i in self.selected_ids() if not self._is_temporary(i)]
        if not ids or self._projects is None:
            return
        current = self.view.currentIndex().data(ProjectRole)
        choice = self.ask_project(current if isinstance(current, str) else None)
        if choice is not None:
            self.move_to(ids, choice or None)

    def ask_project(self, current: str | None) -> str | None:
        """Ask for a project (tests replace this): its id, NO_PROJECT, or None if cancelled."""
        assert self._projects is not None
        projects = self._projects.all()
        names = [NO_PROJECT_LABEL, *(p.name for p in projects)]
        ids = [NO_PROJECT, *(p.id for p in projects)]
        at = ids.index(current) if current in ids else 0
        chosen = self.selected_ids()
        what = (f"'{shorten(str(self.view.currentIndex().data()), 60)}'" if len(chosen) <= 1
                else f"these {len(chosen)} conversations")  # fmt: skip
        picked = ask_choice(self, f"Move {what} to:", names, at)
        return None if picked is None else ids[picked]

    def move_to(self, ids: list[str], project: str | None) -> None:
        """Move conversations into a project (None: into none), through the worker."""
        self._edit(ListEdit(tuple(ids), moves=True, project=project))

    def _is_temporary(self, conversation_id: str) -> bool:
        return bool(self.model.index(self.model.row_of(conversation_id)).data(TemporaryRole))

    def set_show_archived(self, shown: bool) -> None:
        """List archived conversations too, or not."""
        self.model.show_archived = shown
        with QSignalBlocker(self.show_archived_action):
            self.show_archived_action.setChecked(shown)
        self.refresh()

    def delete_current(self) -> None:
        """Delete the selected conversations after one confirmation; if the current one is
        among them, the one that takes its row is selected."""
        ids = self.selected_ids()
        if not ids:
            return
        titles = [str(self.model.index(self.model.row_of(cid)).data()) for cid in ids]
        if not self.confirm_delete(titles):
            return
        self._edit_removing(ListEdit(tuple(ids), deletes=True))

    def _edit_removing(self, edit: ListEdit) -> None:
        """An edit whose rows leave the list at once: if the current one is among them, the
        one that takes its row is selected."""
        row, current = self.view.currentIndex().row(), self.current_id()
        self._edit(edit)
        if current not in edit.ids:  # it stays selected
            return
        next_row = min(row, self._proxy.rowCount() - 1)  # the one now in its row (or above)
        if next_row >= 0:
            self._make_current(self._proxy.index(next_row, 0))
        else:
            self.select(None)

    def confirm_delete(self, titles: list[str]) -> bool:
        """Ask before deleting (tests replace this)."""
        return confirm_delete(self, titles)

    def _menu(self, position: Any) -> None:
        if not self.view.indexAt(position).isValid():
            return
        current = self.view.currentIndex()
        self._pin_action.setText("Unpin" if current.data(PinnedRole) else "Pin")
        self._archive_action.setText("Unarchive" if current.data(ArchivedRole) else "Archive")
        menu = QMenu(self)
        menu.addAction(self._rename_action)
        menu.addActions([self._pin_action, self._archive_action])
        if self._projects is not None and not current.data(TemporaryRole):
            ids = self.selected_ids()
            project = current.data(ProjectRole)
            moves = move_menu(
                menu,
                self._projects,
                project if isinstance(project, str) else None,
                lambda target: self.move_to(ids, target),
            )
            menu.addMenu(moves)
        menu.addSeparator()
        menu.addAction(self._delete_action)
        menu.addSeparator()
        menu.addAction(self.show_archived_action)
        menu.exec(self.view.viewport().mapToGlobal(position))

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        value = current.data(IdRole) if current.isValid() else None
        self.selected.emit(value if isinstance(value, str) else None)
