"""The memories page's controller: the actions on memories and the store calls behind them
(pin, edit, add, forget with Undo, restore, show source, why this result, the timeline, reflect
now), and the pinned budget.

Calls that may reach the embedding server or the model (add, edit, restore, reflect) run as
jobs; what they change arrives through the bridge like any other change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QPalette
from PySide6.QtWidgets import QInputDialog, QMenu, QWidget

from assistant.errors import AssistantError
from assistant.memory import MemoryItem
from assistant.ui.icons import draw_plus, drawn_icon
from assistant.ui.jobs import run_job
from assistant.ui.memory.dialogs import MemoryDialog, MemoryValues
from assistant.ui.memory.wording import no_source_reason
from assistant.ui.notice_bar import NoticeBar
from assistant.ui.wording import count
from assistant.ui.worker import pinned_overflow, reflect
from assistant.workspace import Workspace

if TYPE_CHECKING:
    from assistant.ui.worker import Reflection


class MemoryView(Protocol):
    """What the actions need of the page that shows the memories."""

    notice: NoticeBar

    def selected_item(self) -> MemoryItem | None:
        """The memory selected in the list, if any."""
        ...

    def select(self, memory_id: str) -> bool:
        """Select a memory listed now."""
        ...

    def show_memory(self, memory_id: str) -> bool:
        """Select and reveal a memory, clearing the search or filters that hide it."""
        ...

    def row_of(self, memory_id: str) -> int:
        """The memory's row in the list, or -1."""
        ...

    def select_row(self, row: int) -> None:
        """Make the row nearest to `row` current."""
        ...

    def show_source(self, item: MemoryItem) -> None:
        """Show the message `item` came from, if it is still there."""
        ...

    def explain_selected(self) -> None:
        """Show the numbers behind the selected hit."""
        ...

    def show_timeline(self) -> object:
        """Open the timeline window."""
        ...

    def reflection_notice(self) -> NoticeBar:
        """Where Reflect Now answers: the timeline's notice while it is open, else the page's."""
        ...


