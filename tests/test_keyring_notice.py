"""Without a working keyring the window says once, over the chat, that an API key cannot be
saved and what to do; "Got it" is remembered in the settings (the key never is), closing it
with ✕ hides it for this run only, and the log no longer warns at every start."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest
from PySide6.QtWidgets import QToolButton
from pytestqt.qtbot import QtBot

from assistant.paths import settings_file
from assistant.ui.window.keyring_notice import ACKNOWLEDGED, STATE_KEY
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


def notice_shown(win: MainWindow) -> bool:
    return win.keyring_notice is not None and win.keyring_notice.isVisible()


def test_a_missing_keyring_is_said_once_until_acknowledged(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    keyring.set_keyring(keyring.backends.fail.Keyring())  # restored by memory_keyring
    configure(data_dir, fake_openai)
    caplog.set_level(logging.INFO)

    first = shown_window(qtbot, data_dir)
    assert notice_shown(first) and first.keyring_notice is not None
    text = first.keyring_notice.label.text()
    assert "Your API key can&#x27;t be saved on this computer" in text or (
        "Your API key can't be saved on this computer" in text
    )
    assert "OPENAI_API_KEY" in text and "never written to a file" in text
    close = first.keyring_notice.findChild(QToolButton, "memoryNoticeClose")
    assert close is not None
    close.click()  # for this run only
    assert not notice_shown(first)
    first.close()
    assert json.loads(settings_file(data_dir).read_text())["ui_state"].get(STATE_KEY) is None

    second = shown_window(qtbot, data_dir)
    assert notice_shown(second) and second.keyring_notice is not None
    acknowledge = second.keyring_notice.findChild(QToolButton, "keyringNoticeAcknowledge")
    assert acknowledge is not None and acknowledge.text() == "Got it"
    acknowledge.click()
    assert not notice_shown(second)
    saved = json.loads(settings_file(data_dir).read_text())
    assert saved["ui_state"][STATE_KEY] == ACKNOWLEDGED  # at once, not only when closing
    second.close()

    third = shown_window(qtbot, data_dir)
    assert third.keyring_notice is None
    third.close()
    warned = [r for r in caplog.records if r.levelno >= logging.WARNING and "keyring" in r.message]
    assert warned == []  # the window says it; the log does not warn at each start


def test_no_notice_with_a_working_keyring_or_a_key_in_the_environment(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)  # the in-memory keyring of the tests works
    assert win.keyring_notice is None
    win.close()
    keyring.set_keyring(keyring.backends.fail.Keyring())  # restored by memory_keyring
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")  # needs no keyring
    win = shown_window(qtbot, data_dir)
    assert win.keyring_notice is None
    win.close()


def test_a_notice_shown_takes_the_colours_of_a_new_theme(qtbot: QtBot) -> None:
    """The keyring notice, shown at start in the light theme, stayed light after a switch to
    dark (its colours were chosen only when it was shown)."""
    from PySide6.QtWidgets import QApplication

    from assistant.ui import theme
    from assistant.ui.notice_bar import NoticeBar

    theme.apply("light")
    try:
        notice = NoticeBar()
        qtbot.addWidget(notice)
        notice.show_notice("Your API key can't be saved", timeout_ms=0)
        light = notice.styleSheet()
        theme.apply("dark")
        QApplication.processEvents()
        assert notice.styleSheet() != light
    finally:
        theme.apply("system")
