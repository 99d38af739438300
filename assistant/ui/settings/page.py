"""A page of the settings dialog: it shows some settings and writes them back on OK."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from assistant.settings import Settings


class SettingsPage(QWidget):
    """One tab of the settings dialog; a page overrides what it needs.

    The dialog calls `load` once, `edit` for the values shown (a copy of the settings), and on
    OK `problem` (a message that keeps the dialog open), then `save` (files and secrets of its
    own, before the settings are saved); the settings it edits are named in `fields`.
    """

    title = ""
    fields: tuple[str, ...] = ()  # the `Settings` fields this page edits
    resized = Signal()  # a note appeared or went: the dialog may need to grow
    usable_changed = Signal(bool)  # whether OK may be pressed, as far as this page knows

    def load(self, settings: Settings) -> None:
        """Show `settings`."""

    def edit(self, settings: Settings) -> Settings:
        """`settings` with this page's values (a copy; the default: as they are)."""
        return settings

    def problem(self) -> str | None:
        """What must be fixed before OK, or None."""
        return None

    def save(self, warn: Callable[[str], None]) -> None:
        """Save what this page keeps outside the settings (before they are saved); `warn`
        tells the user of a problem."""
