"""The model picker above the chat, the options of a conversation and of a model, and tool use
that goes off for a model that loops on tools, through the real window and the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.model_options import ModelOptions
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.chat.model_options_dialog import ModelOptionsDialog
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, new_saved_chat, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui


def picker(win: MainWindow) -> QComboBox:
    combo = win.findChild(QComboBox, "modelPicker")
    assert combo is not None
    return combo


def items(combo: QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def bodies(server: FakeOpenAI) -> list[dict[str, Any]]:
    return [r.body for r in server.requests_to("/v1/chat/completions")]


def open_chat(qtbot: QtBot, data_dir: Path, server: FakeOpenAI) -> tuple[MainWindow, str]:
    server.models = ("chat-model", "small-model", "embed-model")
    configure(data_dir, server, embeddings=False)
    win = shown_window(qtbot, data_dir)
    cid = new_saved_chat(qtbot, win)  # its file is made on the worker: the test reads it
    qtbot.waitUntil(lambda: "small-model" in items(picker(win)), timeout=10_000)
    return win, cid


def test_a_model_chosen_in_the_chat_answers_there_and_is_remembered(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win, cid = open_chat(qtbot, data_dir, fake_openai)
    combo = picker(win)
    assert items(combo) == ["chat-model (default)", "small-model"]  # no embedding model
    assert combo.isEnabled() and combo.currentIndex() == 0

    combo.setCurrentIndex(1)
    combo.activated.emit(1)  # as a user's choice does
    qtbot.waitUntil(lambda: ConversationStore(data_dir).load(cid).model == "small-model")
    qtbot.waitUntil(lambda: win.status.provider_label.full_text().endswith("· small-model"))
    send(qtbot, win, "Hello")
    wait_idle(qtbot, win)
    assert bodies(fake_openai)[-1]["model"] == "small-model"
    assert "small-model · " in win.chat.toPlainText()  # the reply's details name it
    win.close()

    again = shown_window(qtbot, data_dir)
    again.conversations.select(cid)
    qtbot.waitUntil(lambda: picker(again).currentText() == "small-model", timeout=10_000)
    again.close()


def test_options_for_the_conversation_and_for_the_model_are_sent(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    win, cid = open_chat(qtbot, data_dir, fake_openai)
    bar = win.chat_pane.model_bar

    def answer(values: dict[str, float]) -> Any:
        def exec_(dialog: ModelOptionsDialog) -> int:
            for name, value in values.items():
                getattr(dialog.fields, name).setValue(value)
            return 1

        return exec_

    monkeypatch.setattr(ModelOptionsDialog, "exec", answer({"top_p": 0.8, "max_tokens": 300}))
    bar.edit_model_options()
    saved, _ = Settings.load(settings_file(data_dir))
    assert saved.options_for("chat-model") == ModelOptions(top_p=0.8, max_tokens=300)

    monkeypatch.setattr(ModelOptionsDialog, "exec", answer({"temperature": 0.3}))
    bar.edit_conversation_options()
    qtbot.waitUntil(lambda: ConversationStore(data_dir).load(cid).options.temperature == 0.3)
    send(qtbot, win, "Hello")
    wait_idle(qtbot, win)
    body = bodies(fake_openai)[-1]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.3, 0.8, 300)
    win.close()


def test_auto_tool_use_goes_off_for_a_looping_model_and_comes_back_on(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win, _cid = open_chat(qtbot, data_dir, fake_openai)
    win.workspace.set_model_options("chat-model", ModelOptions(tools="auto"))
    clock = ToolCall("current_datetime", "{}")
    fake_openai.enqueue(
        Reply.tool_calls(clock),
        Reply.tool_calls(clock),
        Reply.tool_calls(clock),
        Reply.text("Late."),
    )
    send(qtbot, win, "What time is it?")
    wait_idle(qtbot, win)
    text = win.chat.toPlainText()
    assert "chat-model kept repeating the same tool call" in text
    assert "Turn tools back on" in text
    assert not win.workspace.settings.options_for("chat-model").uses_tools
    saved, _ = Settings.load(settings_file(data_dir))
    assert saved.options_for("chat-model").tools_learned_off  # remembered for that model

    send(qtbot, win, "And now?")
    wait_idle(qtbot, win)
    assert "tools" not in bodies(fake_openai)[-1]

    win.chat.anchorClicked.emit(QUrl("tools-on:chat-model"))  # the line's link
    assert win.workspace.settings.options_for("chat-model").uses_tools
    send(qtbot, win, "Once more")
    wait_idle(qtbot, win)
    assert "tools" in bodies(fake_openai)[-1]
    assert json.dumps(bodies(fake_openai)[-1]["tools"]).count("current_datetime") == 1
    win.close()


def test_the_picker_works_without_the_servers_list(qtbot: QtBot, data_dir: Path) -> None:
    with FakeOpenAI() as gone:
        configure(data_dir, gone, embeddings=False)  # the server is down from here on
    settings, _ = Settings.load(settings_file(data_dir))
    settings.model_options = {"other-model": ModelOptions(temperature=0.4).to_json()}
    settings.save(settings_file(data_dir))
    win = shown_window(qtbot, data_dir)
    win.new_conversation()
    combo = picker(win)
    qtbot.waitUntil(combo.isEnabled, timeout=10_000)
    assert items(combo) == ["chat-model (default)", "other-model"]  # the models with options
    win.close()
