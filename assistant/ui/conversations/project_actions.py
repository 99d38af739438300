"""The Projects menu: new project, its settings (name, instructions, isolation), move a
conversation to a project, delete a project."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QCheckBox, QDialog, QMenu, QMessageBox, QWidget

from assistant.errors import AssistantError
from assistant.projects import Project
from assistant.ui.bridge import StoreBridge
from assistant.ui.conversations.model import ProjectRole
from assistant.ui.conversations.pane import ConversationPane
from assistant.ui.conversations.project_dialog import ProjectDialog, ProjectValues
from assistant.ui.jobs import Progress, run_job
from assistant.ui.memory.sidebar import MemorySidebar
from assistant.ui.wording import count
from assistant.workspace import Workspace


class ProjectActions(QObject):
    """The project commands, acting on the project shown in the pane (or the one the selected
    conversation is in)."""

    def __init__(self, workspace: Workspace, pane: ConversationPane, parent: QWidget) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self._pane = pane
        self._parent = parent

        def action(text: str, name: str, key: str | None = None) -> QAction:
            made = QAction(text, parent)
            made.setObjectName(name)
            if key:
                made.setShortcut(QKeySequence(key))
                made.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            return made

        self.new = action("&New Project…", "actionNewProject", "Ctrl+Alt+N")
        self.new.setStatusTip("Start a project: its chats share instructions and memories")
        self.rename = action("&Rename Project…", "actionRenameProject")
        self.edit = action("Project &Instructions…", "actionProjectInstructions", "Ctrl+Alt+I")
        self.edit.setStatusTip("The project's name, instructions and whether it is isolated")
        self.delete = action("&Delete Project…", "actionDeleteProject")
        self.new.triggered.connect(self.new_project)
        self.rename.triggered.connect(self.edit_project)
        self.edit.triggered.connect(self.edit_project)
        self.delete.triggered.connect(self.delete_project)

    def fill(self, menu: QMenu) -> None:
        """Put the commands in `menu` (enabled as they apply each time it opens)."""
        menu.addActions([self.new, self.rename, self.edit])
        menu.addSeparator()
        menu.addAction(self._pane.move_action)
        menu.addSeparator()
        menu.addAction(self.delete)
        menu.aboutToShow.connect(self._update_enabled)

    def _update_enabled(self) -> None:
        has = self.current() is not None
        for needs_project in (self.rename, self.edit, self.delete):
            needs_project.setEnabled(has)

    def current(self) -> Project | None:
        """The project shown in the pane, else the selected conversation's."""
        picker, projects = self._pane.picker, self._workspace.projects
        chosen = picker.project_id() if picker is not None else None
        if chosen is None:
            value = self._pane.view.currentIndex().data(ProjectRole)
            chosen = value if isinstance(value, str) else None
        return projects.get(chosen)

    def ask(
        self, project: Project | None, start: ProjectValues | None = None
    ) -> ProjectValues | None:
        """The project dialog (tests replace this), showing `start` if given (what the user
        wrote before a failure); None if cancelled."""
        projects = self._workspace.projects

        def taken(name: str) -> bool:
            other = projects.by_name(name)
            return other is not None and (project is None or other.id != project.id)

        dialog = ProjectDialog(project, self._parent, taken=taken)
        if start is not None:
            dialog.set_values(start)
        try:
            return dialog.values() if dialog.exec() == QDialog.DialogCode.Accepted else None
        finally:
            dialog.deleteLater()

    def new_project(self) -> Project | None:
        """Ask for a new project; create it and show it, with a new chat in it (the chat shown
        before is not in the list any more)."""
        projects = self._workspace.projects
        project = self._saved(
            None,
            "Project not created",
            lambda v: projects.create(v.name, **_settings_of(v)),
        )
        if project is None:
            return None
        self._pane.projects_changed()
        self._pane.show_project(project.id)
        self._pane.new_conversation()
        return project

    def edit_project(self) -> None:
        """Edit the current project's name, instructions and isolation."""
        project, projects = self.current(), self._workspace.projects
        if project is None:
            return
        changed = self._saved(
            project,
            "Project not changed",
            lambda v: projects.update(project.id, name=v.name, **_settings_of(v)),
        )
        if changed is not None:
            self._pane.projects_changed()

    def _saved(
        self, project: Project | None, failed: str, save: Callable[[ProjectValues], Project]
    ) -> Project | None:
        """Ask for `project`'s values (None: a new one's) and `save` them; a failure is said
        (titled `failed`) and the dialog comes back with everything written in it. None if
        the user cancels."""
        values = self.ask(project)
        while values is not None:
            try:
                return save(values)
            except (ValueError, AssistantError) as exc:
                self._warn(failed, str(exc))
                values = self.ask(project, values)
        return None

    def confirm_delete(self, project: Project, conversations: int, memories: int) -> bool | None:
        """Ask before deleting a project (tests replace this): None if not, else whether its
        memories are forgotten too (they become global otherwise)."""
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Delete project",
            f"Delete the project “{project.name}”?",
            QMessageBox.StandardButton.Cancel,
            self._parent,
        )
        box.setInformativeText(
            f"Its {count(conversations, 'conversation')} move to No project. Its "
            f"{count(memories, 'memory', 'memories')} become global (used in every chat) "
            "unless you forget them too."
        )
        forget = QCheckBox(f"Forget its {count(memories, 'memory', 'memories')} as well", box)
        forget.setObjectName("deleteProjectForget")
        forget.setChecked(project.isolated)  # they were kept apart: not spread by default
        forget.setEnabled(memories > 0)
        box.setCheckBox(forget)
        delete = box.addButton("Delete Project", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return forget.isChecked() if box.clickedButton() is delete else None

    def delete_project(self) -> None:
        """Delete the current project after one confirmation, in the background."""
        project = self.current()
        if project is None:
            return
        workspace = self._workspace
        chats = sum(c.project == project.id for c in workspace.conversations.all())
        memories = sum(i.project == project.id for i in workspace.memory.all())
        forget = self.confirm_delete(project, chats, memories)
        if forget is None:
            return

        def delete(_progress: Progress) -> None:
            workspace.delete_project(project.id, forget_memories=forget)

        run_job(
            delete,
            on_done=lambda _none: self._pane.projects_changed(),
            on_error=lambda message: self._warn("Project not deleted", message),
        )

    def _warn(self, title: str, text: str) -> None:
        QMessageBox.warning(self._parent, title, text)


class ProjectWindow(Protocol):
    """What `connect_projects` needs of the main window."""

    @property
    def conversations(self) -> ConversationPane: ...

    @property
    def sidebar(self) -> MemorySidebar: ...

    @property
    def bridge(self) -> StoreBridge: ...


def connect_projects(window: ProjectWindow, menu: QMenu, workspace: Workspace) -> ProjectActions:
    """The Projects menu in `menu`, and every pane following the projects as they change."""
    pane, sidebar = window.conversations, window.sidebar
    actions = ProjectActions(workspace, pane, pane.window())
    actions.fill(menu)

    def changed(_project_id: str) -> None:
        pane.projects_changed()
        sidebar.memories.projects_changed()
        sidebar.refresh_instructions()

    window.bridge.projects_changed.connect(changed)
    return actions


def _settings_of(values: ProjectValues) -> dict[str, Any]:
    """What a project holds besides its name, as the dialog gave it."""
    return {
        "instructions": values.instructions,
        "isolated": values.isolated,
        "knowledge": values.knowledge,
        "memory_policy": values.memory_policy,
    }