class MemoryController(QObject):
    """The QActions of the memories page, their state, and what they do."""

    undo_changed = Signal()  # a memory was forgotten, or Undo brought one back

    def __init__(self, workspace: Workspace, view: MemoryView, parent: QWidget) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self._memory = workspace.memory
        self._view = view
        self._parent = parent
        self._forgotten: list[str] = []  # undo stack, newest last

        def action(text: str, slot: Callable[[], object], name: str) -> QAction:
            act = QAction(text, parent)
            act.setObjectName(name)
            act.triggered.connect(slot)
            return act

        self.pin = action("Pin", self._toggle_pin_selected, "actionMemoryPin")
        self.edit = action("Edit…", self.edit_selected, "actionMemoryEdit")
        self.forget = action("Forget", self.forget_selected, "actionMemoryForget")
        self.restore = action("Restore", self.restore_selected, "actionMemoryRestore")
        self.make_global = action("Make Global", self._make_global_selected, "actionMemoryGlobal")
        self.make_global.setToolTip("Use this memory in every chat, not only its project's")
        self.move_to_project = action(
            "Move to Project…", self._move_selected, "actionMemoryMoveToProject"
        )
        self.move_to_project.setToolTip("Use this memory only in one project's chats")
        self.add = action("Add Memory…", self.add_memory_dialog, "actionMemoryAdd")
        self.source = action("Show Source", self._show_source_selected, "actionMemorySource")
        self.why = action("Why This Result", view.explain_selected, "actionMemoryWhy")
        self.undo = action("Undo Forget", self.undo_forget, "actionMemoryUndo")
        self.timeline = action("Timeline", view.show_timeline, "actionMemoryTimeline")
        self.reflect = action("Reflect Now", self.reflect_now, "actionMemoryReflect")
        self.reflect.setToolTip(
            "Read recent related memories and write up to three insights from them"
        )
        self.timeline.setToolTip("What Assistant learned, changed and forgot, by day")
        # The list's event filter handles the keys; these shortcuts only label the menu.
        self.forget.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.undo.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        for act in (self.forget, self.undo):
            act.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.add.setIcon(drawn_icon("list-add", draw_plus, _button_text))

    def update(self, item: MemoryItem | None, *, source_exists: bool, searching: bool) -> None:
        """Enable the actions that apply to the selected `item`."""
        has = item is not None
        self.pin.setEnabled(has)
        self.pin.setText("Unpin" if item is not None and item.pinned else "Pin")
        self.edit.setEnabled(has)
        self.forget.setEnabled(item is not None and item.state != "forgotten")
        self.restore.setEnabled(item is not None and item.state != "active")
        movable = item is not None and item.state != "forgotten"
        self.make_global.setEnabled(movable and item is not None and item.project is not None)
        self.move_to_project.setEnabled(movable and bool(self._workspace.projects.all()))
        self.source.setEnabled(source_exists)
        self.source.setText(
            "Show Source"
            if item is None or source_exists
            else no_source_reason(item, conversation_exists=False)
        )
        self.why.setEnabled(has and searching)
        self.undo.setEnabled(bool(self._forgotten))

    def menu(self, on_row: bool) -> QMenu:
        """The context menu: the actions on the row under the pointer (if `on_row`), then
        those on the list."""
        menu = QMenu(self._parent)
        if on_row:
            menu.addAction(self.pin)
            menu.addAction(self.edit)
            menu.addSeparator()
            if self.restore.isEnabled():
                menu.addAction(self.restore)
            if self.forget.isEnabled():
                menu.addAction(self.forget)
            if self.move_to_project.isEnabled():
                menu.addSeparator()
                if self.make_global.isEnabled():
                    menu.addAction(self.make_global)
                menu.addAction(self.move_to_project)
            menu.addSeparator()
            menu.addAction(self.source)
            menu.addAction(self.why)
            menu.addSeparator()
        menu.addAction(self.add)
        menu.addAction(self.reflect)
        if self._forgotten:
            menu.addAction(self.undo)
        return menu

    # -- the verbs ------------------------------------------------------------------------------

    def add_memory(self, values: MemoryValues) -> None:
        """Add a memory in the background; it appears (and is selected) when saved."""
        memory = self._memory
        run_job(
            lambda _p: memory.add(values.text, values.kind, values.importance),
            on_done=self._on_added,
            on_error=self._say,
        )

    def edit_memory(self, memory_id: str, values: MemoryValues) -> None:
        """Change a memory's text, kind and importance in the background."""
        memory = self._memory
        run_job(
            lambda _p: memory.update(
                memory_id, text=values.text, kind=values.kind, importance=values.importance
            ),
            on_done=self._on_saved,
            on_error=self._say,
        )

    def set_pinned(self, memory_id: str, pinned: bool) -> None:
        """Pin or unpin a memory."""
        try:
            self._memory.pin(memory_id, pinned)
        except (KeyError, AssistantError) as exc:
            self._say(f"Could not change the pin: {exc}")

    def toggle_pin(self, memory_id: str) -> None:
        """Pin the memory if it is not, else unpin it."""
        item = self._memory.get(memory_id)
        if item is not None:
            self.set_pinned(memory_id, not item.pinned)

    def move_memory(self, memory_id: str, project: str | None) -> None:
        """Give a memory another scope: a project's id, or None (global)."""
        try:
            self._memory.move(memory_id, project)
        except (KeyError, AssistantError) as exc:
            self._say(f"Could not move the memory: {exc}")

    def ask_project(self, current: str | None) -> str | None:
        """Ask which project a memory goes to (tests replace this): its id, or None."""
        projects = [p for p in self._workspace.projects.all() if p.id != current]
        if not projects:
            return None
        names = [p.name for p in projects]
        name, ok = QInputDialog.getItem(
            self._parent, "Move to Project", "Use this memory only in:", names, 0, False
        )
        return projects[names.index(name)].id if ok else None

    def _make_global_selected(self) -> None:
        item = self._view.selected_item()
        if item is not None:
            self.move_memory(item.id, None)

    def _move_selected(self) -> None:
        item = self._view.selected_item()
        if item is None:
            return
        project = self.ask_project(item.project)
        if project is not None:
            self.move_memory(item.id, project)

    def forget_memory(self, memory_id: str) -> None:
        """Forget a memory now, with an Undo that works until the app quits."""
        row = self._view.row_of(memory_id)
        try:
            self._memory.forget(memory_id)
        except (KeyError, AssistantError) as exc:
            self._say(f"Could not forget the memory: {exc}")
            return
        self._forgotten.append(memory_id)
        self._view.notice.show_notice("Memory forgotten.", "Undo", self.undo_forget)
        self.undo_changed.emit()
        if row >= 0:
            self._view.select_row(row)

    def undo_forget(self) -> bool:
        """Restore the most recently forgotten memory that is still forgotten."""
        while self._forgotten:
            memory_id = self._forgotten.pop()
            item = self._memory.get(memory_id)
            if item is not None and item.state == "forgotten":
                self.restore_memory(memory_id)
                self.undo_changed.emit()
                return True
        self.undo_changed.emit()
        return False

    def restore_memory(self, memory_id: str) -> None:
        """Bring a forgotten or archived memory back, in the background."""
        memory = self._memory
        run_job(
            lambda _p: memory.restore(memory_id),
            on_done=self._on_restored,
            on_error=self._say,
        )

    def _on_added(self, item: MemoryItem) -> None:
        self._view.show_memory(item.id)  # clears a search or filter that would hide it

    def _on_saved(self, item: MemoryItem) -> None:
        self._view.select(item.id)

    def _on_restored(self, item: MemoryItem) -> None:
        self._view.notice.dismiss()
        self._view.select(item.id)

    # -- on the selection -------------------------------------------------------------------

    def add_memory_dialog(self) -> None:
        """Ask for a new memory and add it."""
        values = MemoryDialog.ask(self._parent)
        if values is not None:
            self.add_memory(values)

    def edit_selected(self) -> None:
        """Edit the selected memory in a dialog."""
        item = self._view.selected_item()
        if item is None:
            return
        values = MemoryDialog.ask(self._parent, item)
        if values is not None and values != MemoryValues(item.text, item.kind, item.importance):
            self.edit_memory(item.id, values)

    def forget_selected(self) -> None:
        """Forget the selected memory (Delete)."""
        item = self._view.selected_item()
        if item is not None and item.state != "forgotten":
            self.forget_memory(item.id)

    def restore_selected(self) -> None:
        """Restore the selected forgotten or archived memory."""
        item = self._view.selected_item()
        if item is not None and item.state != "active":
            if item.id in self._forgotten:
                self._forgotten.remove(item.id)
            self.restore_memory(item.id)

    def _show_source_selected(self) -> None:
        item = self._view.selected_item()
        if item is not None:
            self._view.show_source(item)

    def _toggle_pin_selected(self) -> None:
        item = self._view.selected_item()
        if item is not None:
            self.set_pinned(item.id, not item.pinned)

    # -- reflection and the pinned budget -------------------------------------------------------

    def reflect_now(self) -> None:
        """Write insights from recent related memories now, in the background; the answer
        shows where it was asked (the timeline, or the page)."""
        if not self.reflect.isEnabled():  # one is under way
            return
        self.reflect.setEnabled(False)
        bar = self._view.reflection_notice()
        bar.show_notice("Reflecting on recent memories…", timeout_ms=0)
        workspace = self._workspace
        run_job(
            lambda _p: reflect(workspace),
            on_done=lambda reflection: self._on_reflected(reflection, bar),
            on_error=lambda message: self._on_reflect_failed(message, bar),
        )

    def _on_reflected(self, reflection: Reflection, bar: NoticeBar) -> None:
        self.reflect.setEnabled(True)
        insights = list(reflection.insights)
        if not insights:
            bar.show_notice(reflection.note or "No new insight.", title="Reflect Now")
            return
        first = insights[0].id
        bar.show_notice(
            f"Wrote {count(len(insights), 'insight')}.",
            "Show",
            lambda: self._view.show_memory(first),
        )

    def _on_reflect_failed(self, message: str, bar: NoticeBar) -> None:
        self.reflect.setEnabled(True)
        bar.show_notice(f"Could not reflect: {message}")

    def check_pinned_budget(self) -> None:
        """Warn when the pinned memories alone no longer fit in their share of a prompt."""
        overflow = pinned_overflow(self._workspace)
        if overflow is not None:
            used, allowed = overflow
            self._view.notice.show_notice(
                f"Pinned memories need about {used:,} tokens, more than the "
                f"{allowed:,} a prompt keeps for memories: the oldest "
                "pinned ones are left out. Unpin some, or raise the prompt budget in Settings.",
                timeout_ms=0,
                title="Too much pinned",
            )

    def _say(self, message: str) -> None:
        self._view.notice.show_notice(message)


def _button_text(palette: QPalette) -> QColor:
    return palette.color(QPalette.ColorRole.ButtonText)
