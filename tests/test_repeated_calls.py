"""A tool call a small model makes again and again in one turn shows as one line with a count."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from assistant.ui.chat.document import TOOL_MARK
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_chat_session import anchors
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui


def tool_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(TOOL_MARK)]


def test_the_same_call_made_three_times_is_one_line_with_its_count(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    win = shown_window(qtbot, data_dir)
    cid = win.new_conversation()
    clock = ToolCall("current_datetime", "{}")
    calculator = ToolCall("calculator", '{"expression": "6*7"}')
    fake_openai.enqueue(
        Reply.tool_calls(clock),
        Reply.tool_calls(ToolCall("current_datetime", "{ }"), calculator),  # the same call
        Reply.tool_calls(clock),
        Reply.text("It is late, and 6*7 is 42."),
    )
    send(qtbot, win, "What time is it, and what is 6*7?")
    wait_idle(qtbot, win)
    lines = tool_lines(win.chat.toPlainText())
    assert len(lines) == 2, lines
    assert lines[0].endswith("(3 times)")
    assert "(" not in lines[1]  # the calculator ran once
    win.conversations.select(None)
    win.conversations.select(cid)  # drawn again from the saved conversation
    qtbot.waitUntil(lambda: "6*7 is 42" in win.chat.toPlainText())
    assert tool_lines(win.chat.toPlainText()) == lines
    first = next(h for h in anchors(win.chat) if h.startswith("tool:"))
    win.chat.anchorClicked.emit(QUrl(first))  # expanded, and still counted
    assert "▾ Checked the date and time (3 times)" in win.chat.toPlainText()
