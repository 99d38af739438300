"""The chat's reading width and text size, through the window: lines stay at a comfortable
length (centred when the panes are hidden), the text size follows the View menu's keys and the
settings, and is remembered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.paths import settings_file
from assistant.ui.chat.reading import reading_width
from assistant.ui.settings.dialog import SettingsDialog
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.gui

LONG = " ".join(["A sentence that goes on and on about tea and the ways to brew it."] * 12)


def window_on_a_long_reply(qtbot: QtBot, root: Path, server: FakeOpenAI) -> MainWindow:
    configure(root, server)
    store = ConversationStore(root)
    cid = store.create("Tea").id
    store.append(cid, "user", "Tell me about tea")
    store.append(cid, "assistant", LONG)
    win = shown_window(qtbot, root)
    win.resize(1360, 740)
    win.activateWindow()
    win.input.setFocus()
    qtbot.waitUntil(win.input.hasFocus)
    return win


def text_block_rect(win: MainWindow) -> tuple[float, float]:
    """The left edge and width of the long reply's paragraph as laid out."""
    document = win.chat.document()
    block = document.begin()
    while block.isValid() and not block.text().startswith("A sentence"):
        block = block.next()
    assert block.isValid()
    rect = document.documentLayout().blockBoundingRect(block)
    return rect.left(), rect.width()


def test_lines_keep_a_reading_width_centred_when_the_panes_are_hidden(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win = window_on_a_long_reply(qtbot, data_dir, fake_openai)
    win.menu.show_conversations.setChecked(False)
    win.menu.show_memory.setChecked(False)
    qtbot.waitUntil(lambda: win.chat.viewport().width() > 1200)
    limit = reading_width(win.chat.font())
    assert 400 < limit < 1000
    qtbot.waitUntil(lambda: text_block_rect(win)[1] <= limit + 1)
    left, width = text_block_rect(win)
    right = win.chat.viewport().width() - (left + width)
    assert abs(left - right) <= 24  # centred (the scroll bar aside)
    # With both panes the chat is narrower: the same measure, less margin.
    win.menu.show_conversations.setChecked(True)
    win.menu.show_memory.setChecked(True)
    qtbot.waitUntil(lambda: text_block_rect(win)[0] < left - 200)
    assert text_block_rect(win)[1] <= limit + 1
    # A chat narrower than the measure: the document's own margin only.
    win.resize(660, 600)
    qtbot.waitUntil(lambda: win.chat.viewport().width() < limit)
    qtbot.waitUntil(lambda: text_block_rect(win)[0] == 16)
    win.close()


def test_the_text_size_keys_change_the_chat_and_it_is_remembered(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win = window_on_a_long_reply(qtbot, data_dir, fake_openai)
    usual = win.chat.font().pointSizeF()
    height = win.chat.document().size().height()
    qtbot.keyClick(win.input, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(win.input, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert win.chat.font().pointSizeF() == pytest.approx(usual * 1.2)
    assert win.input.font().pointSizeF() == pytest.approx(usual * 1.2)
    assert win.chat.document().size().height() > height * 1.1  # drawn again, larger
    assert "Tell me about tea" in win.chat.toPlainText()
    qtbot.keyClick(win.input, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert win.chat.font().pointSizeF() == pytest.approx(usual * 1.1)
    win.close()
    assert json.loads(settings_file(data_dir).read_text())["ui_state"]["text_size"] == "110"

    again = shown_window(qtbot, data_dir)
    assert again.chat.font().pointSizeF() == pytest.approx(usual * 1.1)
    again.activateWindow()
    again.input.setFocus()
    qtbot.waitUntil(again.input.hasFocus)
    qtbot.keyClick(again.input, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert again.chat.font().pointSizeF() == pytest.approx(usual)
    again.close()


def test_the_text_size_can_be_chosen_in_settings(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    win = window_on_a_long_reply(qtbot, data_dir, fake_openai)
    usual = QFont(win.chat.font()).pointSizeF()

    def choose_150(dialog: SettingsDialog) -> int:
        combo = dialog.findChild(QComboBox, "textSizeCombo")
        combo.setCurrentIndex(combo.findData(150))
        dialog.accept()
        return 1

    monkeypatch.setattr(SettingsDialog, "exec", choose_150)
    win.open_settings()
    assert win.chat.font().pointSizeF() == pytest.approx(usual * 1.5)
    assert win.workspace.settings.ui_state["text_size"] == "150"
    win.close()
