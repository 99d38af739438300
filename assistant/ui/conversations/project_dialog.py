"""A project's settings: its name, its instructions, its knowledge folders and whether its
memories are kept apart."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from assistant.projects import NAME_LIMIT, PROJECT_INSTRUCTIONS_LIMIT, Project
from assistant.ui import file_places, theme
from assistant.ui.keys import is_ctrl_enter
from assistant.ui.settings.instructions import InstructionField

INSTRUCTIONS_LABEL = "What should Assistant know or do in this project?"
INSTRUCTIONS_HINT = "Its goal, its audience, the style to keep, what to avoid…"
ISOLATED_TEXT = "Keep this project's memories apart (isolated)"
ISOLATED_HELP = (
    "Its chats then use only the project's own memories, not your global ones, and everything "
    "they learn stays in the project. Otherwise they use both, the project's first, and what "
    "you say about yourself is remembered everywhere."
)


POLICY_LABEL = "What it &keeps here:"
POLICY_CHOICES = (
    ("", "As in Settings"),
    ("automatic", "Keep what it finds"),
    ("ask", "Ask me first"),
    ("on_request", 'Only when I say "remember"'),
)
POLICY_HELP = (
    "What Assistant may remember from this project's chats; the topics never to remember are "
    "those of Settings > Remembering."
)


@dataclass(frozen=True)
class ProjectValues:
    """What the dialog holds."""

    name: str
    instructions: str
    isolated: bool
    knowledge: tuple[str, ...] = ()  # folders searched in its chats only
    memory_policy: str = ""  # "": as in Settings


class ProjectDialog(QDialog):
    """Name, instructions (in every prompt of the project's chats) and isolation."""

    def __init__(
        self,
        project: Project | None,
        parent: QWidget | None = None,
        *,
        taken: Callable[[str], bool] = lambda _name: False,
    ) -> None:
        """`taken(name)`: whether another project has that name (Save waits for another)."""
        super().__init__(parent)
        self._taken = taken
        self.setObjectName("projectDialog")
        self.setWindowTitle("New Project" if project is None else "Project Settings")
        self.name = QLineEdit(project.name if project else "", self)
        self.name.setObjectName("projectName")
        self.name.setMaxLength(NAME_LIMIT)
        self.name.setAccessibleName("Project name")
        name_label = QLabel("&Name", self)
        name_label.setBuddy(self.name)
        self.name_problem = QLabel(self)
        self.name_problem.setObjectName("projectNameProblem")
        self.name_problem.hide()
        palette = self.name_problem.palette()
        palette.setColor(QPalette.ColorRole.WindowText, theme.danger(palette))
        self.name_problem.setPalette(palette)
        self.instructions = InstructionField(
            self,
            INSTRUCTIONS_LABEL,
            INSTRUCTIONS_HINT,
            project.instructions if project else "",
            "projectInstructions",
            limit=PROJECT_INSTRUCTIONS_LIMIT,
        )
        self.isolated = QCheckBox(ISOLATED_TEXT, self)
        self.isolated.setObjectName("projectIsolated")
        self.isolated.setChecked(project.isolated if project else False)
        self.isolated.setToolTip(ISOLATED_HELP)
        help_label = QLabel(ISOLATED_HELP, self)
        help_label.setWordWrap(True)
        theme.set_muted(help_label)
        self.buttons = self._build_buttons()
        layout = QVBoxLayout(self)
        layout.addWidget(name_label)
        layout.addWidget(self.name)
        layout.addWidget(self.name_problem)
        layout.addSpacing(8)
        layout.addWidget(self.instructions.label)
        layout.addWidget(self.instructions.edit, 1)
        layout.addWidget(self.instructions.counter)
        layout.addSpacing(8)
        layout.addWidget(self.isolated)
        layout.addWidget(help_label)
        layout.addSpacing(8)
        layout.addLayout(self._build_policy(project))
        layout.addSpacing(8)
        layout.addLayout(self._build_folders(project))
        layout.addWidget(self.buttons)
        self.name.textChanged.connect(self._update_save)
        for box in (self.name, self.instructions.edit):
            box.installEventFilter(self)
        self.instructions.edit.textChanged.connect(self._update_save)
        self._update_save()
        self.resize(560, 560)

    def _build_buttons(self) -> QDialogButtonBox:
        """Save (Alt+S, Ctrl+Enter) and Cancel."""
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        save = buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setText("&Save")  # the standard button has no mnemonic here
        save.setToolTip("Save (Ctrl+Enter)")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        return buttons

    def _build_folders(self, project: Project | None) -> QVBoxLayout:
        """The project's knowledge folders, with Add Folder… and Remove."""
        self.folders = QListWidget(self)
        self.folders.setObjectName("projectFolders")
        self.folders.setAccessibleName("Knowledge folders of the project")
        self.folders.addItems(list(project.knowledge) if project else [])
        self.folders.setMaximumHeight(72)
        label = QLabel("&Knowledge folders (searched in this project's chats only)", self)
        label.setBuddy(self.folders)
        add = QPushButton("Add Folder…", self)
        add.setObjectName("projectAddFolder")
        add.clicked.connect(self._on_add_folder)
        remove = QPushButton("Remove", self)
        remove.setObjectName("projectRemoveFolder")
        remove.clicked.connect(self._on_remove_folder)
        buttons = QVBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.folders, 1)
        row.addLayout(buttons)
        section = QVBoxLayout()
        section.addWidget(label)
        section.addLayout(row)
        return section

    def _build_policy(self, project: Project | None) -> QHBoxLayout:
        """The row choosing what Assistant may remember from the project's chats."""
        self.memory_policy = QComboBox(self)
        self.memory_policy.setObjectName("projectMemoryPolicy")
        self.memory_policy.setAccessibleName("What Assistant keeps from this project's chats")
        self.memory_policy.setToolTip(POLICY_HELP)
        for mode, label in POLICY_CHOICES:
            self.memory_policy.addItem(label, mode)
        current = project.memory_policy if project else ""
        self.memory_policy.setCurrentIndex(max(0, self.memory_policy.findData(current)))
        caption = QLabel(POLICY_LABEL, self)
        caption.setBuddy(self.memory_policy)
        row = QHBoxLayout()
        row.addWidget(caption)
        row.addWidget(self.memory_policy, 1)
        return row

    def values(self) -> ProjectValues:
        """The name, instructions and isolation as they are in the dialog."""
        folders = tuple(self.folders.item(n).text() for n in range(self.folders.count()))
        return ProjectValues(
            " ".join(self.name.text().split()),
            self.instructions.text(),
            self.isolated.isChecked(),
            folders,
            self.memory_policy.currentData() or "",
        )

    def choose_folder(self) -> str:
        """Ask for a folder (tests replace this); "" if cancelled."""
        start = str(file_places.start_folder("knowledge"))
        folder = QFileDialog.getExistingDirectory(
            self, "Add a knowledge folder to the project", start
        )
        file_places.remember("knowledge", folder)
        return folder

    def _on_add_folder(self) -> None:
        folder = self.choose_folder()
        if folder:
            path = os.path.abspath(folder)
            if not self.folders.findItems(path, Qt.MatchFlag.MatchExactly):
                self.folders.addItem(path)

    def _on_remove_folder(self) -> None:
        row = self.folders.currentRow()
        if row >= 0:
            self.folders.takeItem(row)

    def accept(self) -> None:
        """Close with the values, unless the name is blank or the instructions too long."""
        if self._ok():
            super().accept()

    def _ok(self) -> bool:
        name = self.name.text().strip()
        return bool(name) and not self._taken(name) and not self.instructions.over()

    def _update_save(self) -> None:
        name = " ".join(self.name.text().split())
        taken = bool(name) and self._taken(name)
        self.name_problem.setText(f"There is a project called “{name}” already." if taken else "")
        self.name_problem.setVisible(taken)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(self._ok())

    def set_values(self, values: ProjectValues) -> None:
        """Show `values` (what the user wrote, back after a failure)."""
        self.name.setText(values.name)
        self.instructions.edit.setPlainText(values.instructions)
        self.isolated.setChecked(values.isolated)
        self.folders.clear()
        self.folders.addItems(list(values.knowledge))
        self.memory_policy.setCurrentIndex(
            max(0, self.memory_policy.findData(values.memory_policy))
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Ctrl+Enter saves, as in the other dialogs with a text box."""
        if is_ctrl_enter(event):
            self.accept()
            return True
        return super().eventFilter(watched, event)
