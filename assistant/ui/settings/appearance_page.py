"""The Appearance page of the settings: the chat's text size (also in View > Text Size)."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QComboBox, QGroupBox, QVBoxLayout, QWidget

from assistant.settings import Settings
from assistant.ui.chat.reading import DEFAULT_SIZE, STATE_KEY, TEXT_SIZES, parse_size
from assistant.ui.settings.form import SettingsForm
from assistant.ui.settings.page import SettingsPage


class AppearancePage(SettingsPage):
    """How the chat looks."""

    title = "Appearance"
    fields = ("ui_state",)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        box = QGroupBox("Chat", self)
        form = SettingsForm(box)
        layout = QVBoxLayout(self)
        layout.addWidget(box)
        layout.addStretch(1)
        self.text_size = QComboBox(box)
        self.text_size.setObjectName("textSizeCombo")
        for size in TEXT_SIZES:
            label = f"{size} %" + (" (usual)" if size == DEFAULT_SIZE else "")
            self.text_size.addItem(label, size)
        form.add_row(
            "&Text size:",
            self.text_size,
            "The size of the messages and of the message box. Ctrl+= and Ctrl+- change it "
            "from the window, Ctrl+0 brings it back. Lines stay short enough to read "
            "comfortably, centred when the chat is wide.",
        )

    def load(self, settings: Settings) -> None:
        """Show the text size as last chosen."""
        size = parse_size(settings.ui_state.get(STATE_KEY))
        self.text_size.setCurrentIndex(TEXT_SIZES.index(size))

    def edit(self, settings: Settings) -> Settings:
        """`settings` with the text size chosen (as they are if it is the same)."""
        size = self.text_size.currentData()
        if size == parse_size(settings.ui_state.get(STATE_KEY)):
            return settings
        state = {**settings.ui_state, STATE_KEY: str(size)}
        return dataclasses.replace(settings, ui_state=state)
