"""The Appearance page of the settings: the theme (also in View > Theme) and the chat's text
size (also in View > Text Size)."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QComboBox, QGroupBox, QVBoxLayout, QWidget

from assistant.settings import Settings
from assistant.ui.chat.reading import DEFAULT_SIZE, STATE_KEY, TEXT_SIZES, parse_size
from assistant.ui.settings.form import SettingsForm
from assistant.ui.settings.page import SettingsPage
from assistant.ui.theme import THEMES

THEME_KEY = "theme"  # in the settings' `ui_state`, as the window keeps it


class AppearancePage(SettingsPage):
    """How the app and the chat look."""

    title = "Appearance"
    fields = ("ui_state",)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        look = QGroupBox("Window", self)
        look_form = SettingsForm(look)
        self.theme = QComboBox(look)
        self.theme.setObjectName("themeCombo")
        for key, label in THEMES.items():
            self.theme.addItem(label + (" (as the desktop)" if key == "system" else ""), key)
        look_form.add_row(
            "T&heme:",
            self.theme,
            "Light or dark colours, or the desktop's own. View > Theme changes it too.",
        )
        box = QGroupBox("Chat", self)
        form = SettingsForm(box)
        layout = QVBoxLayout(self)
        layout.addWidget(look)
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
        """Show the theme and the text size as last chosen."""
        self.theme.setCurrentIndex(max(0, self.theme.findData(chosen_theme(settings))))
        size = parse_size(settings.ui_state.get(STATE_KEY))
        self.text_size.setCurrentIndex(TEXT_SIZES.index(size))

    def edit(self, settings: Settings) -> Settings:
        """`settings` with the theme and text size chosen (as they are if they are the same)."""
        size, name = self.text_size.currentData(), self.theme.currentData()
        if size == parse_size(settings.ui_state.get(STATE_KEY)) and name == chosen_theme(settings):
            return settings
        state = {**settings.ui_state, STATE_KEY: str(size), THEME_KEY: name}
        return dataclasses.replace(settings, ui_state=state)


def chosen_theme(settings: Settings) -> str:
    """The theme `settings` name ("system" if none, or one unknown)."""
    name = settings.ui_state.get(THEME_KEY, "system")
    return name if name in THEMES else "system"
