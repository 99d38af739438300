"""Editing a model's options (kept in the settings) or a conversation's own (over the model's),
from the chat's Options menu."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from assistant.model_options import ModelOptions
from assistant.ui.settings.form import SettingsForm
from assistant.ui.settings.model_options_form import ModelOptionsFields


class ModelOptionsDialog(QDialog):
    """The options of one model or one conversation; `options()` has the values chosen."""

    def __init__(
        self, title: str, options: ModelOptions, inherited: str, parent: QWidget | None = None
    ) -> None:
        """`inherited` says where "Default" values come from (the model's, the server's)."""
        super().__init__(parent)
        self.setObjectName("modelOptionsDialog")
        self.setWindowTitle(title)
        body = QWidget(self)
        self.fields = ModelOptionsFields(SettingsForm(body), body, inherited)
        self.fields.show(options)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(body)
        layout.addWidget(buttons)

    def options(self) -> ModelOptions:
        """The options as chosen."""
        return self.fields.options()
