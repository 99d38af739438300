"""Changes over a reply's budget and questions about pinned memories show in the chat as lines
the user answers; they come back with the conversation (switching, a restart) until answered."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from assistant.agent.change_budget import MAX_ADDS_PER_REPLY
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    configure(data_dir, fake_openai, embeddings=False)
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


def send(qtbot: QtBot, window: MainWindow, text: str, done: str) -> None:
    window.input.setPlainText(text)
    window.send_button.click()
    qtbot.waitUntil(lambda: done in window.chat.toPlainText(), timeout=10000)


def remembers(n: int) -> Reply:
    calls = [ToolCall("remember", json.dumps({"text": f"Fact number {i} zq{i}"})) for i in range(n)]
    return Reply.tool_calls(*calls)


def test_an_add_over_the_budget_is_offered_and_accepting_it_remembers_it(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(remembers(MAX_ADDS_PER_REPLY + 1), Reply.text("Saved what I could."))
    send(qtbot, window, "Remember these", "Saved what I could.")
    line = f"💡 Suggested: Remember “Fact number {MAX_ADDS_PER_REPLY} zq{MAX_ADDS_PER_REPLY}”"
    qtbot.waitUntil(lambda: line in window.chat.toPlainText(), timeout=10000)
    assert f"{line} Accept · Dismiss" in window.chat.toPlainText()
    memory = window.workspace.memory
    assert len(memory) == MAX_ADDS_PER_REPLY
    cid = window.conversations.current_id()
    assert cid is not None
    (pending,) = window.workspace.conversations.load(cid).pending
    window.chat.anchorClicked.emit(QUrl(f"pending-memory:accepted:{pending.id}"))
    qtbot.waitUntil(lambda: len(memory) == MAX_ADDS_PER_REPLY + 1, timeout=10000)
    qtbot.waitUntil(
        lambda: "↺ Remembered “Fact number 5" in window.chat.toPlainText(), timeout=10000
    )
    assert window.workspace.conversations.load(cid).pending == ()


def test_a_question_about_a_pinned_memory_comes_back_after_switching_and_no_keeps_it(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    pinned = window.workspace.memory.add("The user is allergic to penicillin", pinned=True)
    forget = Reply.tool_calls(ToolCall("forget", json.dumps({"memory_id": pinned.id})))
    fake_openai.enqueue(forget, Reply.text("It is pinned: shall I?"))
    send(qtbot, window, "Forget my allergy", "It is pinned: shall I?")
    question = (
        "? The assistant asks: Forget the pinned memory “The user is allergic to penicillin”?"
    )
    qtbot.waitUntil(lambda: question in window.chat.toPlainText(), timeout=10000)
    cid = window.conversations.current_id()
    assert cid is not None
    other = window.workspace.conversations.create().id
    qtbot.waitUntil(lambda: window.conversations.model.row_of(other) >= 0, timeout=5000)
    window.conversations.select(other)
    qtbot.waitUntil(lambda: question not in window.chat.toPlainText(), timeout=5000)
    window.conversations.select(cid)
    qtbot.waitUntil(lambda: "Forget my allergy" in window.chat.toPlainText(), timeout=5000)
    assert window.chat.toPlainText().count(f"{question} Yes · No") == 1
    (pending,) = window.workspace.conversations.load(cid).pending
    window.chat.anchorClicked.emit(QUrl(f"pending-memory:dismissed:{pending.id}"))
    qtbot.waitUntil(
        lambda: "Dismissed: Forget the pinned" in window.chat.toPlainText(), timeout=10000
    )
    assert window.workspace.memory.get(pinned.id).state == "active"  # type: ignore[union-attr]
    assert window.workspace.conversations.load(cid).pending == ()
