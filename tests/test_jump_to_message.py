"""Opening a message (a Ctrl+K hit, a memory's "Show source") through the real window: the
message's start is in view with a margin above it, and its highlight goes at the next action."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.ui.chat.view import ChatView
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.gui


def top_of(chat: ChatView, message_id: str) -> float:
    """Where the message's header is drawn, from the viewport's top edge."""
    document = chat.document()
    header = document.findBlock(chat._doc.positions[message_id]).next()
    rect = document.documentLayout().blockBoundingRect(header)
    return rect.top() - chat.verticalScrollBar().value()


def long_conversation(store: ConversationStore, title: str, turns: int) -> tuple[str, list[str]]:
    cid = store.create(title).id
    ids = []
    for i in range(turns):
        ids.append(store.append(cid, "user", f"Question {i} about the trip").id)
        body = "\n\n".join(f"Paragraph {p} of answer {i}, " + "word " * 40 for p in range(4))
        ids.append(store.append(cid, "assistant", body).id)
    return cid, ids


@pytest.mark.parametrize("size", [(1366, 768), (1024, 700)])
def test_an_opened_message_starts_in_view_and_its_highlight_goes_at_the_next_message(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, size: tuple[int, int]
) -> None:
    store = ConversationStore(data_dir)
    cid, ids = long_conversation(store, "Long trip", 20)
    other, _ = long_conversation(store, "Other", 3)
    store.close()
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    win.resize(*size)
    chat = win.chat
    for target in (ids[10], ids[11], ids[4], ids[30], ids[0]):
        win.show_message(other, ids[0])  # from another conversation, as Ctrl+K does
        win.show_message(cid, target)
        top = top_of(chat, target)
        assert 0 <= top <= 40, (ids.index(target), top)  # its header, with a margin above
        assert chat.textCursor().hasSelection()
    last = ids[-1]
    win.show_message(cid, last)  # the last reply cannot come to the top: it shows all the same
    assert 0 <= top_of(chat, last) < chat.viewport().height()
    assert chat.verticalScrollBar().value() == chat.verticalScrollBar().maximum()

    win.show_message(cid, ids[10])
    assert "Question 5 about the trip" in chat.textCursor().selectedText()
    fake_openai.enqueue(Reply.text("Sure."))
    win.input.setPlainText("One more")
    qtbot.keyClick(win.input, Qt.Key.Key_Return)
    assert not chat.textCursor().hasSelection()  # the highlight went with the next message
    qtbot.waitUntil(lambda: "Sure." in chat.toPlainText(), timeout=10000)
    qtbot.waitUntil(win.send_button.isEnabled, timeout=10000)
    win.close()
