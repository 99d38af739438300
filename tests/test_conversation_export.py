"""One conversation as Markdown, HTML or PDF, and copied whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pypdfium2
import pytest
from PySide6.QtGui import QGuiApplication, QTextDocument
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.memory.messages import AttachedFile
from assistant.transfer import conversation_markdown
from assistant.ui.chat.markdown import set_markdown
from assistant.ui.transfer import conversation_export
from assistant.ui.transfer.conversation_export import FORMATS, document_bytes, file_name
from assistant.ui.window.main_window import MainWindow
from tests.desktop import shown_window

pytestmark = pytest.mark.gui

CALL = {"id": "c1", "type": "function", "function": {"name": "recall", "arguments": '{"q": 1}'}}


def trip(store: ConversationStore) -> str:
    cid = store.create("Trip: Lisbon/Porto?").id
    store.append(cid, "user", "When does the *train* leave?")
    store.append(cid, "assistant", "", tool_calls=[CALL])
    result = store.append(cid, "tool", "train at nine\nmore", tool_call_id="c1")
    first = store.append(cid, "assistant", "At **nine**.\n\n1. one\n2. two")
    store.set_leaf(cid, result.id)
    store.append(cid, "assistant", "Another version")  # a sibling: another branch
    store.set_leaf(cid, first.id)
    return cid


def test_markdown_holds_the_branch_on_screen_with_tools_in_one_line(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    text = conversation_markdown(store.load(trip(store)))
    assert text.startswith("# Trip: Lisbon/Porto?\n\n*")
    assert "**You**\n\nWhen does the \\*train\\* leave?" in text  # the user's words are plain
    assert '> ▸ `recall` {"q": 1}' in text
    assert "> → train at nine more" in text
    assert text.endswith("**Assistant**\n\nAt **nine**.\n\n1. one\n2. two\n")
    assert "Another version" not in text
    assert "c1" not in text  # no ids


@pytest.mark.parametrize("suffix", [".md", ".html", ".pdf"])
def test_each_format_is_written_whole(qapp: object, suffix: str) -> None:
    data = document_bytes("# Title\n\n**You**\n\nHello there", suffix, "Title")
    if suffix == ".md":
        assert data == b"# Title\n\n**You**\n\nHello there"
    elif suffix == ".html":
        assert b"<title>Title</title>" in data and b"Hello there" in data
    else:
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
        assert b"/Type /Page" in data
    assert suffix in FORMATS.values()


# A user message as typed: the chat shows it character for character, so do the exports.
TYPED = (
    "# not a heading\n"
    "*not italic* and __not bold__, <b>no tag</b> & &amp;\n"
    "    four spaces in,   three between\n"
    "1. not a list\n"
    "- nor this\n"
    "> nor a quote\n"
    "\n"
    "see http://example.com or a@b.com, `no code` [no](link) a_b_c \\ | x |"
)


def test_exports_show_the_users_words_as_the_chat_does(qapp: object, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("*Stars* & <tags>").id
    store.append(cid, "user", TYPED)
    store.append(cid, "assistant", "A *real* reply:\n\n- one")
    markdown = conversation_markdown(store.load(cid))
    html = QTextDocument()
    html.setHtml(document_bytes(markdown, ".html", "Typed").decode())
    shown = html.toPlainText()
    assert shown.startswith("*Stars* & <tags>\n")
    assert f"You\n{TYPED}\nAssistant\nA real reply:\n" in shown  # the reply is Markdown
    md = QTextDocument()  # the Markdown file read by a Markdown reader
    set_markdown(md, markdown)
    assert f"You\n{TYPED}\nAssistant" in md.toPlainText()
    pdf = pypdfium2.PdfDocument(document_bytes(markdown, ".pdf", "Typed"))
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    # A PDF's text has no spaces, only gaps that a reader takes for one: words compared.
    lines = [line.split() for line in text.splitlines()]
    for line in filter(None, TYPED.splitlines()):
        assert line.split() in lines, line


def test_a_file_name_is_made_from_the_title() -> None:
    assert file_name("Trip: Lisbon/Porto?") == "Trip LisbonPorto"
    assert file_name("???") == "Conversation"
    assert len(file_name("x" * 300)) == 80


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path) -> Iterator[MainWindow]:
    cid = trip(ConversationStore(data_dir))
    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: win.conversations.current_id() == cid)
    yield win
    win.close()


def test_the_window_saves_and_copies_the_conversation_on_screen(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out"  # no suffix: Markdown
    monkeypatch.setattr(conversation_export, "get_save_file_name", lambda *_a: str(target))
    window.menu.export_conversation.trigger()
    written = target.with_suffix(".md")
    qtbot.waitUntil(lambda: "Saved to" in window.statusBar().currentMessage(), timeout=10000)
    assert written.read_text().startswith("# Trip: Lisbon/Porto?")
    window.menu.copy_conversation.trigger()
    assert QGuiApplication.clipboard().text() == written.read_text()


def test_exports_list_attached_files_and_mark_a_reply_that_failed(
    qapp: object, data_dir: Path
) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Files").id
    files = [
        AttachedFile("a1", "notes.txt", 10, "text"),
        AttachedFile("a2", "report.pdf", 1200, "pdf", 4),
        AttachedFile("a3", "photo.png", 300, "image"),
    ]
    store.append(cid, "user", "Summarize these files please", attachments=files)
    store.append(cid, "assistant", "Here is the summary.")
    asked = store.append(
        cid,
        "user",
        "What is in this picture?",
        attachments=[AttachedFile("a4", "pic.jpg", 9, "image")],
    )
    store.note_failure(cid, asked.id, "The server answered 500.")
    markdown = conversation_markdown(store.load(cid))
    assert (
        "Summarize these files please\n\n*Attached: notes.txt, report.pdf, photo.png*" in markdown
    )
    last = (
        "What is in this picture?\n\n*Attached: pic.jpg*\n\n*(no reply: The server answered 500.)*"
    )
    assert markdown.endswith(last + "\n")
    assert markdown.count("no reply") == 1  # the answered message is not marked
    pdf = pypdfium2.PdfDocument(document_bytes(markdown, ".pdf", "Files"))
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    lines = [line.split() for line in text.splitlines()]
    assert "Attached: notes.txt, report.pdf, photo.png".split() in lines, text
    assert "Attached: pic.jpg".split() in lines
    assert "(no reply: The server answered 500.)".split() in lines
