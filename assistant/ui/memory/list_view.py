"""The memory list in its frame, and what it says when it has nothing to show."""

from __future__ import annotations

import html
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QLabel,
    QListView,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from assistant.memory import MemoryKind, MemoryState
from assistant.ui.memory.delegate import MemoryDelegate
from assistant.ui.memory.filters import KIND_PLURALS
from assistant.ui.memory.model import MemoryListModel
from assistant.ui.theme import muted

EMPTY_MEMORIES = (
    "No memories yet. Assistant remembers what matters from your conversations "
    "— or add one yourself."
)


EmptyAction = Literal["add", "clear", ""]  # the button an empty list offers, if any
QUERY_SHOWN = 60  # characters of a search said back in "No matches"


def empty_text(
    query: str, state: MemoryState, kind: MemoryKind | None, filtered: bool = False
) -> tuple[str, str, EmptyAction]:
    """What an empty list says: a title, a sentence, and the button it offers ("add":
    "Add Memory…", "clear": "Clear Filters"). `filtered`: an author or scope filter is set."""
    if query:
        return "No matches", f"Nothing in memory matches “{elided(query)}”.", ""
    if filtered:
        return (
            "No memories match these filters",
            "Clear the filters to see every memory.",
            "clear",
        )
    if state == "forgotten":
        return (
            "Nothing forgotten",
            "Memories you forget stay here until Assistant quits, so you can restore them.",
            "",
        )
    if state == "archived":
        return (
            "Nothing archived",
            "Memories left unused for a long time are archived here. They are never deleted.",
            "",
        )
    if kind is not None:
        return (
            f"No {KIND_PLURALS.get(kind, kind).lower()}",
            "Try another kind, or add one yourself.",
            "add",
        )
    title, body = EMPTY_MEMORIES.split(". ", 1)
    return title + ".", body, "add"


def elided(query: str) -> str:
    """`query` on one line, cut to about QUERY_SHOWN characters (a pasted page is not said
    back whole)."""
    line = " ".join(query.split())
    return line if len(line) <= QUERY_SHOWN else line[: QUERY_SHOWN - 1].rstrip() + "…"


class MemoryListFrame(QFrame):
    """The list of memories, or in its place a message and an "Add Memory…" button."""

    def __init__(
        self, model: MemoryListModel, delegate: MemoryDelegate, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryListFrame")
        self.setFrameShape(QFrame.Shape.StyledPanel)

        self.list_view = QListView(self)
        self.list_view.setObjectName("memoryList")
        self.list_view.setAccessibleDescription(
            "Your long-term memories, pinned first, then newest first"
        )
        self.list_view.setAccessibleName("Memories")
        # Batched layout, set before the model: rows are measured a batch per event-loop
        # pass, so a store with 10,000 memories does not delay the window.
        self.list_view.setLayoutMode(QListView.LayoutMode.Batched)
        self.list_view.setBatchSize(100)
        self.list_view.setUniformItemSizes(False)
        self.list_view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list_view.setResizeMode(QListView.ResizeMode.Adjust)
        self.list_view.setItemDelegate(delegate)
        self.list_view.setModel(model)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setMouseTracking(True)
        self.list_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list_view.setFrameShape(QFrame.Shape.NoFrame)

        self.empty_label = QLabel(self)
        self.empty_label.setObjectName("memoryEmptyState")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setTextFormat(Qt.TextFormat.RichText)
        self.empty_label.setContentsMargins(20, 0, 20, 0)
        self.empty_add = QPushButton("Add Memory…", self)
        self.empty_add.setObjectName("memoryEmptyAdd")
        self.empty_add.setAccessibleDescription("Adds a memory you write yourself")
        self.empty_clear = QPushButton("Clear Filters", self)
        self.empty_clear.setObjectName("memoryEmptyClear")
        self.empty_clear.setAccessibleDescription("Shows every memory again")
        empty = QWidget(self)
        empty.setBackgroundRole(QPalette.ColorRole.Base)  # the list's background
        empty.setAutoFillBackground(True)
        empty_layout = QVBoxLayout(empty)
        empty_layout.setSpacing(14)
        empty_layout.addStretch(2)
        empty_layout.addWidget(self.empty_label)
        empty_layout.addWidget(self.empty_add, 0, Qt.AlignmentFlag.AlignHCenter)
        empty_layout.addWidget(self.empty_clear, 0, Qt.AlignmentFlag.AlignHCenter)
        empty_layout.addStretch(3)

        self.list_stack = QStackedWidget(self)
        self.list_stack.addWidget(self.list_view)
        self.list_stack.addWidget(empty)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(1, 1, 1, 1)
        layout.addWidget(self.list_stack)

    def show_list(self) -> None:
        """Show the list."""
        self.list_stack.setCurrentIndex(0)

    def show_empty(self, title: str, body: str, action: EmptyAction) -> None:
        """Show `title` and `body` instead of the list, maybe with "Add Memory…" or "Clear
        Filters" (`action`)."""
        color = muted(self.palette()).name()
        self.empty_label.setText(
            f"<p style='font-size:large; font-weight:600'>{html.escape(title)}</p>"
            f"<p style='color:{color}'>{html.escape(body)}</p>"
        )
        self.empty_add.setVisible(action == "add")
        self.empty_clear.setVisible(action == "clear")
        self.list_stack.setCurrentIndex(1)
