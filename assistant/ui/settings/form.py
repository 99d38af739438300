"""Settings forms: labelled rows with their help, and notes under the fields.

novelWriter's `configlayout` is the model: a page asks for a row (label, field, help) and a
note, and the look of every form is decided here. A field's help is its tooltip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QLayout, QWidget

from assistant.ui import theme

WARNING_COLOR = "#9a6700"
# A word this long (a URL, a path) may be broken after its punctuation when wrapped.
_LONG_WORD = re.compile(r"\S{30,}")
_ZERO_WIDTH_SPACE = "\u200b"


class SettingsForm(QFormLayout):
    """A form of labelled rows, right-aligned labels, fields that grow, and notes."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)

    def add_row(self, label: str | QLabel, field: QWidget | QLayout, help_text: str = "") -> None:
        """A row: `label` (its `&` letter focuses the field) and the field, whose tooltip is
        `help_text`; an empty label leaves the label column blank."""
        if help_text and isinstance(field, QWidget):
            field.setToolTip(help_text)
        self.addRow(label, field)

    def add_note(self, text: str = "", color: str | None = None, *, name: str = "") -> QLabel:
        """A note under the fields (muted, or in `color`), its row shown while it has text."""
        label = note(self._parent, color, text)
        if name:
            label.setObjectName(name)
        self.addRow("", label)
        self.setRowVisible(label, bool(text))
        return label

    def set_note(self, label: QLabel, text: str) -> None:
        """Change a note's text, showing its row while it has some."""
        label.setText(text)
        self.setRowVisible(label, bool(text))


def note(parent: QWidget, color: str | None = None, text: str = "") -> QLabel:
    """A small wrapped help line for under a field, muted or in `color`."""
    label = QLabel(text, parent)
    label.setWordWrap(True)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 0.9)
    label.setFont(font)
    if color:
        label.setStyleSheet(f"color: {color};")
    else:
        theme.set_muted(label)
    return label


def align_labels(forms: Iterable[QFormLayout]) -> None:
    """Give the label columns of several forms one width, so that their fields line up."""
    labels: list[QLabel] = []
    for form in forms:
        for row in range(form.rowCount()):
            item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            widget = item.widget() if item is not None else None
            if isinstance(widget, QLabel):
                labels.append(widget)
    width = max((label.sizeHint().width() for label in labels), default=0)
    for label in labels:
        label.setMinimumWidth(width)
        label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def wrappable(text: str) -> str:
    """`text` with a break allowed after the punctuation of long words (URLs, paths), so that a
    word-wrapped label wraps them rather than clipping them."""

    def breakable(match: re.Match[str]) -> str:
        word = re.sub(r"([/.:?&=_-])", rf"\1{_ZERO_WIDTH_SPACE}", match.group())
        return re.sub(r"([^/.:?&=_\-\u200b]{20})(?=.)", rf"\1{_ZERO_WIDTH_SPACE}", word)

    return _LONG_WORD.sub(breakable, text)
