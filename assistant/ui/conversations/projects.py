"""Projects in the conversation pane: the picker of the project shown (and that a new chat
starts in), and the "Move to Project" menu."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QActionGroup
from PySide6.QtWidgets import QComboBox, QMenu, QWidget

from assistant.projects import Project, ProjectStore

ALL = "*"  # the picker's "All conversations": grouped by project
NO_PROJECT = ""  # the conversations in no project
NO_PROJECT_LABEL = "No project"


def project_label(project: Project) -> str:
    """A project's name as lists show it (an isolated one says so)."""
    return f"{project.name} (isolated)" if project.isolated else project.name


class ProjectPicker(QComboBox):
    """All conversations, one project, or those in none; says which by `choice()`."""

    chosen = Signal(str)  # ALL, NO_PROJECT or a project's id

    def __init__(self, projects: ProjectStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projectPicker")
        self.setAccessibleName("Project")
        self.setAccessibleDescription(
            "Shows the conversations of one project, or all of them grouped by project; a new "
            "chat starts in the project shown"
        )
        self.setToolTip("The project shown; a new chat starts in it")
        self._projects = projects
        self.reload()
        self.currentIndexChanged.connect(lambda _i: self.chosen.emit(self.choice()))

    def reload(self) -> None:
        """List the projects again, keeping the choice (All if its project is gone)."""
        was = self.choice() if self.count() else ALL
        with_signals = self.blockSignals(True)
        self.clear()
        self.addItem("All conversations", ALL)
        for project in self._projects.all():
            self.addItem(project_label(project), project.id)
        self.addItem(NO_PROJECT_LABEL, NO_PROJECT)
        self.blockSignals(with_signals)
        found = self.findData(was)
        self.setCurrentIndex(max(found, 0))
        if found < 0:
            self.chosen.emit(ALL)

    def choice(self) -> str:
        """ALL, NO_PROJECT or the id of the project shown."""
        data = self.currentData()
        return data if isinstance(data, str) else ALL

    def choose(self, choice: str) -> None:
        """Show all conversations, those in none, or a project's (by id)."""
        self.setCurrentIndex(max(self.findData(choice), 0))

    def project_id(self) -> str | None:
        """The project a new chat starts in: the one shown, if one is."""
        choice = self.choice()
        return None if choice in (ALL, NO_PROJECT) else choice


def move_menu(
    parent: QWidget,
    projects: ProjectStore,
    current: str | None,
    move: Callable[[str | None], None],
) -> QMenu:
    """ "Move to Project": No project, then each project (the current one checked)."""
    menu = QMenu("Move to &Project", parent)
    menu.setObjectName("moveToProjectMenu")
    group = QActionGroup(menu)
    targets: list[tuple[str, str | None]] = [(NO_PROJECT_LABEL, None)]
    targets += [(project_label(p), p.id) for p in projects.all()]
    for label, project_id in targets:
        action = menu.addAction(label)
        action.setCheckable(True)
        action.setChecked(project_id == current)
        group.addAction(action)
        action.triggered.connect(lambda _checked=False, target=project_id: move(target))
    return menu
