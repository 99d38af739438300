"""The conversation list's small questions: a new title, a project to move to."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QInputDialog, QLayout, QWidget

DIALOG_WIDTH = 420  # their title and field show whole


def ask_title(parent: QWidget, title: str) -> str | None:
    """A conversation's new title, in a dialog wide enough to read it; None if cancelled."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle("Rename conversation")
    dialog.setLabelText("Title:")
    dialog.setTextValue(title)
    _widen(dialog, max(DIALOG_WIDTH, parent.fontMetrics().horizontalAdvance(title) + 80))
    try:
        return dialog.textValue() if dialog.exec() else None
    finally:
        dialog.deleteLater()


def ask_choice(parent: QWidget, question: str, names: Sequence[str], at: int) -> int | None:
    """Which of `names` (`at` chosen first) the user picks for "Move ... to:"; None if
    cancelled."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle("Move to project")
    dialog.setLabelText(question)
    dialog.setComboBoxItems(list(names))
    dialog.setComboBoxEditable(False)
    dialog.setTextValue(names[at])
    _widen(dialog, DIALOG_WIDTH)
    try:
        return list(names).index(dialog.textValue()) if dialog.exec() else None
    finally:
        dialog.deleteLater()


def _widen(dialog: QInputDialog, width: int) -> None:
    """Make an input dialog `width` wide at least (its layout sets its own minimum, so the
    dialog's would not hold): its title and field show whole."""
    dialog.setMinimumWidth(width)
    layout = dialog.layout()
    if layout is not None:
        layout.setSizeConstraint(QLayout.SizeConstraint.SetDefaultConstraint)
    dialog.resize(width, dialog.sizeHint().height())
