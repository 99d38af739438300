"""The window's layout as the settings keep it: the theme, the window's geometry, the splitter's
sizes and which side panes are shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray

from assistant.paths import settings_file

if TYPE_CHECKING:
    from assistant.ui.window.main_window import MainWindow


def restore_layout(window: MainWindow, state: dict[str, str]) -> None:
    """Lay the window out as `state` (the settings' `ui_state`) says, kept on the screen."""
    window.set_theme(state.get("theme", "system"), starting=True)  # "system": its outlines too
    if "geometry" in state:
        window.restoreGeometry(QByteArray.fromBase64(state["geometry"].encode()))
        window.keep_on_screen()
    if "splitter" in state:
        window.splitter.restoreState(QByteArray.fromBase64(state["splitter"].encode()))
    window.side_panes.restore(state)


def save_layout(window: MainWindow) -> None:
    """Keep the window's layout in its workspace's settings, and save them."""
    state = window.workspace.settings.ui_state
    state["geometry"] = bytes(window.saveGeometry().toBase64().data()).decode()
    state["splitter"] = bytes(window.splitter.saveState().toBase64().data()).decode()
    window.side_panes.save(state)
    window.workspace.settings.save(settings_file(window.workspace.root))
