"""The sidebar's tabs keep one name at every width, the name help texts and the README use."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.ui.settings.instructions import INTRO
from tests.desktop import shown_window

pytestmark = pytest.mark.gui

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_chat_tab_is_called_what_the_help_calls_it(qtbot: QtBot, data_dir: Path) -> None:
    win = shown_window(qtbot, data_dir)
    tabs = win.sidebar.tabs
    names = set()
    for width in (1800, 1000, 700):  # the sidebar wide, middling, narrow
        win.resize(width, 700)
        win.splitter.setSizes([150, width - 450, 300 if width < 1000 else 600])
        qtbot.waitUntil(lambda: tabs.width() > 0)
        names.add(tabs.tabText(2))
    assert names == {"Chat"}
    assert "the sidebar's Chat tab" in INTRO
    readme = README.read_text(encoding="utf-8")
    assert "Chat tab" in readme and "Conversation tab" not in readme
    win.close()
