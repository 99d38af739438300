"""The Model options page of the settings: each model's options (temperature, top-p, reply and
context length, tool use), used by every conversation with that model unless it has its own."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QComboBox, QGroupBox, QVBoxLayout, QWidget

from assistant.model_options import ModelOptions
from assistant.settings import Settings
from assistant.ui.settings.form import SettingsForm
from assistant.ui.settings.model_options_form import ModelOptionsFields
from assistant.ui.settings.page import SettingsPage


class ModelsPage(SettingsPage):
    """A model chosen (or typed) and its options; every model's edits are kept until OK."""

    title = "Model options"
    fields = ("model_options",)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        box = QGroupBox("Options of a model", self)
        form = SettingsForm(box)
        layout = QVBoxLayout(self)
        layout.addWidget(box)
        layout.addStretch(1)
        self._edited: dict[str, ModelOptions] = {}  # by model, as shown in this dialog
        self._shown = ""
        self.model = QComboBox(box)
        self.model.setObjectName("optionsModelCombo")
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.currentTextChanged.connect(self._on_model_changed)
        form.add_row(
            "M&odel:",
            self.model,
            "The model whose options are shown: the chat model, those with options, or any "
            "other name typed here. A conversation can have its own (the chat's Options menu).",
        )
        self.options = ModelOptionsFields(form, box, "the server's own (and the reply length)")

    def load(self, settings: Settings) -> None:
        """List the chat model and those with options; show the chat model's."""
        self._edited = {m: settings.options_for(m) for m in settings.model_options}
        models = sorted({settings.chat_model, *settings.model_options}, key=str.lower)
        self.model.clear()
        self.model.addItems(models)
        self.model.setCurrentText(settings.chat_model)
        self._on_model_changed(settings.chat_model)

    def edit(self, settings: Settings) -> Settings:
        """`settings` with every model's options as edited."""
        self._keep_shown()
        edited = dataclasses.replace(settings)
        for model, options in self._edited.items():
            edited.set_options_for(model, options)
        return edited

    def _keep_shown(self) -> None:
        if self._shown:
            self._edited[self._shown] = self.options.options()

    def _on_model_changed(self, model: str) -> None:
        self._keep_shown()
        self._shown = model.strip()
        self.options.show(self._edited.get(self._shown, ModelOptions()))
