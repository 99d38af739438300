"""A list model over the semantic memory: one state, kind, author and scope, or the hits of a
search."""

from __future__ import annotations

import bisect
import dataclasses
import html
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Slot,
)
from PySide6.QtGui import QGuiApplication

from assistant.memory import (
    MemoryChange,
    MemoryItem,
    MemoryKind,
    MemoryState,
    SearchHit,
    SemanticMemory,
    listing_order,
)
from assistant.memory.why import why_text
from assistant.projects import ProjectStore
from assistant.timestamps import relative_time
from assistant.ui import theme
from assistant.ui.memory.wording import origin_short
from assistant.ui.times import date_text

ItemRole = Qt.ItemDataRole.UserRole + 1  # the row's MemoryItem
HitRole = Qt.ItemDataRole.UserRole + 2  # the row's SearchHit, or None outside search mode
ScopeRole = Qt.ItemDataRole.UserRole + 3  # "Global" or its project's name; None: no projects
ALL_SCOPES = "*"  # the scope filter's "All scopes"
GLOBAL = ""  # the scope filter's "Global"
GLOBAL_LABEL = "Global"

_DETAIL_ROLES = [
    Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.AccessibleTextRole,
    ItemRole,
    HitRole,
]  # what changes with a pin, kind, importance or use, when the text stays

RESET_BATCH = 64  # a change to more ids than this resets the model instead
_TOOLTIP_CHARS = 600

AnyIndex = QModelIndex | QPersistentModelIndex


def usage_text(item: MemoryItem, now: datetime | None = None) -> str:
    """ "used 3 days ago", or "never used" for an item the assistant has not used yet."""
    if item.access_count == 0:
        return "never used"
    return f"used {relative_time(item.last_accessed, now)}"


def caption(item: MemoryItem, now: datetime | None = None, *, compact: bool = False) -> str:
    """The grey line under a memory: "preference · importance 0.7 · used 3 days ago".

    The compact form, for narrow panes, leaves out the word "importance".
    """
    importance = f"{item.importance:.1f}" if compact else f"importance {item.importance:.1f}"
    return f"{item.kind} · {importance} · {usage_text(item, now)}"


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def tooltip(item: MemoryItem, hit: SearchHit | None = None) -> str:
    """Rich-text tooltip: the text, then kind, importance, dates and, for a hit, its ranking."""
    text = item.text if len(item.text) <= _TOOLTIP_CHARS else item.text[:_TOOLTIP_CHARS] + "…"
    used = (
        f"last used {relative_time(item.last_accessed)} ({_times(item.access_count)})"
        if item.access_count
        else "never used"
    )
    details = [
        f"{item.kind.capitalize()} · importance {item.importance:.2f}"
        + (" · pinned" if item.pinned else ""),
        f"{origin_short(item)} · {date_text(item.created_at)} · {used}",
    ]
    muted = theme.muted(QGuiApplication.palette()).name()
    parts = [
        f"<p>{html.escape(text).replace(chr(10), '<br>')}</p>",
        f"<p style='color:{muted}'>{'<br>'.join(html.escape(d) for d in details)}</p>",
    ]
    if hit is not None:
        parts.append(f"<p style='color:{muted}'>Why: {html.escape(why_text(hit))}</p>")
    return "<qt>" + "".join(parts) + "</qt>"


