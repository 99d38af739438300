"""Editing a model's options (kept in the settings) or a conversation's own (over the model's):
temperature, top-p, reply length, context length and tool use; "Default" leaves one unset."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from assistant.model_options import ModelOptions, ToolUse
from assistant.ui.settings.form import SettingsForm

DEFAULT = "Default"
_TOOL_CHOICES: list[tuple[str, ToolUse | None]] = [
    (DEFAULT, None),
    ("On", "on"),
    ("Off", "off"),
    ("Auto (off once the model loops on tools)", "auto"),
]


class ModelOptionsDialog(QDialog):
    """The options of one model or one conversation; `options()` has the values chosen."""

    def __init__(
        self, title: str, options: ModelOptions, inherited: str, parent: QWidget | None = None
    ) -> None:
        """`inherited` says where "Default" values come from (the model's, the server's)."""
        super().__init__(parent)
        self.setObjectName("modelOptionsDialog")
        self.setWindowTitle(title)
        self._learned_off = options.tools_learned_off
        fields = QWidget(self)
        form = SettingsForm(fields)
        form.add_note(f"“{DEFAULT}” uses {inherited}.")
        self.temperature = _decimal(self, "temperatureSpin", 2.0, options.temperature)
        form.add_row(
            "&Temperature:",
            self.temperature,
            "Randomness of the replies: low is focused and repeatable, high is varied.",
        )
        self.top_p = _decimal(self, "topPSpin", 1.0, options.top_p)
        form.add_row(
            "Top-&p:", self.top_p, "Choose words only from the most likely ones adding up to this."
        )
        self.max_tokens = _count(self, "maxTokensSpin", 1_000_000, options.max_tokens)
        form.add_row("&Reply length:", self.max_tokens, "At most this many tokens per reply.")
        self.context = _count(self, "contextTokensSpin", 10_000_000, options.context_tokens)
        form.add_row(
            "&Context length:",
            self.context,
            "The model's context window in tokens, when the server does not tell it: the "
            "prompt and the reply are kept within it.",
        )
        self.tools = QComboBox(self)
        self.tools.setObjectName("toolUseCombo")
        for label, value in _TOOL_CHOICES:
            self.tools.addItem(label, value)
        self.tools.setCurrentIndex(max(0, self.tools.findData(options.tools)))
        form.add_row(
            "Use &tools:",
            self.tools,
            "Whether the model is offered tools (memory, date, files, MCP). Small local models "
            "may loop on them: Auto turns them off for a model that does.",
        )
        self.tools_back_on = QCheckBox("Turn tools back on (they went off: it looped on them)")
        self.tools_back_on.setObjectName("toolsBackOnCheck")
        form.add_row("", self.tools_back_on)
        form.setRowVisible(self.tools_back_on, options.tools_learned_off)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(fields)
        layout.addWidget(buttons)

    def options(self) -> ModelOptions:
        """The options as chosen."""
        tools: ToolUse | None = self.tools.currentData()
        return ModelOptions(
            temperature=_value(self.temperature),
            top_p=_value(self.top_p),
            max_tokens=self.max_tokens.value() or None,
            context_tokens=self.context.value() or None,
            tools=tools,
            tools_learned_off=self._learned_off and not self.tools_back_on.isChecked(),
        )


def _decimal(parent: QWidget, name: str, top: float, value: float | None) -> QDoubleSpinBox:
    """A spin box from 0 to `top`, whose value under 0 reads "Default" (unset)."""
    spin = QDoubleSpinBox(parent)
    spin.setObjectName(name)
    spin.setRange(-0.05, top)
    spin.setSingleStep(0.05)
    spin.setDecimals(2)
    spin.setSpecialValueText(DEFAULT)
    spin.setValue(spin.minimum() if value is None else value)
    return spin


def _count(parent: QWidget, name: str, top: int, value: int | None) -> QSpinBox:
    """A spin box of tokens, whose 0 reads "Default" (unset)."""
    spin = QSpinBox(parent)
    spin.setObjectName(name)
    spin.setRange(0, top)
    spin.setSingleStep(256)
    spin.setSpecialValueText(DEFAULT)
    spin.setSuffix(" tokens")
    spin.setValue(value or 0)
    return spin


def _value(spin: QDoubleSpinBox) -> float | None:
    return None if spin.value() < 0 else round(spin.value(), 2)
