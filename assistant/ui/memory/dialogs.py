"""The dialog that adds a memory or edits one: text, kind and importance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from assistant.memory import KINDS, MemoryItem, MemoryKind
from assistant.memory.items import MAX_TEXT_CHARS
from assistant.ui.char_counter import show_count
from assistant.ui.keys import is_ctrl_enter
from assistant.ui.theme import set_muted

KIND_HINTS: dict[str, str] = {
    "fact": "Something true about you or your world",
    "preference": "How you like things done",
    "plan": "Something you intend to do",
    "decision": "A choice that was made",
    "task": "Something to get done",
    "event": "Something that happened or will happen",
    "insight": "A lesson or an observation",
}


@dataclass(frozen=True)
class MemoryValues:
    """What the user entered: the text, the kind and the importance (0..1)."""

    text: str
    kind: MemoryKind
    importance: float


class MemoryDialog(QDialog):
    """Edit a memory's text, kind and importance; empty for a new memory."""

    def __init__(self, item: MemoryItem | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryDialog")
        self.setWindowTitle("Edit Memory" if item else "Add Memory")
        self.setMinimumWidth(420)

        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setObjectName("memoryTextEdit")
        self.text_edit.setPlaceholderText("What should Assistant remember?")
        self.text_edit.setTabChangesFocus(True)
        self.text_edit.setMinimumHeight(110)

        self.kind_combo = QComboBox(self)
        self.kind_combo.setObjectName("memoryKindCombo")
        for kind in KINDS:
            self.kind_combo.addItem(kind.capitalize(), kind)
            self.kind_combo.setItemData(
                self.kind_combo.count() - 1, KIND_HINTS.get(kind, ""), Qt.ItemDataRole.ToolTipRole
            )

        self.importance_slider = QSlider(Qt.Orientation.Horizontal, self)
        self.importance_slider.setRange(0, 100)
        self.importance_slider.setPageStep(10)
        self.importance_spin = QDoubleSpinBox(self)
        self.importance_spin.setObjectName("memoryImportanceSpin")
        self.importance_spin.setRange(0.0, 1.0)
        self.importance_spin.setSingleStep(0.05)
        self.importance_spin.setDecimals(2)
        self.importance_slider.valueChanged.connect(self._on_slider)
        self.importance_spin.valueChanged.connect(self._on_spin)
        importance = QHBoxLayout()
        importance.addWidget(self.importance_slider, 1)
        importance.addWidget(self.importance_spin)

        self.counter = QLabel(self)
        self.counter.setObjectName("memoryTextCounter")
        self.counter.setAlignment(Qt.AlignmentFlag.AlignRight)

        hint = QLabel("Important memories are recalled first and fade more slowly.", self)
        hint.setWordWrap(True)
        set_muted(hint)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Kind:", self.kind_combo)
        form.addRow("Importance:", importance)
        form.addRow("", hint)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setText("Save" if item else "Add")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.text_edit.textChanged.connect(self._update_buttons)
        # Enter is a new line in the text; Ctrl+Enter saves (the text box takes Ctrl+Enter
        # before any shortcut could, so it is caught on its way there).
        self.text_edit.installEventFilter(self)

        layout = QVBoxLayout(self)
        layout.addWidget(self.text_edit, 1)
        layout.addWidget(self.counter)
        layout.addLayout(form)
        layout.addWidget(self.buttons)

        self.set_values(
            MemoryValues(item.text, item.kind, item.importance)
            if item
            else MemoryValues("", "fact", 0.5)
        )
        self.text_edit.setFocus()

    def set_values(self, values: MemoryValues) -> None:
        """Fill the fields."""
        self.text_edit.setPlainText(values.text)
        self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(values.kind)))
        self.importance_spin.setValue(values.importance)
        self._on_spin(values.importance)
        self._update_buttons()

    def values(self) -> MemoryValues:
        """The values entered."""
        return MemoryValues(
            self.text_edit.toPlainText().strip(),
            cast(MemoryKind, self.kind_combo.currentData()),
            round(self.importance_spin.value(), 2),
        )

    def _on_slider(self, value: int) -> None:
        if round(self.importance_spin.value() * 100) != value:
            self.importance_spin.setValue(value / 100)

    def _on_spin(self, value: float) -> None:
        if self.importance_slider.value() != round(value * 100):
            self.importance_slider.setValue(round(value * 100))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Ctrl+Enter in the text saves (when there is something to save)."""
        if watched is self.text_edit and is_ctrl_enter(event):
            if self.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled():
                self.accept()
            return True
        return super().eventFilter(watched, event)

    def _update_buttons(self) -> None:
        """Save only some text within the limit; the counter says how long it is (a longer
        text was taken, the dialog closed, the store refused it and the text was lost)."""
        length = len(self.text_edit.toPlainText().strip())
        show_count(self.counter, length, MAX_TEXT_CHARS)
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setEnabled(0 < length <= MAX_TEXT_CHARS)
        save.setToolTip(
            f"A memory is one fact: at most {MAX_TEXT_CHARS:,} characters. Shorten it to save."
            if length > MAX_TEXT_CHARS
            else "Save (Ctrl+Enter)"
        )

    @classmethod
    def ask(
        cls,
        parent: QWidget | None,
        item: MemoryItem | None = None,
        *,
        start: MemoryValues | None = None,
    ) -> MemoryValues | None:
        """Show the dialog modally (a new memory: filled with `start`, if given); the values,
        or None if cancelled."""
        dialog = cls(item, parent)
        if start is not None:
            dialog.set_values(start)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            return dialog.values()
        finally:
            dialog.deleteLater()
