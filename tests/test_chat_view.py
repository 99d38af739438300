"""The chat view: Markdown (saved and streaming), code, actions, markers, branches, tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt, QUrl
from PySide6.QtGui import (
    QFont,
    QGuiApplication,
    QTextBlock,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QWheelEvent,
)
from PySide6.QtWidgets import QApplication, QLabel, QScrollBar
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.ui import theme
from assistant.ui.chat.find_bar import FindBar
from assistant.ui.chat.markdown import MarkdownRenderer, plain_text
from assistant.ui.chat.stream import settled_end
from assistant.ui.chat.tool_summary import summarize
from assistant.ui.chat.view import ChatView
from assistant.ui.settings.memory_page import MemoryPage
from assistant.ui.settings.models_page import ModelsPage

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


def test_copy_as_text_keeps_list_numbers_bullets_and_line_breaks(qapp: object) -> None:
    markdown = "Steps:\n\n1. one\n2. **two**\n   - a\n   - b\n3. three\n\n- x\n\nline  \nbreak"
    expected = "Steps:\n1. one\n2. two\n  • a\n  • b\n3. three\n• x\nline\nbreak"
    assert plain_text(markdown) == expected


def test_a_blockquote_is_set_apart_and_readable(qapp: object) -> None:
    document = QTextDocument()
    palette = theme.palette_for("dark")
    renderer = MarkdownRenderer(document, lambda: palette)
    renderer.insert(QTextCursor(document), "Said:\n\n> to be or not\n\nafter")
    blocks = {b.text(): b for b in iter_blocks(document)}
    quote, plain = blocks["to be or not"], blocks["after"]
    assert quote.blockFormat().background().style() != Qt.BrushStyle.NoBrush
    assert plain.blockFormat().background().style() == Qt.BrushStyle.NoBrush
    assert quote.blockFormat().leftMargin() > plain.blockFormat().leftMargin()
    colour = quote.begin().fragment().charFormat().foreground().color()
    background = quote.blockFormat().background().color()
    assert theme.contrast(colour, background) >= theme.AA_TEXT


def iter_blocks(document: QTextDocument) -> list[QTextBlock]:
    found, block = [], document.begin()
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
    chat = ChatView(lambda _id: None)
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
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    text = chat.toPlainText()
    assert text.count("✂ Cut off") == 1
    assert text.index("Once upon a time there") < text.index("✂ Cut off") < text.index("The end.")


def test_a_reply_cut_off_while_streaming_is_marked(qtbot: QtBot, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create().id
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    chat.add_user_message("More")
    chat.append_delta("It went on and")
    store.append(cid, "user", "More")
    store.append(cid, "assistant", "It went on and", cut_off=True)
    chat.finish_reply(store.load(cid))
    assert (
        "It went on and\n✂ Cut off: the reply reached its length limit (Reply length, in "
        "Settings > Memory or the model's Options)." in chat.toPlainText()
    )
    # The places it names exist: a "Memory" page and the model options, each with the field.
    page = MemoryPage()
    qtbot.addWidget(page)
    assert page.title == "Memory"
    assert "Reply &length:" in [label.text() for label in page.findChildren(QLabel)]
    options = ModelsPage()
    qtbot.addWidget(options)
    assert "Reply &length:" in [label.text() for label in options.findChildren(QLabel)]


def anchors(view: ChatView) -> list[str]:
    found = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            href = it.fragment().charFormat().anchorHref()
            if href and href not in found:
                found.append(href)
            it += 1
        block = block.next()
    return found


def click(view: ChatView, prefix: str) -> None:
    href = next(h for h in anchors(view) if h.startswith(prefix))
    view.anchorClicked.emit(QUrl(href))


def test_copy_links_put_markdown_plain_text_and_code_on_the_clipboard(view: ChatView) -> None:
    clipboard = QGuiApplication.clipboard()
    assert [h.split(":")[0] for h in anchors(view)] == [
        "copy",
        "edit",
        "copycode",
        "copy",
        "copytext",
        "regenerate",
    ]
    click(view, "copytext:")
    assert clipboard.text().startswith("Plan\nSome bold text.")
    click(view, "copycode:")
    assert clipboard.text() == "print('hello')"
    reply_link = [h for h in anchors(view) if h.startswith("copy:")][1]
    view.anchorClicked.emit(QUrl(reply_link))
    assert clipboard.text() == REPLY
    click(view, "copy:")
    assert clipboard.text() == "Show me everything"


@pytest.fixture
def wide_code(qtbot: QtBot, data_dir: Path) -> ChatView:
    store = ConversationStore(data_dir)
    cid = store.create().id
    store.append(cid, "user", "code")
    store.append(
        cid,
        "assistant",
        f"A paragraph long enough to wrap in a narrow chat, {'word ' * 30}\n\n"
        f"```python\ndef f():\n    return 1\n{LONG_LINE}\n```\n\nAfter.",
    )
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.resize(500, 400)
    chat.show()
    qtbot.waitExposed(chat)
    chat.show_conversation(store.load(cid))
    chat.verticalScrollBar().setValue(0)
    qtbot.waitUntil(
        lambda: any(b.isVisible() for b in chat.findChildren(QScrollBar, "codeScrollBar"))
    )
    return chat


LONG_LINE = "x = " + " + ".join(f"{i}" for i in range(200))


def code_bar(chat: ChatView) -> QScrollBar:
    (bar,) = [b for b in chat.findChildren(QScrollBar, "codeScrollBar") if b.isVisible()]
    return bar


def test_code_is_highlighted_and_a_long_line_scrolls_inside_its_block_only(
    qtbot: QtBot, wide_code: ChatView
) -> None:
    chat = wide_code
    by_text = {b.text(): b for b in blocks(chat)}
    assert "python   Copy code" in by_text
    keyword = by_text["def f():"].begin().fragment().charFormat()
    assert keyword.foreground().color() != chat.palette().text().color()
    assert by_text[LONG_LINE].layout().lineCount() == 1  # not wrapped
    assert (
        next(b for b in by_text.values() if b.text().startswith("A para")).layout().lineCount() > 1
    )
    assert LONG_LINE in chat.toPlainText()
    assert chat.horizontalScrollBar().maximum() == 0  # the chat never scrolls sideways
    bar = code_bar(chat)
    assert bar.maximum() > 1000 and bar.value() == 0
    assert bar.accessibleName()
    box = bar.geometry().adjusted(0, -30, 0, -bar.height())  # the code's last lines
    before = chat.viewport().grab()
    where = QPointF(box.center())
    swipe = QWheelEvent(
        where,
        chat.viewport().mapToGlobal(where),
        QPoint(),
        QPoint(-240, 0),  # two notches sideways
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(chat.viewport(), swipe)
    assert bar.value() > 0
    after = chat.viewport().grab()
    inside = before.copy(box).toImage() != after.copy(box).toImage()
    above = QRect(0, 0, chat.viewport().width(), box.top() - 40)
    assert inside and before.copy(above).toImage() == after.copy(above).toImage()


def test_finding_in_a_wide_code_block_scrolls_it_to_the_match(wide_code: ChatView) -> None:
    bar = code_bar(wide_code)
    assert wide_code.find("+ 198 + 199")
    assert bar.value() > bar.maximum() // 2
    assert wide_code.horizontalScrollBar().value() == 0


def test_a_click_in_a_scrolled_code_block_lands_on_the_text_under_it(
    qtbot: QtBot, wide_code: ChatView
) -> None:
    bar = code_bar(wide_code)
    bar.setValue(600)
    point = bar.geometry().topLeft() + QPoint(200, -8)  # on the long line
    expected = wide_code.cursorForPosition(point + QPoint(600, 0)).position()
    qtbot.mouseClick(wide_code.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert wide_code.textCursor().position() == expected


def test_a_streamed_reply_is_markdown_before_it_ends(qtbot: QtBot) -> None:
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.add_user_message("plan please")
    for piece in ["## Pl", "an\n", "\nFirst **bo", "ld** step\n\n- one\n", "- two"]:
        chat.append_delta(piece)
    by_text = {b.text(): b for b in blocks(chat)}
    assert by_text["Plan"].blockFormat().headingLevel() == 2
    assert "First bold step" in by_text
    assert by_text["two"].textList() is not None
    assert "##" not in chat.toPlainText() and "**" not in chat.toPlainText()


@pytest.mark.parametrize(
    ("text", "settled"),
    [
        ("# Head\n\nPara", len("# Head\n\n")),
        ("para one\ncontinues", 0),
        ("- item\n\n  more of the item\n", 0),  # an indented continuation stays open
        ("```\ncode\n\nmore code\n", 0),  # a blank line inside a fence ends nothing
        ("```\ncode\n```\nafter", len("```\ncode\n```\n")),
        ("a\n\nb\n\nc", len("a\n\nb\n\n")),
    ],
)
def test_the_settled_part_ends_where_a_block_surely_ends(text: str, settled: int) -> None:
    assert settled_end(text, 0) == settled


def test_tool_lines_read_as_words_and_never_show_a_bare_id() -> None:
    memory_id = "0123456789abcdef0123456789abcdef"
    texts = {memory_id: "The user's sister Ana lives in Porto"}
    remembered = summarize(
        "remember",
        json.dumps({"text": "The user's sister Ana lives in Porto"}),
        f"Remembered as {memory_id}.",
        True,
        texts.get,
    )
    assert (remembered.action, remembered.memory_id) == ("Remembered", memory_id)
    assert remembered.memory_text == "The user's sister Ana lives in Porto"
    lines = "\n".join(f'- [{c * 32}] (fact) "x"' for c in "abc")
    recall = summarize("recall", '{"query": "sister"}', lines, True, texts.get)
    assert recall.action == "Searched memory for 'sister' · 3 found"
    assert summarize("update_working_memory", "{}", "ok", True, texts.get).action == (
        "Updated the plan"
    )
    failed = summarize("calculator", '{"expression": "1/0"}', "Error: division", False, texts.get)
    assert failed.action == "Calculating failed"


def test_a_failed_tool_reads_failed_when_shown_again(qtbot: QtBot, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create().id
    store.append(cid, "user", "What is 1/0?")
    call = {"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": "{}"}}
    store.append(cid, "assistant", "", tool_calls=[call])
    store.append(cid, "tool", "division by zero", tool_call_id="c1", ok=False)
    store.append(cid, "assistant", "It has no value.")
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(ConversationStore(data_dir).load(cid))
    assert "Calculating failed ✗" in chat.toPlainText()


def test_stopped_and_broken_replies_keep_a_marker_after_reopening(
    qtbot: QtBot, data_dir: Path
) -> None:
    store = ConversationStore(data_dir)
    cid = store.create().id
    store.append(cid, "user", "one")
    store.append(cid, "assistant", "half an ans", stop_reason="stopped")
    store.append(cid, "user", "two")
    store.append(cid, "assistant", "it broke", stop_reason="failed")
    store.append(cid, "user", "three")
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(ConversationStore(data_dir).load(cid))
    text = chat.toPlainText()
    assert "half an ans\n■ Stopped." in text
    assert "it broke\n⚠ The reply broke off.  Retry" in text
    assert text.rstrip().endswith("⚠ No reply yet.  Retry")


def test_siblings_show_a_pager_that_asks_for_the_other_branch(qtbot: QtBot, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create().id
    question = store.append(cid, "user", "Q")
    first = store.append(cid, "assistant", "A1")
    store.set_leaf(cid, question.id)
    store.append(cid, "assistant", "A2")
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    assert "Assistant   < 2/2 >" in chat.toPlainText()
    with qtbot.waitSignal(chat.branch_requested) as asked:
        click(chat, "branch:")
    assert asked.args == [first.id]


def test_a_failed_regeneration_shows_the_question_once(qtbot: QtBot, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create().id
    store.append(cid, "user", "Only once")
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid), replying=True)
    chat.start_reply()
    chat.finish_reply(store.load(cid), "The server is down")
    text = chat.toPlainText()
    assert text.count("Only once") == 1
    assert text.rstrip().endswith("⚠ The server is down  Retry")


def test_earlier_turns_render_for_find_and_for_opening_a_message_among_them(
    qtbot: QtBot, data_dir: Path
) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Long").id
    first = store.append(cid, "user", "The very first question").id
    for i in range(150):
        store.append(cid, "assistant" if i % 2 == 0 else "user", f"message {i}")
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    assert chat.has_earlier() and "very first" not in chat.toPlainText()
    assert chat.scroll_to_message(first)  # as a search hit opens it
    assert "The very first question" in chat.textCursor().selectedText()
    assert not chat.has_earlier()
    chat.show_conversation(store.load(cid))  # drawn again (a tool line expanded, a new theme)
    assert not chat.has_earlier() and "very first" in chat.toPlainText()  # the turns it had
    bar = FindBar(chat, before_find=chat.load_all)
    qtbot.addWidget(bar)
    bar.field.setText("very first")
    assert chat.textCursor().selectedText() == "very first"
    assert chat.toPlainText().count("message 1\n") == 1


def test_a_line_under_the_conversation_stays_under_the_reply_streaming_above_it(
    qtbot: QtBot,
) -> None:
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.add_user_message("remember and plan")
    chat.append_delta("## Plan\n\nFirst")
    chat.add_line("↺ Remembered “plan” · ", ("Undo", "undo-memory:0"))
    chat.append_delta(" step\n\n```python\nx = 1\n```\n\nThen")
    chat.start_tool_call("c1", "calculator", '{"expression": "1+1"}')
    chat.finish_tool_call("c1", "2", True)
    chat.append_delta(" more")
    lines = chat.toPlainText().splitlines()
    assert lines[-1] == "↺ Remembered “plan” · Undo"
    tool = next(line for line in lines if line.startswith("▸"))
    order = [lines.index(text) for text in ("First step", "x = 1", "Then", tool, "more")]
    assert order == sorted(order)


def test_a_code_scroll_bar_follows_the_chat_width(qtbot: QtBot, wide_code: ChatView) -> None:
    narrow = code_bar(wide_code).width()
    wide_code.resize(800, 400)
    qtbot.waitUntil(lambda: code_bar(wide_code).width() >= narrow + 280)


def test_earlier_turns_rendered_while_a_reply_streams_leave_the_reply_whole(
    qtbot: QtBot, data_dir: Path
) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Long").id
    for i in range(60):
        store.append(cid, "user", f"question {i}")
        store.append(cid, "assistant", f"answer {i}")
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    chat.add_user_message("one more")
    chat.append_delta("First part, ")
    chat.load_all()
    chat.append_delta("second part.\n\nNext")
    chat.start_tool_call("c1", "calculator", '{"expression": "1+1"}')
    chat.load_earlier()  # nothing left: changes nothing
    chat.finish_tool_call("c1", "2", True)
    chat.append_delta("Done.")
    store.append(cid, "user", "one more")
    store.append(cid, "assistant", "First part, second part.\n\nNext")
    store.append(cid, "assistant", "Done.")
    chat.finish_reply(store.load(cid))
    text = chat.toPlainText()
    assert text.startswith("You\nquestion 0\n") and text.count("question 0\n") == 1
    assert text.count("one more") == 1 and text.count("First part, second part.") == 1
    assert text.index("Next") < text.index("▸ Calculated") < text.index("Done.")
