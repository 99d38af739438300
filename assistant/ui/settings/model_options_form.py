"""The fields of a model's options (temperature, top-p, reply and context length, tool use),
for the chat's Options dialog and the Models page of the settings; "Default" leaves one unset."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from assistant.model_options import MIN_CONTEXT, ModelOptions, ToolUse
from assistant.ui.settings.form import SettingsForm

DEFAULT = "Default"
_TOOL_CHOICES: list[tuple[str, ToolUse | None]] = [
    (DEFAULT, None),
    ("On", "on"),
    ("Off", "off"),
    ("Auto (off once the model loops on tools)", "auto"),
]


class ModelOptionsFields:
    """The option rows, added to `form`; `options()` has the values shown."""

    def __init__(self, form: SettingsForm, parent: QWidget, inherited: str) -> None:
        """`inherited` says where "Default" values come from (the model's, the server's)."""
        self._form = form
        self._learned_off = False
        self.note = form.add_note(f"“{DEFAULT}” uses {inherited}.")
        self.temperature = _decimal(parent, "temperatureSpin", 2.0)
        form.add_row(
            "&Temperature:",
            self.temperature,
            "Randomness of the replies: low is focused and repeatable, high is varied.",
        )
        self.top_p = _decimal(parent, "topPSpin", 1.0)
        form.add_row(
            "Top-&p:", self.top_p, "Choose words only from the most likely ones adding up to this."
        )
        self.max_tokens = _count(parent, "maxTokensSpin", 1_000_000)
        form.add_row("Reply &length:", self.max_tokens, "At most this many tokens per reply.")
        self.context = _count(parent, "contextTokensSpin", 10_000_000, bottom=MIN_CONTEXT)
        form.add_row(
            "&Context length:",
            self.context,
            "The model's context window in tokens, when the server does not tell it: the "
            "prompt and the reply are kept within it.",
        )
        self.tools = QComboBox(parent)
        self.tools.setObjectName("toolUseCombo")
        for label, value in _TOOL_CHOICES:
            self.tools.addItem(label, value)
        form.add_row(
            "Use &tools:",
            self.tools,
            "Whether the model is offered tools (memory, date, files, MCP). Small local models "
            "may loop on them: Auto turns them off for a model that does.",
        )
        self.tools_back_on = QCheckBox(
            "Turn tools back on (they went off: it looped on them)", parent
        )
        self.tools_back_on.setObjectName("toolsBackOnCheck")
        form.add_row("", self.tools_back_on, "Offer the model tools again, as Use tools says.")
        self.show(ModelOptions())

    def show(self, options: ModelOptions) -> None:
        """Show `options`."""
        self._learned_off = options.tools_learned_off
        _set(self.temperature, options.temperature)
        _set(self.top_p, options.top_p)
        self.max_tokens.setValue(options.max_tokens or 0)
        self.context.setValue(options.context_tokens or 0)
        self.tools.setCurrentIndex(max(0, self.tools.findData(options.tools)))
        self.tools_back_on.setChecked(False)
        self._form.setRowVisible(self.tools_back_on, options.tools_learned_off)

    def options(self) -> ModelOptions:
        """The options as shown."""
        tools: ToolUse | None = self.tools.currentData()
        return ModelOptions(
            temperature=_value(self.temperature),
            top_p=_value(self.top_p),
            max_tokens=_tokens(self.max_tokens, 1),
            context_tokens=_tokens(self.context, MIN_CONTEXT),
            tools=tools,
            tools_learned_off=self._learned_off and not self.tools_back_on.isChecked(),
        )


def _decimal(parent: QWidget, name: str, top: float) -> QDoubleSpinBox:
    """A spin box from 0 to `top`, whose value under 0 reads "Default" (unset)."""
    spin = QDoubleSpinBox(parent)
    spin.setObjectName(name)
    spin.setRange(-0.05, top)
    spin.setSingleStep(0.05)
    spin.setDecimals(2)
    spin.setSpecialValueText(DEFAULT)
    return spin


def _count(parent: QWidget, name: str, top: int, bottom: int = 1) -> QSpinBox:
    """A spin box of tokens from `bottom` to `top`, whose 0 reads "Default" (unset); a number
    typed under `bottom` becomes `bottom` when the box is left."""
    spin = QSpinBox(parent)
    spin.setObjectName(name)
    spin.setRange(0, top)
    spin.setSingleStep(256)
    spin.setSpecialValueText(DEFAULT)
    spin.setSuffix(" tokens")
    spin.editingFinished.connect(lambda: spin.setValue(_tokens(spin, bottom) or 0))
    return spin


def _tokens(spin: QSpinBox, bottom: int) -> int | None:
    """The count shown (None: Default), at least `bottom`."""
    return max(spin.value(), bottom) if spin.value() else None


def _set(spin: QDoubleSpinBox, value: float | None) -> None:
    spin.setValue(spin.minimum() if value is None else value)


def _value(spin: QDoubleSpinBox) -> float | None:
    return None if spin.value() < 0 else round(spin.value(), 2)
