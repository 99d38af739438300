"""Text that looks like HTML (`List<String>`, `<div>`, `<!-- -->`) is shown, copied and exported
as the characters it is, never dropped as markup."""

from __future__ import annotations

from pathlib import Path

import pypdfium2
import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication, QTextDocument
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.transfer import conversation_markdown
from assistant.ui.chat.markdown import plain_text
from assistant.ui.chat.view import ChatView
from assistant.ui.transfer.conversation_export import document_bytes

pytestmark = pytest.mark.gui

# (Markdown as written, the text a reader sees). Soft line breaks read as spaces and `&lt;`
# as "<", as Markdown has them; everything else is there character for character.
CASES = [
    (
        "Use List<String> for that, or <T> generics. Also a <= b and 3 > 2.",
        "Use List<String> for that, or <T> generics. Also a <= b and 3 > 2.",
    ),
    (
        "Test tags: use <name> here\n<div>line inside a div block\nsecond line</div>\n\nafter it",
        "Test tags: use <name> here <div>line inside a div block second line</div>\nafter it",
    ),
    (
        'Files:\n<data source="attached files">\nFile notes.txt:\nMeeting notes\n</data>',
        'Files: <data source="attached files"> File notes.txt: Meeting notes </data>',
    ),
    ("<script>alert(1)</script> done", "<script>alert(1)</script> done"),
    ("before <!-- a comment --> after", "before <!-- a comment --> after"),
    ("<img src=x> picture", "<img src=x> picture"),
    ("&lt;b&gt; is bold", "<b> is bold"),
    ("a < b > c", "a < b > c"),
    ("Call `f<T>(x)` here", "Call f<T>(x) here"),
    ("```html\n<div>if a<b</div>\n```", "<div>if a<b</div>"),
    ("- item <one>\n- [a link](http://x.org) <b>", "• item <one>\n• a link <b>"),
    ("| a | b |\n|---|---|\n| <x> | y |", "\na\nb\n<x>\ny\n"),  # a line each side
]
NASTY = "\n\n".join(markdown for markdown, _ in CASES)


@pytest.mark.parametrize(("markdown", "expected"), CASES)
def test_plain_text_keeps_every_character(qapp: object, markdown: str, expected: str) -> None:
    assert plain_text(markdown) == expected


def shown(view: ChatView) -> str:
    return view.toPlainText().replace("\u2028", "\n").replace("\xa0", " ")


def test_a_reply_shows_all_its_text_when_drawn_streamed_and_drawn_again(
    qtbot: QtBot, data_dir: Path
) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Tags").id
    store.append(cid, "user", CASES[1][0])
    store.append(cid, "assistant", NASTY)
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    drawn = shown(chat)
    assert CASES[1][0] in drawn  # the user's words, as typed
    for _, expected in CASES:
        assert all(line.lstrip("• ") in drawn for line in expected.split("\n")), expected

    chat.add_user_message(CASES[0][0])
    reply = f"{CASES[0][0]}\n\n{CASES[1][0]}"
    for start in range(0, len(reply), 5):  # each partial text shows all that has come
        chat.append_delta(reply[start : start + 5])
        assert squashed(reply[: start + 5]) in squashed(shown(chat))
    assert "Use List<String> for that, or <T> generics." in shown(chat)
    assert "Test tags: use <name> here <div>line inside a div block" in shown(chat)

    chat.show_conversation(store.load(cid))  # redrawn (a new theme, a branch)
    assert shown(chat) == drawn


def test_copy_as_text_and_find_see_the_tags(qtbot: QtBot, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Tags").id
    store.append(cid, "user", "generics?")
    store.append(cid, "assistant", CASES[0][0])
    chat = ChatView(lambda _id: None)
    qtbot.addWidget(chat)
    chat.show_conversation(store.load(cid))
    clipboard = QGuiApplication.clipboard()
    copy_text = next(href for href in iter_anchors(chat) if href.startswith("copytext:"))
    chat.anchorClicked.emit(QUrl(copy_text))
    assert clipboard.text() == CASES[0][1]
    assert chat.find("<T> generics")


def iter_anchors(chat: ChatView) -> list[str]:
    found = []
    block = chat.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor():
                found.append(fmt.anchorHref())
            it += 1
        block = block.next()
    return found


def nasty_conversation(store: ConversationStore) -> str:
    cid = store.create("Nasty <tags>").id
    for markdown, _ in CASES:
        store.append(cid, "user", f"Say {markdown.splitlines()[0]}")
        store.append(cid, "assistant", markdown)
    store.append(cid, "user", "last question")
    store.append(cid, "assistant", "last answer")
    return cid


def squashed(text: str) -> str:
    """The text without spaces and list bullets (a PDF's lines break where they fit)."""
    return "".join(text.replace("•", " ").split())


def test_html_and_pdf_exports_hold_every_message(qapp: object, data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    markdown = conversation_markdown(store.load(nasty_conversation(store)))
    assert markdown.count("**You**") == len(CASES) + 1  # the Markdown keeps the source
    html = document_bytes(markdown, ".html", "Nasty").decode()
    read = QTextDocument()
    read.setHtml(html)
    html_text = read.toPlainText()
    pdf = pypdfium2.PdfDocument(document_bytes(markdown, ".pdf", "Nasty"))
    pdf_text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    for text in (html_text, pdf_text):
        assert squashed(text).count("You") >= len(CASES) + 1
        assert squashed(text).count("Assistant") == len(CASES) + 1
        for _, expected in CASES:
            assert squashed(expected) in squashed(text), expected
        assert "last answer" in text
