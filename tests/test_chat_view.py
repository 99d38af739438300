"""How the chat view lays out a saved conversation's Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QTextBlock, QTextCursor, QTextFormat
from pytestqt.qtbot import QtBot

from assistant.memory.conversations import ConversationStore
from assistant.ui.chat_view import ChatView

pytestmark = pytest.mark.gui

REPLY = (
    "## Plan\n\nSome **bold** text.\n\n```python\nprint('hello')\n```\n\n"
    "| name | size |\n|---|---|\n| tea | 2 |"
)


def blocks(view: ChatView) -> list[QTextBlock]:
    found, block = [], view.document().begin()
    while block.isValid():
        found.append(block)
        block = block.next()
    return found


@pytest.fixture
def view(qtbot: QtBot, data_dir: Path) -> ChatView:
    store = ConversationStore(data_dir)
    cid = store.create("Markdown").id
    store.append(cid, "user", "Show me everything")
    store.append(cid, "assistant", REPLY)
    chat = ChatView(lambda _id: None, store.load)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    return chat


def test_headings_get_air_and_code_a_background(view: ChatView) -> None:
    by_text = {b.text(): b for b in blocks(view)}
    assert by_text["Plan"].blockFormat().topMargin() == 10
    assert by_text["Some bold text."].blockFormat().topMargin() != 10
    code = by_text["print('hello')"].blockFormat()
    assert code.hasProperty(QTextFormat.Property.BlockCodeFence)
    assert code.background().color() == view.palette().alternateBase().color()


def test_table_cells_share_one_top_line(view: ChatView) -> None:
    cells = [b for b in blocks(view) if b.text() in {"name", "size", "tea", "2"}]
    assert len(cells) == 4
    assert all(QTextCursor(b).currentTable() is not None for b in cells)
    assert [b.blockFormat().topMargin() for b in cells] == [0, 0, 0, 0]
    first = QTextCursor(cells[0])
    table = first.currentTable()
    assert table is not None
    assert table.cellAt(first).firstCursorPosition().block().text() == "name"  # no blank line
    weights = [b.begin().fragment().charFormat().fontWeight() for b in cells]
    assert weights[:2] == [QFont.Weight.Bold] * 2  # the header row
    assert all(w < QFont.Weight.Bold for w in weights[2:])


def test_a_cut_off_reply_is_marked_when_shown_again(qtbot: QtBot, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Story").id
    store.append(cid, "user", "Tell me a story")
    store.append(cid, "assistant", "Once upon a time there", cut_off=True)
    store.append(cid, "user", "And another")
    store.append(cid, "assistant", "The end.")
    chat = ChatView(lambda _id: None, store.load)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    text = chat.toPlainText()
    assert text.count("✂ Cut off") == 1
    assert text.index("Once upon a time there") < text.index("✂ Cut off") < text.index("The end.")


def test_a_reply_cut_off_while_streaming_is_marked(view: ChatView) -> None:
    view.add_user_message("More")
    view.append_delta("It went on and")
    view.finish_reply((), cut_off=True)
    assert (
        view.toPlainText()
        .rstrip()
        .endswith("✂ Cut off: the reply reached its length limit (Settings > Reply length).")
    )