class MemoryListModel(QAbstractListModel):
    """Memories of one state and kind, pinned first then newest first; or search hits by rank.

    Connect `on_memory_changed` to `StoreBridge.memory_changed`: the rows of the changed ids are
    inserted, removed, moved or refreshed one by one (large batches reset the model).
    """

    ItemRole = ItemRole
    HitRole = HitRole

    def __init__(
        self,
        memory: SemanticMemory,
        parent: QObject | None = None,
        projects: ProjectStore | None = None,
    ) -> None:
        super().__init__(parent)
        self._memory = memory
        self._projects = projects
        self._state: MemoryState = "active"
        self._kind: MemoryKind | None = None
        self._origins: frozenset[str] | None = None  # who made the items shown; None: anyone
        self._scope = ALL_SCOPES  # ALL_SCOPES, GLOBAL or a project's id
        self._words: tuple[str, ...] = ()  # list mode: every word must occur in the text
        self._all_hits: list[SearchHit] | None = None  # search mode: every hit, by rank
        self._rows: list[MemoryItem] = []
        self._hits: list[SearchHit] = []  # search mode: the visible hits (parallel to _rows)
        self._row_of: dict[str, int] | None = None  # id -> row, rebuilt lazily
        self._rows = self._load()

    # -- filters and modes --------------------------------------------------------------------

    @property
    def state(self) -> MemoryState:
        """Which items the list shows: active, archived or forgotten (since launch)."""
        return self._state

    @property
    def kind(self) -> MemoryKind | None:
        """The kind of items shown, or None for all kinds."""
        return self._kind

    def is_searching(self) -> bool:
        """Whether the rows are search hits."""
        return self._all_hits is not None

    def set_filter(
        self,
        state: MemoryState | None = None,
        kind: MemoryKind | None = None,
        origins: frozenset[str] | None = None,
    ) -> None:
        """Show items in `state` (unchanged if None) of `kind` (all kinds if None) made by one
        of `origins` (anyone if None)."""
        state = state or self._state
        if (state, kind, origins) == (self._state, self._kind, self._origins):
            return
        self._state, self._kind, self._origins = state, kind, origins
        self.refresh()

    def set_scope(self, scope: str) -> None:
        """Show the memories of every scope (ALL_SCOPES), the global ones (GLOBAL) or those of
        one project (its id)."""
        if scope != self._scope:
            self._scope = scope
            self.refresh()

    def scope_label(self, item: MemoryItem) -> str | None:
        """ "Global" or the name of the memory's project; None while there are no projects."""
        if self._projects is None or not self._projects.all():
            return None
        project = self._projects.get(item.project)
        if project is not None:
            return project.name
        return GLOBAL_LABEL if item.project is None else "A deleted project"

    def set_text_filter(self, text: str) -> None:
        """Outside search mode, show only items whose text contains every word of `text`."""
        words = tuple(text.lower().split())
        if words != self._words:
            self._words = words
            if self._all_hits is None:
                self.refresh()

    def set_hits(self, hits: Sequence[SearchHit]) -> None:
        """Enter search mode: the rows are `hits` in rank order (filtered by kind)."""
        self._all_hits = list(hits)
        self.refresh()

    def clear_hits(self) -> None:
        """Leave search mode: back to the list of the chosen state and kind."""
        if self._all_hits is None:
            return
        self._all_hits = None
        self.refresh()

    def refresh(self) -> None:
        """Reload every row (a model reset)."""
        self.beginResetModel()
        self._rows = self._load()
        self._row_of = None
        self.endResetModel()

    def _load(self) -> list[MemoryItem]:
        if self._all_hits is not None:
            # The items may have changed since the search ran.
            fresh = [(hit, self._memory.get(hit.item.id)) for hit in self._all_hits]
            self._all_hits = [
                dataclasses.replace(hit, item=item) for hit, item in fresh if item is not None
            ]
            self._hits = [hit for hit in self._all_hits if self._accepts(hit.item)]
            return [hit.item for hit in self._hits]
        self._hits = []
        return [i for i in self._memory.all(self._state) if self._accepts(i)]

    def _accepts(self, item: MemoryItem) -> bool:
        if self._kind is not None and item.kind != self._kind:
            return False
        if self._origins is not None and item.origin not in self._origins:
            return False
        if self._scope not in (ALL_SCOPES, item.project or GLOBAL):
            return False
        if self._all_hits is not None:
            return item.state == "active"  # search only looks through active items
        if item.state != self._state:
            return False
        text = item.text.lower()
        return all(word in text for word in self._words)

    # -- lookups ------------------------------------------------------------------------------

    def item_at(self, index: AnyIndex) -> MemoryItem | None:
        """The item of a row, or None for an invalid index."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        return self._rows[index.row()]

    def hit_at(self, index: AnyIndex) -> SearchHit | None:
        """The search hit of a row in search mode, else None."""
        if self._all_hits is None or self.item_at(index) is None:
            return None
        return self._hits[index.row()]

    def row_of(self, memory_id: str) -> int:
        """The row showing `memory_id`, or -1."""
        if self._row_of is None:
            self._row_of = {item.id: row for row, item in enumerate(self._rows)}
        return self._row_of.get(memory_id, -1)

    def index_of(self, memory_id: str) -> QModelIndex:
        """The index showing `memory_id` (invalid if it is not shown)."""
        row = self.row_of(memory_id)
        return self.index(row) if row >= 0 else QModelIndex()

    # -- Qt model interface -------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008, N802
        """The number of rows (a list has no children)."""
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The text, tooltip, item or hit of a row."""
        item = self.item_at(index)
        if item is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return item.text
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(item, self.hit_at(index))
        if role == Qt.ItemDataRole.AccessibleTextRole:
            pinned = "Pinned: " if item.pinned else ""
            scope = self.scope_label(item)
            where = f". {scope}" if scope else ""
            return f"{pinned}{item.text}. {caption(item)}. {origin_short(item)}{where}"
        if role == ScopeRole:
            return self.scope_label(item)
        if role == ItemRole:
            return item
        if role == HitRole:
            return self.hit_at(index)
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        """Rows are selectable and enabled, never editable in place."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def roleNames(self) -> dict[int, QByteArray]:  # noqa: N802
        """Role names, with the custom roles."""
        names = dict(super().roleNames())
        names[ItemRole] = QByteArray(b"item")
        names[HitRole] = QByteArray(b"hit")
        return names

    # -- store changes ------------------------------------------------------------------------

    @Slot(object)
    def on_memory_changed(self, change: MemoryChange) -> None:
        """Bring the rows of the changed items up to date."""
        if not change.ids:
            return
        if len(change.ids) > RESET_BATCH:
            self.refresh()
            return
        for memory_id in dict.fromkeys(change.ids):
            item = self._memory.get(memory_id)
            if self._all_hits is None:
                self._sync_listed(memory_id, item)
            else:
                self._sync_hit(memory_id, item)

    def _sync_listed(self, memory_id: str, item: MemoryItem | None) -> None:
        """Insert, remove, move or refresh one row of the list."""
        row = self.row_of(memory_id)
        wanted = item is not None and self._accepts(item)
        if row < 0:
            if item is not None and wanted:
                at = bisect.bisect_right(self._rows, listing_order(item), key=listing_order)
                self._insert(at, item)
            return
        if item is None or not wanted:
            self._remove(row)
            return
        text_changed = self._rows[row].text != item.text
        rest = self._rows[:row] + self._rows[row + 1 :]
        at = bisect.bisect_right(rest, listing_order(item), key=listing_order)
        if at != row:
            # Qt counts the destination before the move; a row moving down skips itself.
            self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), at if at < row else at + 1)
            rest.insert(at, item)
            self._rows = rest
            self._row_of = None
            self.endMoveRows()
            row = at
        self._rows[row] = item
        self._changed(row, text_changed)

    def _sync_hit(self, memory_id: str, item: MemoryItem | None) -> None:
        """Show, hide or refresh one hit of the search results (new items are not searched)."""
        assert self._all_hits is not None
        rank = next((r for r, hit in enumerate(self._all_hits) if hit.item.id == memory_id), -1)
        if rank < 0 or item is None:
            return
        hit = dataclasses.replace(self._all_hits[rank], item=item)
        self._all_hits[rank] = hit
        row = self.row_of(memory_id)
        wanted = self._accepts(item)
        if row >= 0 and wanted:
            text_changed = self._rows[row].text != item.text
            self._hits[row] = hit
            self._rows[row] = item
            self._changed(row, text_changed)
        elif row >= 0:
            self._remove(row)
        elif wanted:
            shown = {h.item.id for h in self._hits}
            at = sum(1 for h in self._all_hits[:rank] if h.item.id in shown)
            self._insert(at, item, hit)

    def _insert(self, row: int, item: MemoryItem, hit: SearchHit | None = None) -> None:
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.insert(row, item)
        if hit is not None:
            self._hits.insert(row, hit)
        self._row_of = None
        self.endInsertRows()

    def _remove(self, row: int) -> None:
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._rows[row]
        if self._all_hits is not None:
            del self._hits[row]
        self._row_of = None
        self.endRemoveRows()

    def _changed(self, row: int, text_changed: bool) -> None:
        """Report a changed row; the display role only if the text changed (views relayout)."""
        index = self.index(row)
        roles = [] if text_changed else _DETAIL_ROLES
        self.dataChanged.emit(index, index, roles)
