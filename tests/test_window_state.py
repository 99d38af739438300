"""What the window shows around the conversations: the one open after a restart, the one open
after archiving it, and the connection status after the settings change."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.ui.settings.dialog import SettingsDialog
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_drafts import two_conversations
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui


def test_the_conversation_shown_at_quit_is_shown_after_a_restart(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    tea, coffee = two_conversations(data_dir)
    win = shown_window(qtbot, data_dir)
    assert win.conversations.first_id() == coffee  # the newest is listed first
    win.conversations.select(tea)
    win.close()
    again = shown_window(qtbot, data_dir)
    assert again.session.conversation_id == tea
    again.close()


def test_archiving_the_open_conversation_shows_the_next_one(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    tea, coffee = two_conversations(data_dir)
    win = shown_window(qtbot, data_dir)
    win.conversations.select(coffee)
    win.conversations.toggle_archived()
    assert win.session.conversation_id == tea  # not the archived one, out of every list
    assert win.conversations.current_id() == tea
    qtbot.waitUntil(lambda: win.workspace.conversations.load(coffee).archived)
    win.close()


def test_changed_settings_leave_no_stale_connection_problem(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    fake_openai.enqueue(Reply.error(400, "No such model"))
    send(qtbot, win, "Hello?")
    wait_idle(qtbot, win)
    assert win.status.connection_label.text() == "Request refused (HTTP 400)"

    def choose_another_model(dialog: SettingsDialog) -> int:
        dialog._workspace.settings.chat_model = "another-model"
        dialog._workspace.save_settings()
        return 1

    monkeypatch.setattr(SettingsDialog, "exec", choose_another_model)
    win.open_settings()
    assert win.status.connection_label.text() == "Ready"
    assert win.status.connection_label.toolTip() == ""
    win.close()
