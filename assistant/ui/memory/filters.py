"""Above the memory list: the search field, the kind, state, author and scope filters, the
keyword-only note."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from assistant.memory import KINDS, EmbeddingStatus, MemoryKind, MemoryState
from assistant.projects import Project
from assistant.ui.debounce import Debounced
from assistant.ui.icons import draw_search, drawn_icon
from assistant.ui.memory.model import ALL_SCOPES, GLOBAL
from assistant.ui.theme import muted, set_muted
from assistant.ui.wording import count, number

SEARCH_DELAY_MS = 200

KIND_PLURALS: dict[str, str] = {
    "fact": "Facts",
    "preference": "Preferences",
    "plan": "Plans",
    "decision": "Decisions",
    "task": "Tasks",
    "event": "Events",
    "insight": "Insights",
}
# Who made a memory: the user, the model (the assistant, the curator, a reflection), another
# app through MCP, or an import.
AUTHORS: dict[str, tuple[str, str, frozenset[str]]] = {
    "you": ("By you", "Memories you added yourself", frozenset({"user"})),
    "model": (
        "By the model",
        "Memories the assistant, the curator or a reflection added",
        frozenset({"tool", "curator", "reflection"}),
    ),
    "mcp": (
        "From other apps",
        "Memories another app sent through MCP (assistant mcp)",
        frozenset({"mcp"}),
    ),
    "import": ("Imported", "Memories from an import", frozenset({"import"})),
}
# The author filter's labels are read whole ("By the m" says nothing).
AUTHOR_LETTERS = max(len(label) for label, _tip, _origins in AUTHORS.values())
STATE_LABELS: dict[str, str] = {
    "active": "Active",
    "archived": "Archived",
    "forgotten": "Forgotten",
}


class MemoryFilterBar(QWidget):
    """The search field (debounced as you type), the kind and state filters and a note."""

    query_changed = Signal()  # typing settled, or Enter
    filter_changed = Signal()  # the kind, the state or the author

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit(self)
        self.search.setObjectName("memorySearch")
        self.search.setAccessibleDescription(
            "Searches long-term memory by keyword and meaning as you type"
        )
        self.search.setPlaceholderText("Search memories")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search memories")
        self.search.addAction(
            drawn_icon("edit-find", draw_search, muted),
            QLineEdit.ActionPosition.LeadingPosition,
        )
        self._typing = Debounced(SEARCH_DELAY_MS, self.query_changed.emit, self)
        self.search.textChanged.connect(self._typing.trigger)
        self.search.returnPressed.connect(self.query_changed.emit)

        self.kind_filter = QComboBox(self)
        self.kind_filter.setObjectName("memoryKindFilter")
        self.kind_filter.setAccessibleDescription(
            "Shows only memories of one kind: facts, preferences, plans and so on"
        )
        self.kind_filter.setAccessibleName("Kind")
        self.kind_filter.addItem("All kinds", "")  # "", not None: kept out of QVariants
        for kind in KINDS:
            self.kind_filter.addItem(KIND_PLURALS.get(kind, kind.capitalize()), kind)
        self.kind_filter.currentIndexChanged.connect(self._on_combo_changed)

        self.state_filter = QComboBox(self)
        self.state_filter.setObjectName("memoryStateFilter")
        self.state_filter.setAccessibleDescription("Shows active, archived or forgotten memories")
        self.state_filter.setAccessibleName("State")
        for state, label in STATE_LABELS.items():
            self.state_filter.addItem(label, state)
        self.state_filter.setItemData(
            1, "Memories left unused for a long time; never deleted", Qt.ItemDataRole.ToolTipRole
        )
        self.state_filter.setItemData(
            2,
            "Forgotten since Assistant started; erased when it quits",
            Qt.ItemDataRole.ToolTipRole,
        )
        self.state_filter.currentIndexChanged.connect(self._on_combo_changed)

        self.author_filter = self._author_combo()
        self._row = filters = QHBoxLayout()
        filters.setSpacing(6)
        for combo, letters in (
            (self.kind_filter, 6),
            (self.state_filter, 6),
            (self.author_filter, AUTHOR_LETTERS),
        ):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(letters)
        filters.addWidget(self.kind_filter, 1)
        filters.addWidget(self.state_filter, 1)

        self.scope_filter = self._build_scope_filter()

        self.keyword_note = QLabel(self)
        self.keyword_note.setObjectName("memoryKeywordNote")
        self.keyword_note.setWordWrap(True)
        small = self.keyword_note.font()
        small.setPointSizeF(small.pointSizeF() * 0.9)
        self.keyword_note.setFont(small)
        set_muted(self.keyword_note)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.search)
        layout.addLayout(filters)
        layout.addLayout(self._whose_row())
        layout.addWidget(self.keyword_note)
        self.set_projects([])

    def _whose_row(self) -> QHBoxLayout:
        """Who made it, on a row of its own (its labels are read whole), and the scope."""
        whose = QHBoxLayout()
        whose.setSpacing(6)
        whose.addWidget(self.author_filter, 0, Qt.AlignmentFlag.AlignLeft)
        whose.addWidget(self.scope_filter, 1)
        return whose

    def _combo(self, name: str, label: str, description: str) -> QComboBox:
        """A filter's combo box, named and described for screen readers."""
        combo = QComboBox(self)
        combo.setObjectName(name)
        combo.setAccessibleName(label)
        combo.setAccessibleDescription(description)
        combo.currentIndexChanged.connect(self._on_combo_changed)
        return combo

    def _build_scope_filter(self) -> QComboBox:
        combo = self._combo(
            "memoryScopeFilter",
            "Scope",
            "Shows the memories of every scope, the global ones, or one project's",
        )
        combo.setToolTip("Global memories are used in every chat; a project's, in its chats only")
        return combo

    def _author_combo(self) -> QComboBox:
        combo = self._combo(
            "memoryAuthorFilter",
            "Added by",
            "Shows only the memories you added, the model added, other apps sent or an import "
            "brought",
        )
        with QSignalBlocker(combo):
            combo.addItem("Anyone", "")
            for n, (key, (label, tip, _origins)) in enumerate(AUTHORS.items(), start=1):
                combo.addItem(label, key)
                combo.setItemData(n, tip, Qt.ItemDataRole.ToolTipRole)
        return combo

    def add_to_row(self, widget: QWidget) -> None:
        """Put `widget` after the filters, on their row."""
        self._row.addWidget(widget)

    def _on_combo_changed(self, _index: int) -> None:
        self.filter_changed.emit()

    def query(self) -> str:
        """The search text, stripped."""
        return self.search.text().strip()

    def kind(self) -> MemoryKind | None:
        """The kind chosen, or None for all kinds."""
        return cast(MemoryKind | None, self.kind_filter.currentData() or None)

    def state(self) -> MemoryState:
        """The state chosen."""
        return cast(MemoryState, self.state_filter.currentData())

    def origins(self) -> frozenset[str] | None:
        """The origins of the author chosen, or None for anyone."""
        key = self.author_filter.currentData()
        return AUTHORS[key][2] if key else None

    def scope(self) -> str:
        """ALL_SCOPES, GLOBAL or the id of the project chosen."""
        data = self.scope_filter.currentData()
        return data if isinstance(data, str) else ALL_SCOPES

    def set_projects(self, projects: list[Project]) -> None:
        """List these projects in the scope filter (shown only when there are some), keeping
        the choice if its project is still there."""
        was = self.scope()
        with QSignalBlocker(self.scope_filter):
            self.scope_filter.clear()
            self.scope_filter.addItem("All scopes", ALL_SCOPES)
            self.scope_filter.addItem("Global", GLOBAL)
            for project in projects:
                self.scope_filter.addItem(f"Project: {project.name}", project.id)
            self.scope_filter.setCurrentIndex(max(0, self.scope_filter.findData(was)))
        self.scope_filter.setVisible(bool(projects))
        if self.scope() != was:
            self.filter_changed.emit()

    def cancel_typing(self) -> None:
        """Drop a search still waiting for the typing to settle."""
        self._typing.cancel()

    def reveal(
        self, kind: MemoryKind, state: MemoryState, origin: str, scope: str = ALL_SCOPES
    ) -> None:
        """Choose all kinds, anyone and all scopes where those filters hide `kind`, `origin`
        or `scope`, and the state `state`."""
        if self.kind() not in (None, kind):
            self.kind_filter.setCurrentIndex(0)
        origins = self.origins()
        if origins is not None and origin not in origins:
            self.author_filter.setCurrentIndex(0)
        if self.scope() not in (ALL_SCOPES, scope):
            self.scope_filter.setCurrentIndex(0)
        if self.state() != state:
            self.state_filter.setCurrentIndex(self.state_filter.findData(state))

    def filtered(self) -> bool:
        """Whether an author or a scope filter hides memories."""
        return self.origins() is not None or self.scope() != ALL_SCOPES

    def clear_filters(self) -> None:
        """Show every author, scope and kind again (one change)."""
        with QSignalBlocker(self.kind_filter), QSignalBlocker(self.author_filter):
            self.kind_filter.setCurrentIndex(0)
            self.author_filter.setCurrentIndex(0)
        with QSignalBlocker(self.scope_filter):
            self.scope_filter.setCurrentIndex(0)
        self.filter_changed.emit()

    def show_embedding_status(self, status: EmbeddingStatus) -> None:
        """Show the note that search cannot use meaning, if it cannot."""
        note, detail = keyword_note(status)
        self.keyword_note.setText(note)
        self.keyword_note.setToolTip(detail)
        self.keyword_note.setVisible(bool(note))


def keyword_note(status: EmbeddingStatus) -> tuple[str, str]:
    """The note under the search field when search cannot use meaning, and its tooltip."""
    if not status.keyword_only:
        return "", ""
    if status.model is None:
        return (
            "Keyword search only: no embedding model is set up.",
            "Set an embedding model in Settings to also find memories by meaning.",
        )
    if status.error is not None:
        # Say what is wrong (unreachable, unusable vectors, ...): the message is the provider's.
        reason = status.error if len(status.error) <= 160 else status.error[:159] + "…"
        return f"Keyword search only. {reason}", status.error
    if status.total == 0:
        return "", ""
    return (
        "Keyword search only until memories are indexed.",
        f"{number(status.embedded)} of {count(status.total, 'memory', 'memories')} have "
        f"embeddings from {status.model}.",
    )
