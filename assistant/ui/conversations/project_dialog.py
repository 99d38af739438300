"""A project's settings: its name, its instructions and whether its memories are kept apart."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from assistant.projects import NAME_LIMIT, PROJECT_INSTRUCTIONS_LIMIT, Project
from assistant.ui import theme
from assistant.ui.settings.instructions import InstructionField

INSTRUCTIONS_LABEL = "What should Assistant know or do in this project?"
INSTRUCTIONS_HINT = "Its goal, its audience, the style to keep, what to avoid…"
ISOLATED_TEXT = "Keep this project's memories apart (isolated)"
ISOLATED_HELP = (
    "Its chats then use only the project's own memories, not your global ones, and everything "
    "they learn stays in the project. Otherwise they use both, the project's first, and what "
    "you say about yourself is remembered everywhere."
)


@dataclass(frozen=True)
class ProjectValues:
    """What the dialog holds."""

    name: str
    instructions: str
    isolated: bool


class ProjectDialog(QDialog):
    """Name, instructions (in every prompt of the project's chats) and isolation."""

    def __init__(self, project: Project | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projectDialog")
        self.setWindowTitle("New Project" if project is None else "Project Settings")
        self.name = QLineEdit(project.name if project else "", self)
        self.name.setObjectName("projectName")
        self.name.setMaxLength(NAME_LIMIT)
        self.name.setAccessibleName("Project name")
        name_label = QLabel("&Name", self)
        name_label.setBuddy(self.name)
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
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(name_label)
        layout.addWidget(self.name)
        layout.addSpacing(8)
        layout.addWidget(self.instructions.label)
        layout.addWidget(self.instructions.edit, 1)
        layout.addWidget(self.instructions.counter)
        layout.addSpacing(8)
        layout.addWidget(self.isolated)
        layout.addWidget(help_label)
        layout.addWidget(self.buttons)
        self.name.textChanged.connect(self._update_save)
        self.instructions.edit.textChanged.connect(self._update_save)
        self._update_save()
        self.resize(560, 480)

    def values(self) -> ProjectValues:
        """The name, instructions and isolation as they are in the dialog."""
        return ProjectValues(
            " ".join(self.name.text().split()),
            self.instructions.text(),
            self.isolated.isChecked(),
        )

    def accept(self) -> None:
        """Close with the values, unless the name is blank or the instructions too long."""
        if self._ok():
            super().accept()

    def _ok(self) -> bool:
        return bool(self.name.text().strip()) and not self.instructions.over()

    def _update_save(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(self._ok())
