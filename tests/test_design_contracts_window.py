"""The window's contracts of the design page: widgets and actions found by their object names,
and the chat pane read as plain text, against the real worker and the fake OpenAI server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from assistant.ui.window.main_window import MainWindow
from tests.desktop import shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_chat_view import click
from tests.test_main_window import OBJECT_NAMES, send, wait_idle

pytestmark = pytest.mark.gui

ACTION_NAMES = ["actionExport", "actionImport", "actionSettings"]


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    """A window whose settings file was written by hand, as a test or a user would."""
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = {
        "version": 1,
        "provider": "custom",
        "base_url": fake_openai.base_url,
        "chat_model": "contract-model",
        "embedding_model": "",
        "auto_memories": False,
    }
    (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


def test_each_contract_name_is_one_widget_or_action(window: MainWindow) -> None:
    for name in OBJECT_NAMES:
        assert len(window.findChildren(QWidget, name)) == 1, name
    for name in ACTION_NAMES:
        [action] = window.findChildren(QAction, name)
        assert action.isEnabled(), name


def test_the_chat_pane_reads_as_the_contract_says(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """The chat model is the settings file's `chat_model`; a tool-call line starts with ▸; an
    error line starts with ⚠ and its Retry action follows it."""
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("calculator", json.dumps({"expression": "6*7"}))),
        Reply.text("It is 42."),
        Reply.error(400),
        Reply.text("Here now."),
    )
    send(qtbot, window, "What is 6 times 7?")
    wait_idle(qtbot, window)
    assert {r.body["model"] for r in fake_openai.requests_to("/chat/completions")} == {
        "contract-model"
    }
    lines = window.chat.toPlainText().splitlines()
    [tool_line] = [line for line in lines if "6*7" in line]
    assert tool_line.startswith("▸ "), lines
    send(qtbot, window, "And now?")
    wait_idle(qtbot, window)
    lines = window.chat.toPlainText().splitlines()
    [error] = [line for line in lines if "⚠" in line]
    assert error.startswith("⚠ ")
    assert re.search(r"\bRetry\s*$", error), error
    click(window.chat, "retry:")  # the Retry of the error line: the message is answered
    wait_idle(qtbot, window)
    assert "Here now." in window.chat.toPlainText()
    assert "⚠" not in window.chat.toPlainText()


def test_the_window_is_driven_by_its_contract_names_alone(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    def find(name: str) -> Any:
        widget = window.findChild(QWidget, name)
        assert widget is not None, name
        return widget

    fake_openai.enqueue(
        Reply.tool_calls(
            ToolCall("remember", json.dumps({"text": "The user's bike is a red Gazelle"})),
            ToolCall("update_working_memory", json.dumps({"task": "Plan a bike trip"})),
        ),
        Reply.text("Noted, a red Gazelle."),
    )
    find("chatInput").setPlainText("My bike is a red Gazelle")
    qtbot.mouseClick(find("sendButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Noted, a red Gazelle." in find("chatView").toPlainText())
    qtbot.waitUntil(lambda: find("sendButton").isEnabled() and not find("stopButton").isEnabled())
    qtbot.waitUntil(lambda: "Plan a bike trip" in find("workingMemoryView").toPlainText())
    memories = find("memoryList").model()
    qtbot.waitUntil(lambda: memories.rowCount() == 1)
    find("memorySearch").setText("Gazelle")
    qtbot.waitUntil(lambda: memories.rowCount() == 1)
    [item] = window.workspace.memory.all()
    assert item.text == "The user's bike is a red Gazelle"
    find("memorySearch").setText("violin")
    qtbot.waitUntil(lambda: memories.rowCount() == 0)
    first = window.conversations.current_id()
    assert find("conversationList").model().rowCount() >= 1
    qtbot.mouseClick(find("newConversationButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Noted" not in find("chatView").toPlainText())
    assert window.conversations.current_id() not in (None, first)
