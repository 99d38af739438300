"""Edit > Custom Instructions…: typed from the keyboard, limited, saved, shown in the sidebar."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QPlainTextEdit
from pytestqt.qtbot import QtBot

from assistant.instructions import INSTRUCTIONS_LIMIT, Instructions
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.settings.instructions import InstructionsDialog
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]

CTRL = Qt.KeyboardModifier.ControlModifier


def shown_dialog(qtbot: QtBot, instructions: Instructions) -> InstructionsDialog:
    dialog = InstructionsDialog(instructions)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    return dialog


def edits(dialog: InstructionsDialog) -> tuple[QPlainTextEdit, QPlainTextEdit]:
    about = dialog.findChild(QPlainTextEdit, "instructionsAbout")
    answer = dialog.findChild(QPlainTextEdit, "instructionsAnswer")
    assert about is not None and answer is not None
    return about, answer


def counter(dialog: InstructionsDialog, name: str) -> str:
    label = dialog.findChild(QLabel, f"{name}Counter")
    assert label is not None
    return label.text()


@pytest.mark.parametrize("key", [Qt.Key.Key_Return, Qt.Key.Key_Enter])
def test_typed_from_the_keyboard_and_saved_with_ctrl_enter(qtbot: QtBot, key: Qt.Key) -> None:
    dialog = shown_dialog(qtbot, Instructions(answer="Be brief."))
    about, answer = edits(dialog)
    about.setFocus()
    qtbot.keyClicks(about, "I am a nurse")
    qtbot.keyClick(about, Qt.Key.Key_Return)  # Enter is a new line
    qtbot.keyClicks(about, "in Lyon")
    assert dialog.isVisible()
    assert counter(dialog, "instructionsAbout") == f"20 / {INSTRUCTIONS_LIMIT:,}"
    qtbot.keyClick(about, Qt.Key.Key_Tab)  # Tab moves on, it types nothing
    qtbot.waitUntil(answer.hasFocus)
    assert about.toPlainText() == "I am a nurse\nin Lyon"
    qtbot.keyClick(answer, Qt.Key.Key_End, CTRL)
    qtbot.keyClicks(answer, " Metric units.")
    with qtbot.waitSignal(dialog.accepted):
        qtbot.keyClick(answer, key, CTRL)
    assert dialog.instructions() == Instructions("I am a nurse\nin Lyon", "Be brief. Metric units.")


def test_over_the_limit_is_kept_but_cannot_be_saved(qtbot: QtBot) -> None:
    dialog = shown_dialog(qtbot, Instructions())
    about, answer = edits(dialog)
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    about.setPlainText("x" * INSTRUCTIONS_LIMIT)
    assert save.isEnabled()
    assert counter(dialog, "instructionsAbout") == "1,500 / 1,500"
    answer.setPlainText("y" * (INSTRUCTIONS_LIMIT + 20))
    assert counter(dialog, "instructionsAnswer") == "1,520 / 1,500 — 20 over the limit"
    assert not save.isEnabled()
    answer.setFocus()
    qtbot.keyClick(answer, Qt.Key.Key_Return, CTRL)
    assert dialog.isVisible() and dialog.result() == 0
    assert len(answer.toPlainText()) == INSTRUCTIONS_LIMIT + 20  # nothing cut
    qtbot.keyClick(answer, Qt.Key.Key_Backspace)
    assert not save.isEnabled()
    answer.setPlainText("y" * INSTRUCTIONS_LIMIT)
    with qtbot.waitSignal(dialog.accepted):
        qtbot.keyClick(answer, Qt.Key.Key_Return, CTRL)


def test_escape_cancels(qtbot: QtBot) -> None:
    dialog = shown_dialog(qtbot, Instructions(about="Kept"))
    about, _ = edits(dialog)
    about.setFocus()
    qtbot.keyClicks(about, " and changed")
    with qtbot.waitSignal(dialog.rejected):
        qtbot.keyClick(about, Qt.Key.Key_Escape)


def test_the_window_saves_them_shows_them_and_sends_them(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    win: MainWindow = shown_window(qtbot, data_dir)
    view = win.sidebar.conversation_view
    assert "No custom instructions" in view.toPlainText()

    def type_and_save(dialog: InstructionsDialog) -> int:
        dialog.show()
        about, answer = edits(dialog)
        about.setPlainText("I keep bees.")
        answer.setPlainText("Answer in one sentence.")
        qtbot.keyClick(answer, Qt.Key.Key_Return, CTRL)
        return dialog.result()

    monkeypatch.setattr(InstructionsDialog, "exec", type_and_save)
    win.menu.instructions.trigger()
    saved, _ = Settings.load(settings_file(data_dir))
    assert saved.instructions() == Instructions("I keep bees.", "Answer in one sentence.")
    shown = view.toPlainText()
    assert (
        "INSTRUCTIONS" in shown and "I keep bees." in shown and "Answer in one sentence." in shown
    )
    assert "No custom instructions" not in shown

    fake_openai.enqueue(Reply.text("Bees like lavender."))
    win.input.setPlainText("What should I plant?")
    qtbot.keyClick(win.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(fake_openai.requests_to("/chat/completions")), timeout=10_000)
    qtbot.waitUntil(win.send_button.isEnabled, timeout=10_000)
    (request,) = fake_openai.requests_to("/chat/completions")
    system = request.body["messages"][0]["content"]
    assert '<data source="custom instructions">' in system and "I keep bees." in system
    win.close()
