"""Tool lines through the real window: what the line says comes from what the tool returned."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.ui.window.main_window import MainWindow
from tests.desktop import offline_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    win = offline_window(qtbot, data_dir, fake_openai)
    yield win
    win.close()


@pytest.mark.parametrize(
    ("query", "line"),
    [
        ("sister Ana", "▸ Searched memory for 'sister Ana' · 1 found"),
        ("submarine", "▸ Searched memory for 'submarine' · nothing found"),
    ],
)
def test_a_memory_search_line_counts_what_the_search_found(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI, query: str, line: str
) -> None:
    window.workspace.memory.save("The user's sister Ana lives in Porto", origin="user")
    window.workspace.memory.save("The user drinks green tea", origin="user")
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("recall", json.dumps({"query": query}))),
        Reply.text("Done."),
    )
    send(qtbot, window, "What do you know?")
    wait_idle(qtbot, window)
    assert line in window.chat.toPlainText()
