"""The conversation list's small questions: a new title, a project to move to, whether to
delete."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QLayout, QMessageBox, QWidget

from assistant.ui.wording import count, number, shorten

DIALOG_WIDTH = 420  # their title and field show whole
MAX_LISTED_TITLES = 10  # a delete question names at most these, then "and N more"
TITLE_CHARS = 60


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
    dialog.setWindowTitle("Move to Project")
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


def confirm_delete(parent: QWidget, titles: list[str]) -> bool:
    """Whether the user confirms deleting the conversations of these titles."""
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "Delete conversation" if len(titles) == 1 else "Delete conversations",
        delete_question(titles),
        QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setTextFormat(Qt.TextFormat.PlainText)  # a title is never markup
    box.setInformativeText(
        ("Its messages are" if len(titles) == 1 else "Their messages are")
        + " removed for good; memories learned from them stay."
    )
    delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    return box.clickedButton() is delete


def delete_question(titles: Sequence[str]) -> str:
    """ "Delete “A”?", or "Delete 3 conversations?" and their titles (the first few, shortened)."""
    if len(titles) == 1:
        return f"Delete “{titles[0]}”?"
    listed = [f"• {shorten(title, TITLE_CHARS)}" for title in titles[:MAX_LISTED_TITLES]]
    if len(titles) > MAX_LISTED_TITLES:
        listed.append(f"and {number(len(titles) - MAX_LISTED_TITLES)} more")
    return f"Delete {count(len(titles), 'conversation')}?\n\n" + "\n".join(listed)
