"""Changes the agent makes to memory show in the chat as lines whose Undo works."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from assistant.memory import MemoryItem
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, offline_window, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    win = offline_window(qtbot, data_dir, fake_openai)
    yield win
    win.close()


def forgotten_by_the_agent(
    qtbot: QtBot, window: MainWindow, server: FakeOpenAI, text: str
) -> MemoryItem:
    """A memory with `text` that the agent forgets in a reply ("Forgotten.") to the user."""
    item = window.workspace.memory.add(text)
    server.enqueue(
        Reply.tool_calls(ToolCall("forget", json.dumps({"memory_id": item.id}))),
        Reply.text("Forgotten."),
    )
    window.input.setPlainText(f"Forget that: {text}")
    window.send_button.click()
    qtbot.waitUntil(lambda: "Forgotten." in window.chat.toPlainText(), timeout=10000)
    return item


def test_a_forget_by_the_agent_shows_a_line_whose_undo_restores_it(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    item = forgotten_by_the_agent(qtbot, window, fake_openai, "The user plays the cello")
    assert "↺ Forgot “The user plays the cello” · Undo" in window.chat.toPlainText()
    assert window.workspace.memory.get(item.id).state == "forgotten"  # type: ignore[union-attr]
    window.chat.anchorClicked.emit(QUrl("undo-memory:0"))
    qtbot.waitUntil(
        lambda: window.workspace.memory.get(item.id).state == "active",  # type: ignore[union-attr]
        timeout=10000,
    )
    qtbot.waitUntil(lambda: "Undone: Forgot" in window.chat.toPlainText(), timeout=10000)


def test_the_lines_come_back_when_the_conversation_is_shown_again(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    forgotten_by_the_agent(qtbot, window, fake_openai, "The user keeps bees")
    cid = window.conversations.current_id()
    other = window.workspace.conversations.create().id
    qtbot.waitUntil(lambda: window.conversations.model.row_of(other) >= 0)
    window.conversations.select(other)
    qtbot.waitUntil(lambda: "Forgot" not in window.chat.toPlainText())
    window.conversations.select(cid)
    qtbot.waitUntil(lambda: "Forget that: The user keeps bees" in window.chat.toPlainText())
    assert window.chat.toPlainText().count("↺ Forgot “The user keeps bees” · Undo") == 1


def test_a_supersede_by_the_curator_shows_a_line_whose_undo_brings_the_old_fact_back(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False, auto_memories=True)
    win = shown_window(qtbot, data_dir)
    memory = win.workspace.memory
    porto = memory.add("The user lives in Porto")
    extraction = {"memories": [{"kind": "fact", "text": "The user lives in Lisbon"}]}
    decision = {"candidate": 0, "action": "SUPERSEDE", "target": porto.id, "reason": "moved"}
    fake_openai.enqueue(
        Reply.text("Welcome to Lisbon!"),
        json.dumps(extraction),
        json.dumps({"decisions": [decision]}),
        "Home: Lisbon.",
    )
    win.input.setPlainText("I moved to Lisbon")
    win.send_button.click()
    line = "↺ Replaced “The user lives in Porto” with “The user lives in Lisbon” · Undo"
    qtbot.waitUntil(lambda: line in win.chat.toPlainText(), timeout=10000)
    (lisbon,) = memory.all()
    assert lisbon.supersedes == (porto.id,)
    win.chat.anchorClicked.emit(QUrl("undo-memory:0"))
    qtbot.waitUntil(lambda: memory.get(porto.id).is_current, timeout=10000)  # type: ignore[union-attr]
    assert [i.id for i in memory.all()] == [porto.id]
    qtbot.waitUntil(lambda: "Undone: Replaced" in win.chat.toPlainText(), timeout=10000)
    win.close()


def test_an_old_undo_never_throws_away_a_later_change_and_an_undo_can_be_redone(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """The agent remembers; the user pins the memory; the old Undo line must not forget it."""
    memory = window.workspace.memory
    remember = {"text": "The user's sister is Ana", "kind": "fact"}
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("remember", json.dumps(remember))), Reply.text("Noted.")
    )
    window.input.setPlainText("My sister is Ana")
    window.send_button.click()
    qtbot.waitUntil(lambda: "Noted." in window.chat.toPlainText(), timeout=10000)
    (item,) = memory.all()
    memory.pin(item.id)  # in the sidebar, after the reply
    window.chat.anchorClicked.emit(QUrl("undo-memory:0"))
    qtbot.waitUntil(lambda: "Could not undo" in window.chat.toPlainText(), timeout=10000)
    assert "it was pinned" in window.chat.toPlainText()
    current = memory.get(item.id)
    assert current is not None and current.state == "active" and current.pinned
    memory.pin(item.id, False)  # as the reply left it: now Undo may forget it, and Redo
    window.chat.anchorClicked.emit(QUrl("undo-memory:0"))
    qtbot.waitUntil(lambda: "Undone: Remembered" in window.chat.toPlainText(), timeout=10000)
    assert memory.get(item.id).state == "forgotten"  # type: ignore[union-attr]
    assert "· Redo" in window.chat.toPlainText()
    window.chat.anchorClicked.emit(QUrl("redo-memory:0"))
    qtbot.waitUntil(
        lambda: memory.get(item.id).state == "active",  # type: ignore[union-attr]
        timeout=10000,
    )


def test_each_line_stays_under_the_turn_that_made_the_change(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """Two turns that each forget a memory: each Undo line sits in its own turn, above the
    next question, live and when the conversation is drawn again (they piled up at the end)."""
    forgotten_by_the_agent(qtbot, window, fake_openai, "The user keeps bees")
    qtbot.waitUntil(window.send_button.isEnabled, timeout=10000)
    forgotten_by_the_agent(qtbot, window, fake_openai, "The user rides a unicycle")
    qtbot.waitUntil(window.send_button.isEnabled, timeout=10000)

    def in_order() -> None:
        text = window.chat.toPlainText()
        bees = text.index("↺ Forgot “The user keeps bees”")
        second_question = text.index("Forget that: The user rides a unicycle")
        unicycle = text.index("↺ Forgot “The user rides a unicycle”")
        assert text.index("Forget that: The user keeps bees") < bees < second_question
        assert second_question < unicycle
        assert text.count("↺ Forgot") == 2

    in_order()
    cid = window.session.conversation_id
    window.new_conversation()
    window.conversations.select(cid)
    qtbot.waitUntil(lambda: "Forgot" in window.chat.toPlainText())
    in_order()


def test_a_line_shows_only_with_the_branch_of_its_turn(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """Editing an earlier message starts a branch without the turn that changed memory: its
    line stays with its own branch (it moved above the first message, then under the new
    reply, offering an Undo there), and comes back with that branch."""
    fake_openai.enqueue(Reply.text("About apples."))
    window.input.setPlainText("My question about apples")
    window.send_button.click()
    qtbot.waitUntil(window.send_button.isEnabled, timeout=10000)
    forgotten_by_the_agent(qtbot, window, fake_openai, "The user keeps bees")
    qtbot.waitUntil(window.send_button.isEnabled, timeout=10000)
    line = "↺ Forgot “The user keeps bees” · Undo"
    assert line in window.chat.toPlainText()
    conversation = window.session.conversation
    assert conversation is not None
    first = conversation.branch()[0]
    fake_openai.enqueue(Reply.text("About pears."))
    assert window.session.edit(first.id, "My question about pears")
    qtbot.waitUntil(window.send_button.isEnabled, timeout=10000)
    assert "About pears." in window.chat.toPlainText()
    assert line not in window.chat.toPlainText()
    window.session.choose_branch(first.id)  # back to the first version, with its turns
    qtbot.waitUntil(lambda: "Forget that:" in window.chat.toPlainText(), timeout=10000)
    text = window.chat.toPlainText()
    assert line in text and text.index("Forget that:") < text.index(line)
