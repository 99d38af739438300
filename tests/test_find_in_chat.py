"""Find (Ctrl+F) searches the words of the messages, not the speakers' names, the actions or
the lines around them."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QTextCursor
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.ui.chat.find_bar import FindBar
from assistant.ui.chat.view import ChatView

pytestmark = pytest.mark.gui

CALL = {"id": "c1", "type": "function", "function": {"name": "recall", "arguments": '{"q": "you"}'}}


@pytest.fixture
def found(qtbot: QtBot, data_dir: Path) -> tuple[FindBar, ChatView]:
    store = ConversationStore(data_dir)
    cid = store.create("Find").id
    store.append(cid, "user", "are you there\nsecond line, you again")
    store.append(cid, "assistant", "", tool_calls=[CALL])
    store.append(cid, "tool", "nothing for you", tool_call_id="c1")
    store.append(cid, "assistant", "Yes, here for You.\n\n```python\nyou()\n```")
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    assert chat.toPlainText().count("You") >= 1 and "Copy" in chat.toPlainText()
    bar = FindBar(chat, before_find=chat.load_all)
    qtbot.addWidget(bar)
    return bar, chat


def test_find_counts_only_the_words_of_messages(found: tuple[FindBar, ChatView]) -> None:
    bar, view = found
    view.moveCursor(QTextCursor.MoveOperation.Start)
    bar.field.setText("you")
    assert bar.status.text() == "1 of 4"
    seen = []
    for _ in range(4):
        cursor = view.textCursor()
        seen.append(cursor.block().text()[cursor.positionInBlock() - 3 :][:12])
        bar.find_next()
    assert seen == ["you there", "you again", "You.", "you()"]
    assert bar.status.text() == "1 of 4"  # wrapped around
    bar.find_next(backward=True)
    assert bar.status.text() == "4 of 4"
    assert view.textCursor().block().text() == "you()"


@pytest.mark.parametrize("words", ["Assistant", "Copy", "Edit", "Regenerate", "recall"])
def test_labels_actions_and_tool_lines_are_not_found(
    found: tuple[FindBar, ChatView], words: str
) -> None:
    bar, _ = found
    bar.field.setText(words)
    assert bar.status.text() == "Not found"
