"""Edit > Custom Instructions…: what Assistant should know about the user, and how to answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from assistant.errors import AssistantError
from assistant.instructions import ABOUT_LABEL, ANSWER_LABEL, INSTRUCTIONS_LIMIT, Instructions
from assistant.ui import theme
from assistant.ui.char_counter import show_count
from assistant.ui.keys import is_ctrl_enter

if TYPE_CHECKING:
    from assistant.workspace import Workspace

INTRO = (
    "Assistant follows these in every chat, temporary ones too. They go to the model with each "
    "message as your own words, and show on the sidebar's Chat tab."
)
ABOUT_HINT = "Your work, where you live, what you are interested in…"
ANSWER_HINT = "Formal or casual, short or detailed, units, language…"


class InstructionField:
    """A question, its text box and its character counter (of `limit` characters)."""

    def __init__(
        self,
        parent: QWidget,
        label: str,
        hint: str,
        text: str,
        name: str,
        *,
        limit: int = INSTRUCTIONS_LIMIT,
    ) -> None:
        self.limit = limit
        self.label = QLabel(f"&{label}", parent)  # Alt+W, Alt+H
        self.edit = QPlainTextEdit(parent)
        self.edit.setObjectName(name)
        self.edit.setAccessibleName(label)
        self.edit.setPlaceholderText(hint)
        self.edit.setTabChangesFocus(True)  # Tab leaves the box: usable from the keyboard
        self.edit.setPlainText(text)
        self.label.setBuddy(self.edit)
        self.counter = QLabel(parent)
        self.counter.setObjectName(f"{name}Counter")
        self.edit.textChanged.connect(self.count)
        self.count()

    def text(self) -> str:
        return self.edit.toPlainText()

    def over(self) -> bool:
        """Whether the text is longer than the limit."""
        return len(self.text()) > self.limit

    def count(self) -> None:
        """Show the length; over the limit in the error colour (the text is kept, not cut)."""
        show_count(self.counter, len(self.text()), self.limit)
        self.edit.setAccessibleDescription(f"{self.counter.text()} characters")


class InstructionsDialog(QDialog):
    """The two custom instructions, each up to INSTRUCTIONS_LIMIT characters; Ctrl+Enter saves."""

    def __init__(self, instructions: Instructions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("instructionsDialog")
        self.setWindowTitle("Custom Instructions")
        intro = QLabel(INTRO, self)
        intro.setWordWrap(True)
        theme.set_muted(intro)
        self.about = InstructionField(
            self, ABOUT_LABEL, ABOUT_HINT, instructions.about, "instructionsAbout"
        )
        self.answer = InstructionField(
            self, ANSWER_LABEL, ANSWER_HINT, instructions.answer, "instructionsAnswer"
        )
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setToolTip("Save (Ctrl+Enter)")
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        for field in (self.about, self.answer):
            layout.addSpacing(8)
            layout.addWidget(field.label)
            layout.addWidget(field.edit, 1)
            layout.addWidget(field.counter)
            field.edit.textChanged.connect(self._update_save)
            # Enter is a new line; Ctrl+Enter saves (the text box takes Ctrl+Enter before any
            # shortcut could, so it is caught on its way there).
            field.edit.installEventFilter(self)
        layout.addWidget(self.buttons)
        self._update_save()
        self.resize(620, 560)

    def instructions(self) -> Instructions:
        """The texts as they are in the dialog."""
        return Instructions(self.about.text(), self.answer.text())

    def accept(self) -> None:
        """Close with the texts, unless one is over the limit (its counter says so)."""
        if self.about.over() or self.answer.over():
            return
        super().accept()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Ctrl+Enter in either text saves (when neither is over the limit)."""
        if is_ctrl_enter(event):
            self.accept()
            return True
        return super().eventFilter(watched, event)

    def _update_save(self) -> None:
        ok = not (self.about.over() or self.answer.over())
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(ok)


def edit_instructions(workspace: Workspace, parent: QWidget) -> bool:
    """Edit the custom instructions until they are saved (True) or the user cancels."""
    instructions = workspace.settings.instructions()
    while True:
        dialog = InstructionsDialog(instructions, parent)
        if not dialog.exec():
            return False
        instructions = dialog.instructions()
        try:
            workspace.set_instructions(instructions)
        except AssistantError as exc:  # said, and the dialog opens again with the texts
            QMessageBox.warning(parent, "Custom instructions not saved", str(exc))
            continue
        return True
