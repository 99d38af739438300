"""The conversation list's model: the store's conversations as rows, with their project,
flags and group heading."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QGuiApplication, QIcon, QPalette

from assistant.memory import Conversation, ConversationInfo, ConversationStore
from assistant.projects import ProjectStore
from assistant.ui.conversations.group_delegate import GroupRole
from assistant.ui.conversations.list_edit import ListEdit
from assistant.ui.conversations.projects import ALL, NO_PROJECT_LABEL, project_label
from assistant.ui.icons import draw_clock, drawn_icon
from assistant.ui.times import list_group, listing_time
from assistant.ui.wording import count

IdRole = Qt.ItemDataRole.UserRole + 1
EmptyRole = Qt.ItemDataRole.UserRole + 2
TemporaryRole = Qt.ItemDataRole.UserRole + 3
PinnedRole = Qt.ItemDataRole.UserRole + 4
ArchivedRole = Qt.ItemDataRole.UserRole + 5
ProjectRole = Qt.ItemDataRole.UserRole + 6  # the project's id, or None
Index = QModelIndex | QPersistentModelIndex
# Imports that carry no time at all are dated in 1970, in file order.


class ConversationListModel(QAbstractListModel):
    """The store's conversations: those of one project (`project_filter`: ALL, NO_PROJECT or
    a project's id), or all of them grouped by project; pinned first, then newest first."""

    def __init__(self, store: ConversationStore, projects: ProjectStore | None = None) -> None:
        super().__init__()
        self._projects = projects
        self.show_archived = False
        self.project_filter = ALL
        self._groups: list[str] = []
        self._listing = store.all()
        self._rows: list[ConversationInfo] = self._listed(self._listing)
        # New chats listed before their file is made, until a listing read since shows them.
        self._unsaved: dict[str, ConversationInfo] = {}
        self._saved: set[str] = set()  # of those, made: the next listing read has them
        self._asked: set[str] = set()  # of those, asked a turn in: not empty any more
        # Edits asked of the worker, shown as done until a listing read since it wrote them.
        self._edits: list[ListEdit] = []
        self._written: list[ListEdit] = []  # of those, written: the next listing read has them
        self._icons: dict[str, QIcon] = {}  # the temporary chat's icon, by text colour

    def _temporary_icon(self) -> QIcon:
        """A drawn clock in the text colour of the palette in use (a glyph may be missing)."""
        color = QGuiApplication.palette().color(QPalette.ColorRole.Text)
        if color.name() not in self._icons:
            self._icons[color.name()] = drawn_icon("", draw_clock, color)
        return self._icons[color.name()]

    def _project_name(self, info: ConversationInfo) -> str | None:
        """The name of the conversation's project, saying if it is isolated (None: in none, or
        its project is gone)."""
        project = None if self._projects is None else self._projects.get(info.project)
        return None if project is None else project_label(project)

    def _listed(self, listing: list[ConversationInfo]) -> list[ConversationInfo]:
        """The rows of the project filter, projects first (by name) when all are shown, then
        pinned ones first, each part newest first; archived ones only if shown. Sets each
        row's group: its project's name, else its date ("No project · " before the first)."""
        names = {i.id: self._project_name(i) for i in listing}
        rows = [i for i in listing if self.show_archived or not i.archived]
        if self.project_filter != ALL:
            wanted = self.project_filter or None
            rows = [i for i in rows if (i.project if names[i.id] else None) == wanted]
        # Stable: newest first stays within each part.
        rows.sort(key=lambda i: (names[i.id] is None, (names[i.id] or "").casefold(), not i.pinned))
        dated = ["Pinned" if i.pinned else list_group(i.updated_at) for i in rows]
        grouped = self.project_filter == ALL and any(names[i.id] for i in rows)
        first = next((d for i, d in zip(rows, dated, strict=True) if not names[i.id]), None)
        self._groups = [
            names[i.id] or (f"{NO_PROJECT_LABEL} · {d}" if grouped and d == first else d)
            for i, d in zip(rows, dated, strict=True)
        ]
        return rows

    def add_new(self, conversation: Conversation) -> None:
        """List a new, empty chat at once, while its file is being made (see `saved`)."""
        c = conversation
        info = ConversationInfo(
            c.id, c.title, c.created_at, c.updated_at, 0, c.temporary, project=c.project
        )
        self._unsaved[c.id] = info
        self._show(self._listing)

    def drop_new(self, conversation_id: str) -> None:
        """The file of a new chat could not be made: its row (`add_new`) goes."""
        if self._unsaved.pop(conversation_id, None) is not None:
            self._saved.discard(conversation_id)
            self._asked.discard(conversation_id)
            self._show(self._listing)

    def begin_edit(self, edit: ListEdit) -> None:
        """Show the rows as `edit` leaves them, until it is written (`end_edit`)."""
        self._edits.append(edit)
        self._show(self._listing)

    def end_edit(self, edit: ListEdit, written: bool) -> None:
        """The worker wrote `edit` (a listing read from now on has it, and replaces it), or
        could not: the rows it changed are as listed again."""
        if edit not in self._edits:
            return
        if written:
            self._written.append(edit)
            return
        self._edits.remove(edit)
        self._show(self._listing)

    def saved(self, conversation_id: str) -> None:
        """The file of a new chat was made: a listing read from now on has it (or not, once it
        is deleted), so that one replaces the row `add_new` made."""
        if conversation_id in self._unsaved:
            self._saved.add(conversation_id)

    def asked(self, conversation_id: str) -> None:
        """A turn was asked in a conversation: if it is a new chat not listed yet, it is not
        empty any more (what a listing would say)."""
        if conversation_id in self._unsaved:
            self._asked.add(conversation_id)

    def is_fresh(self, conversation_id: str) -> bool:
        """Whether a new chat, not listed yet, has not been asked anything (it is empty)."""
        return conversation_id in self._unsaved and conversation_id not in self._asked

    def set_rows(self, listing: list[ConversationInfo]) -> None:
        """Show the rows of the listing as read (`ConversationStore.all`), and the new chats
        not in it yet."""
        self._listing = listing
        listed = {i.id for i in listing} | self._saved
        self._unsaved = {cid: i for cid, i in self._unsaved.items() if cid not in listed}
        self._saved.clear()
        self._asked &= set(self._unsaved)
        self._edits = [e for e in self._edits if e not in self._written]
        self._written.clear()
        self._show(listing)

    def _show(self, listing: list[ConversationInfo]) -> None:
        infos = [*self._unsaved.values(), *listing]
        for edit in self._edits:
            infos = [row for info in infos if (row := edit.row(info)) is not None]
        rows = self._listed(infos)
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
        if role == Qt.ItemDataRole.DecorationRole and info.temporary:
            return self._temporary_icon()
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{info.title} (temporary chat)" if info.temporary else info.title
        if role == Qt.ItemDataRole.ToolTipRole:
            kind = "Archived conversation" if info.archived else "Conversation"
            if info.temporary:
                kind = "Temporary chat (not remembered)"
            elif info.do_not_remember:
                kind = "Imported as not to be remembered: Assistant learns nothing from this chat"
            project = self._project_name(info)
            return (
                f"{info.title}\n{kind} · {count(info.message_count, 'message')} · "
                f"{listing_time(info.updated_at)}"
                + (f"\nIn the project {project}" if project else "")
            )
        if role == Qt.ItemDataRole.FontRole and (info.temporary or info.do_not_remember):
            font = QFont()
            font.setItalic(True)
            return font
        if role == GroupRole:
            return self._groups[index.row()]
        if role == ProjectRole:
            return info.project if self._project_name(info) else None
        if role == PinnedRole:
            return info.pinned
        if role == ArchivedRole:
            return info.archived
        if role == IdRole:
            return info.id
        if role == EmptyRole:
            return info.empty
        if role == TemporaryRole:
            return info.temporary
        return None

    def row_of(self, conversation_id: str) -> int:
        """The row of a conversation, or -1."""
        return next((i for i, r in enumerate(self._rows) if r.id == conversation_id), -1)
