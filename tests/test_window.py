"""The main window opens and carries the widget object names of the contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from assistant.ui.main_window import MainWindow

pytestmark = pytest.mark.gui

OBJECT_NAMES = [
    "conversationList",
    "newConversationButton",
    "chatView",
    "chatInput",
    "sendButton",
    "stopButton",
    "memorySidebar",
    "memorySearch",
    "memoryList",
    "workingMemoryView",
]


def test_window_has_contract_widgets(qtbot: QtBot, data_dir: Path) -> None:
    window = MainWindow(data_dir)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    for name in OBJECT_NAMES:
        assert window.findChild(QWidget, name) is not None, name
