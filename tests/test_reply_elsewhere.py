"""A reply written in one conversation while another is shown: the other says where it is
written and why nothing is sent, the status bar follows the reply to its end, and deleting its
conversation stops it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from pytestqt.qtbot import QtBot

from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_drafts import two_conversations
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui


def answering_in_tea(qtbot: QtBot, root: Path, server: FakeOpenAI) -> tuple[MainWindow, str, str]:
    """A window whose reply in "Tea" has begun and goes silent; "Coffee" is shown."""
    configure(root, server)
    tea, coffee = two_conversations(root)
    win = shown_window(qtbot, root)
    win.conversations.select(tea)
    server.enqueue(Reply.stalled("Steep it for four minutes.", after=2))
    send(qtbot, win, "Milk first?")
    qtbot.waitUntil(lambda: "Steep" in win.chat.toPlainText(), timeout=10000)
    win.conversations.select(coffee)
    return win, tea, coffee


def test_another_conversation_says_where_the_reply_is_written(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win, _tea, _coffee = answering_in_tea(qtbot, data_dir, fake_openai)
    assert win.status.connection_label.text() == "Answering in “Tea”…"
    assert "“Tea”" in win.stop_button.toolTip() and "“Tea”" in win.send_button.toolTip()
    win.input.setPlainText("Espresso?")
    qtbot.keyClick(win.input, Qt.Key.Key_Return)
    assert "Assistant is answering in “Tea”" in win.statusBar().currentMessage()
    assert win.input.toPlainText() == "Espresso?"  # kept, to send once the reply ends
    win.stop_button.click()  # stops the reply in Tea, as it says
    wait_idle(qtbot, win)
    assert win.status.connection_label.text() == "Stopped"  # it stayed on Thinking…
    assert win.stop_button.toolTip() == "Stop the reply (Esc)" and not win.send_button.toolTip()
    win.close()


def test_a_reply_that_fails_in_another_conversation_is_said(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win, _tea, _coffee = answering_in_tea(qtbot, data_dir, fake_openai)
    fake_openai.stop()  # the server goes away mid-reply
    wait_idle(qtbot, win)
    qtbot.waitUntil(lambda: "The reply in “Tea” failed" in win.statusBar().currentMessage())
    assert win.status.connection_label.text() != "Thinking…"
    win.close()


def test_a_reply_that_ends_in_another_conversation_leaves_thinking(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    tea, coffee = two_conversations(data_dir)
    win = shown_window(qtbot, data_dir)
    win.conversations.select(tea)
    fake_openai.enqueue(Reply.text("Milk first."))
    send(qtbot, win, "Milk first?")
    win.conversations.select(coffee)  # at once: the reply ends while Coffee is shown
    wait_idle(qtbot, win)
    qtbot.waitUntil(lambda: win.status.connection_label.text() == "Connected")
    win.close()


def test_deleting_a_conversation_stops_its_reply(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    win, tea, coffee = answering_in_tea(qtbot, data_dir, fake_openai)
    pane = win.conversations
    monkeypatch.setattr(pane, "confirm_delete", lambda _titles: True)
    index = pane.view.model().index(pane.model.row_of(tea), 0)
    pane.view.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
    pane.delete_current()
    wait_idle(qtbot, win)  # the silent reply would have kept it busy until the server stopped
    qtbot.waitUntil(lambda: not win.workspace.conversations.exists(tea))
    assert win.session.conversation_id == coffee and win.send_button.isEnabled()
    win.close()
