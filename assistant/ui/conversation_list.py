"""The conversation list: newest first, filter by title, new / temporary / rename / delete."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListView,
    QMenu,
    QMessageBox,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from assistant.memory.conversations import ConversationInfo, ConversationStore

IdRole = Qt.ItemDataRole.UserRole + 1
Index = QModelIndex | QPersistentModelIndex
# Imports that carry no time at all are dated in 1970, in file order.
UNDATED_BEFORE_YEAR = 1971


class ConversationListModel(QAbstractListModel):
    """The store's conversations, newest first."""

    def __init__(self, store: ConversationStore) -> None:
        super().__init__()
        self._store = store
        self._rows: list[ConversationInfo] = store.list()

    def refresh(self) -> None:
        """Re-read the listing (cheap: the store caches it) and update the rows."""
        rows = self._store.list()
        if [r.id for r in rows] == [r.id for r in self._rows]:
            self._rows = rows
            if rows:
                self.dataChanged.emit(self.index(0), self.index(len(rows) - 1))
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        info = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return info.title
        if role == Qt.ItemDataRole.ToolTipRole:
            kind = "Conversation"
            if info.temporary:
                kind = "Temporary chat (not remembered)"
            elif info.do_not_remember:
                kind = "Imported as not to be remembered"
            return (
                f"{info.title}\n{kind} · {info.message_count} messages · {_when(info.updated_at)}"
            )
        if role == Qt.ItemDataRole.FontRole and (info.temporary or info.do_not_remember):
            font = QFont()
            font.setItalic(True)
            return font
        if role == IdRole:
            return info.id
        return None

    def row_of(self, conversation_id: str) -> int:
        """The row of a conversation, or -1."""
        return next((i for i, r in enumerate(self._rows) if r.id == conversation_id), -1)


class ConversationPane(QWidget):
    """The left pane: New, a temporary toggle, a filter and the list."""

    selected = Signal(object)  # conversation id, or None

    def __init__(self, store: ConversationStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store = store
        self.model = ConversationListModel(store)
        self._proxy = QSortFilterProxyModel(self)
        self._proxy.setSourceModel(self.model)
        self._proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

        self.new_button = QPushButton("New conversation", self)
        self.new_button.setObjectName("newConversationButton")
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.new_button.clicked.connect(self.new_conversation)
        self.temporary = QToolButton(self)
        self.temporary.setObjectName("temporaryChatToggle")
        self.temporary.setText("Temporary")
        self.temporary.setCheckable(True)
        self.temporary.setToolTip(
            "New conversations are temporary: they neither use nor add long-term memories"
        )
        self.filter = QLineEdit(self)
        self.filter.setObjectName("conversationFilter")
        self.filter.setPlaceholderText("Filter conversations")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._proxy.setFilterFixedString)
        self.view = QListView(self)
        self.view.setObjectName("conversationList")
        self.view.setModel(self._proxy)
        self.view.setUniformItemSizes(True)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.view.selectionModel().currentChanged.connect(self._on_current)

        top = QHBoxLayout()
        top.addWidget(self.new_button, 1)
        top.addWidget(self.temporary)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        layout.addLayout(top)
        layout.addWidget(self.filter)
        layout.addWidget(self.view, 1)

        self._rename_action = QAction("Rename…", self)
        self._rename_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        self._rename_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._rename_action.triggered.connect(self.rename_current)
        self._delete_action = QAction("Delete…", self)
        self._delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self._delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._delete_action.triggered.connect(self.delete_current)
        self.view.addActions([self._rename_action, self._delete_action])

    def current_id(self) -> str | None:
        """The selected conversation's id."""
        index = self.view.currentIndex()
        value = index.data(IdRole) if index.isValid() else None
        return value if isinstance(value, str) else None

    def select(self, conversation_id: str | None) -> None:
        """Select a conversation (clearing the filter if it hides it)."""
        if conversation_id is None:
            self.view.setCurrentIndex(QModelIndex())
            self.selected.emit(None)
            return
        row = self.model.row_of(conversation_id)
        if row < 0:
            return
        proxy_index = self._proxy.mapFromSource(self.model.index(row))
        if not proxy_index.isValid():
            self.filter.clear()
            proxy_index = self._proxy.mapFromSource(self.model.index(row))
        self.view.setCurrentIndex(proxy_index)

    def refresh(self) -> None:
        """Re-read the list, keeping the selection."""
        current = self.current_id()
        self.view.selectionModel().blockSignals(True)
        self.model.refresh()
        if current is not None:
            row = self.model.row_of(current)
            if row >= 0:
                self.view.setCurrentIndex(self._proxy.mapFromSource(self.model.index(row)))
        self.view.selectionModel().blockSignals(False)

    def new_conversation(self) -> str:
        """Create a conversation (temporary if the toggle is on) and select it."""
        info = self._store.create(temporary=self.temporary.isChecked())
        self.model.refresh()
        self.select(info.id)
        return info.id

    def rename_current(self) -> None:
        """Ask for a new title of the selected conversation."""
        cid = self.current_id()
        if cid is None:
            return
        title, ok = QInputDialog.getText(
            self, "Rename conversation", "Title:", text=self.view.currentIndex().data()
        )
        if ok and title.strip():
            self._store.rename(cid, title)
            self.refresh()

    def delete_current(self) -> None:
        """Delete the selected conversation after confirmation."""
        cid = self.current_id()
        if cid is None or not self.confirm_delete(self.view.currentIndex().data()):
            return
        row = self.view.currentIndex().row()
        self._store.delete(cid)
        self.model.refresh()
        next_row = min(row, self._proxy.rowCount() - 1)
        if next_row >= 0:
            self.view.setCurrentIndex(self._proxy.index(next_row, 0))
        else:
            self.select(None)

    def confirm_delete(self, title: str) -> bool:
        """Ask before deleting (tests replace this)."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Delete conversation",
            f"Delete “{title}”?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setInformativeText("Its messages are removed for good; memories learned from it stay.")
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is delete

    def _menu(self, position: Any) -> None:
        if not self.view.indexAt(position).isValid():
            return
        menu = QMenu(self)
        menu.addAction(self._rename_action)
        menu.addAction(self._delete_action)
        menu.exec(self.view.viewport().mapToGlobal(position))

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        value = current.data(IdRole) if current.isValid() else None
        self.selected.emit(value if isinstance(value, str) else None)


def _when(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return stamp
    if moment.year < UNDATED_BEFORE_YEAR:
        return "date unknown"
    return moment.strftime("%d %b %Y, %H:%M")
