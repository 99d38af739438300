"""Unsent messages: kept per conversation while switching, and across a quit and a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from assistant.drafts import read_drafts, write_drafts
from assistant.memory import ConversationStore
from assistant.paths import drafts_file
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.gui


def two_conversations(root: Path) -> tuple[str, str]:
    store = ConversationStore(root)
    ids = []
    for title in ("Tea", "Coffee"):
        cid = store.create(title).id
        store.append(cid, "user", f"About {title}")
        store.append(cid, "assistant", f"{title} is nice.")
        ids.append(cid)
    return ids[0], ids[1]


def typed_in_both(
    qtbot: QtBot, root: Path, server: FakeOpenAI, tea_text: str, coffee_text: str
) -> tuple[MainWindow, str, str]:
    """A window on two conversations, `tea_text` typed in the first, then `coffee_text` in
    the second (shown)."""
    configure(root, server)
    tea, coffee = two_conversations(root)
    win = shown_window(qtbot, root)
    win.conversations.select(tea)
    type_in(qtbot, win, tea_text)
    win.conversations.select(coffee)
    assert win.input.toPlainText() == ""
    type_in(qtbot, win, coffee_text)
    return win, tea, coffee


def type_in(qtbot: QtBot, win: MainWindow, text: str) -> None:
    win.input.setFocus()
    qtbot.keyClicks(win.input, text)


def test_a_draft_stays_with_its_conversation_when_switching(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win, tea, coffee = typed_in_both(qtbot, data_dir, fake_openai, "and milk?", "black")
    win.conversations.select(tea)
    assert win.input.toPlainText() == "and milk?"
    # Typing goes on at the end of the draft.
    qtbot.keyClicks(win.input, " Or lemon?")
    assert win.input.toPlainText() == "and milk? Or lemon?"
    win.conversations.select(coffee)
    assert win.input.toPlainText() == "black"
    win.close()


def test_drafts_survive_a_restart_and_a_sent_message_leaves_none(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    win, tea, coffee = typed_in_both(
        qtbot, data_dir, fake_openai, "unsent about tea", "sent about coffee"
    )
    qtbot.keyClick(win.input, Qt.Key.Key_Return)
    qtbot.waitUntil(win.send_button.isEnabled, timeout=10000)
    win.close()
    saved = json.loads(drafts_file(data_dir).read_text(encoding="utf-8"))
    assert saved == {"version": 1, "drafts": {tea: "unsent about tea"}}

    again = shown_window(qtbot, data_dir)
    again.conversations.select(coffee)
    assert again.input.toPlainText() == ""
    again.conversations.select(tea)
    assert again.input.toPlainText() == "unsent about tea"
    again.close()


def test_a_message_begun_in_a_new_chat_is_there_after_a_restart(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    """An empty chat is not kept at quit, but what was typed in it is: the app opens a new
    chat with it. A temporary chat keeps no draft."""
    configure(data_dir, fake_openai)
    two_conversations(data_dir)
    win = shown_window(qtbot, data_dir)
    win.new_conversation()
    type_in(qtbot, win, "a new question")
    win.close()
    again = shown_window(qtbot, data_dir)
    assert again.session.conversation is not None
    assert not again.session.conversation.messages
    assert again.input.toPlainText() == "a new question"
    again.new_conversation(temporary=True)
    assert again.input.toPlainText() == ""
    type_in(qtbot, again, "secret")
    again.close()
    assert "secret" not in drafts_file(data_dir).read_text(encoding="utf-8")


def test_a_corrupt_drafts_file_is_set_aside_and_said(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    drafts_file(data_dir).write_text("{not json", encoding="utf-8")
    win = shown_window(qtbot, data_dir)
    assert win.start_problems is not None
    assert "unsent messages could not be read" in win.start_problems.label.text()
    assert not drafts_file(data_dir).exists()
    assert list(data_dir.glob("drafts.json.corrupt*")) or list(data_dir.glob("drafts*corrupt*"))
    win.close()


def test_the_file_keeps_texts_only_and_a_newer_one_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "drafts.json"
    write_drafts(path, {"a": "hello", "b": "  "})
    assert read_drafts(path) == ({"a": "hello"}, None)
    path.write_text(json.dumps({"version": 1, "drafts": {"a": 3}}), encoding="utf-8")
    drafts, warning = read_drafts(path)
    assert drafts == {} and warning is not None and "not an object of texts" in warning
    path.write_text(json.dumps({"version": 9, "drafts": {}}), encoding="utf-8")
    with pytest.raises(Exception, match="newer version"):
        read_drafts(path)
    assert path.exists()


def test_files_attached_and_not_sent_stay_with_their_conversation(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    """A chip followed the user to every chat (one shared row), so Enter sent the file into
    the wrong conversation, a project's too; it stays with the one it was attached in."""
    win, tea, coffee = typed_in_both(qtbot, data_dir, fake_openai, "see file", "")
    notes = data_dir / "notes.txt"
    notes.write_text("Tea notes")
    win.conversations.select(tea)
    win.composer.attachments.add([notes])
    win.conversations.select(coffee)
    assert win.composer.attachments.files() == []
    win.menu.new.trigger()
    assert win.composer.attachments.files() == []
    win.conversations.select(tea)
    assert win.composer.attachments.files() == [notes]
    assert win.input.toPlainText() == "see file"
    win.close()


def test_editing_a_message_puts_the_unsent_one_aside_and_back(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    """Edit replaced the box's unsent text and files, and Cancel edit emptied the box: the
    draft was lost, also from the drafts file. It comes back on Cancel and after sending."""
    win, tea, _coffee = typed_in_both(qtbot, data_dir, fake_openai, "", "")
    win.conversations.select(tea)
    notes = data_dir / "notes.txt"
    notes.write_text("Tea notes")
    type_in(qtbot, win, "my important unsent draft")
    win.composer.attachments.add([notes])
    conversation = win.session.conversation
    assert conversation is not None
    asked = conversation.branch()[0]
    win.chat.edit_requested.emit(asked.id, asked.content)
    assert win.composer.editing == asked.id and win.composer.attachments.files() == []
    win.composer.cancel_edit_button.click()
    assert win.input.toPlainText() == "my important unsent draft"
    assert win.composer.attachments.files() == [notes]
    win.chat.edit_requested.emit(asked.id, asked.content)
    win.input.setPlainText("About green tea")
    win.send_button.click()
    qtbot.waitUntil(win.send_button.isEnabled, timeout=10000)
    assert win.input.toPlainText() == "my important unsent draft"
    assert win.composer.attachments.files() == [notes]
    win.close()
    assert read_drafts(drafts_file(data_dir))[0][tea] == "my important unsent draft"
