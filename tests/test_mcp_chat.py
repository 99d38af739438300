"""MCP tools through the app: the fake OpenAI server calls a real test server's tools; the chat
shows them like built-in ones and asks before one that may change things."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QTextDocument, QTextImageFormat
from pytestqt.qtbot import QtBot

from assistant.ui.chat.tool_summary import summarize
from assistant.ui.chat.view import ChatView
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.mcp_helpers import server_processes, status, stdio, wait_until, write_config
from tests.test_chat_view import anchors, click
from tests.test_main_window import send

pytestmark = [pytest.mark.gui, pytest.mark.slow]


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    configure(data_dir, fake_openai, embeddings=False)
    write_config(data_dir, {"shop": stdio("shop")})
    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: status(win.workspace.mcp, "shop").state == "ready", timeout=60000)
    yield win
    win.close()
    wait_until(lambda: server_processes(data_dir) == [])


def idle(qtbot: QtBot, win: MainWindow) -> None:
    qtbot.waitUntil(win.send_button.isEnabled, timeout=30000)


def test_a_server_tool_reads_like_a_built_in_one(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("shop__lookup_order", json.dumps({"order_id": "A-17"}))),
        Reply.text("Your order shipped on 3 March."),
    )
    send(qtbot, window, "Where is my order A-17?")
    idle(qtbot, window)
    text = window.chat.toPlainText()
    assert "▸ shop · Looked up order 'A-17'" in text
    first = fake_openai.requests_to("/chat/completions")[0].body
    offered = [tool["function"]["name"] for tool in first["tools"]]
    assert "shop__lookup_order" in offered and "remember" in offered
    second = fake_openai.requests_to("/chat/completions")[1].body
    assert second["messages"][-1]["content"].startswith('<data source="MCP server shop">')
    # The arguments and the result on click.
    click(window.chat, "tool:")
    expanded = window.chat.toPlainText()
    assert '"order_id": "A-17"' in expanded and "Order A-17: 2 books" in expanded


def test_the_details_show_the_result_as_the_tool_gave_it(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("shop__product_photo", json.dumps({"product": "mug"}))),
        Reply.text("Here it is."),
    )
    send(qtbot, window, "Show me the mug")
    idle(qtbot, window)
    messages = fake_openai.requests_to("/chat/completions")[1].body["messages"]
    sent = next(m["content"] for m in messages if m["role"] == "tool")
    assert "&lt;https://shop.test/mug&gt;" in sent  # fenced and escaped for the model
    click(window.chat, "tool:")
    expanded = window.chat.toPlainText()
    assert "[resource link: product page <https://shop.test/mug>]" in expanded
    assert "&lt;" not in expanded and "<data source" not in expanded


def test_a_tool_that_may_change_things_asks_in_the_chat(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    refund = json.dumps({"order_id": "A-17", "amount": 12.5})
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("shop__refund_order", refund)),
        Reply.text("Refunded."),
        Reply.tool_calls(ToolCall("shop__refund_order", refund)),
        Reply.text("Not refunded."),
    )
    send(qtbot, window, "Refund A-17")
    qtbot.waitUntil(lambda: any(h.startswith("confirm:") for h in anchors(window.chat)))
    asking = window.chat.toPlainText()
    assert "⚠ shop · refund_order may change things" in asking
    assert re.search(r"Allow once\W+Always allow this tool\W+Deny", asking), asking
    click(window.chat, "confirm:always:")
    idle(qtbot, window)
    assert "▸ shop · Refunded order 'A-17'" in window.chat.toPlainText()
    assert window.workspace.settings.mcp_trusted == ["shop/refund_order"]
    # Always allowed: the next call runs without asking.
    send(qtbot, window, "Once more")
    idle(qtbot, window)
    assert not any(h.startswith("confirm:") for h in anchors(window.chat))


def test_denied_the_line_says_it_did_not_run(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    note = json.dumps({"order_id": "A-17", "note": "gift"})
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("shop__add_note", note)), Reply.text("I did not add it.")
    )
    send(qtbot, window, "Add a note")
    qtbot.waitUntil(lambda: any(h.startswith("confirm:") for h in anchors(window.chat)))
    click(window.chat, "confirm:deny:")
    idle(qtbot, window)
    assert "▸ shop · Add note 'A-17' · not run ✗" in window.chat.toPlainText()
    tool = fake_openai.requests_to("/chat/completions")[1].body["messages"][-1]
    assert tool["content"].startswith("Not run: the user did not allow")


def thumbnails(view: ChatView) -> list[tuple[str, float]]:
    """The images in the chat: their resource name and shown width (with the image there)."""
    found = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                image = QTextImageFormat(fmt)
                kind = QTextDocument.ResourceType.ImageResource
                assert view.document().resource(kind, image.name()) is not None
                found.append((image.name(), image.width()))
            it += 1
        block = block.next()
    return found


def test_an_image_a_tool_returned_shows_as_a_thumbnail(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    photo = json.dumps({"product": "mug"})
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("shop__product_photo", photo)), Reply.text("A white mug.")
    )
    send(qtbot, window, "Show me the mug")
    idle(qtbot, window)
    shown = thumbnails(window.chat)
    assert len(shown) == 1 and shown[0][0].startswith("toolimage:") and shown[0][1] == 1
    sent = fake_openai.requests_to("/chat/completions")[1].body["messages"][-1]
    assert sent["content"][-1]["image_url"]["url"].startswith("data:image/png;base64,")
    # Drawn again from the saved conversation (another one shown, then this one): still there.
    cid = window.session.conversation_id
    assert cid is not None
    window.new_conversation()
    assert thumbnails(window.chat) == []
    window.conversations.select(cid)
    assert [name for name, _ in thumbnails(window.chat)] == [
        f"toolimage:{name}" for name in _kept(window, cid)
    ]


def _kept(window: MainWindow, cid: str) -> list[str]:
    folder = window.workspace.attachments.directory / cid / "tool-images"
    return sorted(path.name for path in folder.iterdir())


def test_a_question_waiting_for_the_user_is_asked_again_when_shown_again(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    note = json.dumps({"order_id": "A-17", "note": "gift"})
    fake_openai.enqueue(Reply.tool_calls(ToolCall("shop__add_note", note)), Reply.text("Noted."))
    send(qtbot, window, "Add a note")
    asking = lambda: [h for h in anchors(window.chat) if h.startswith("confirm:")]  # noqa: E731
    qtbot.waitUntil(lambda: bool(asking()))
    cid = window.session.conversation_id
    assert cid is not None
    # Away and back: the question is there again, under the tool line that waits.
    assert window.status.connection_label.text() == "Waiting for your answer…"
    window.new_conversation()
    assert asking() == [] and window.session.busy
    window.conversations.select(cid)
    assert len(asking()) == 3
    text = window.chat.toPlainText()
    assert text.index("▸ shop · Add note 'A-17'") < text.index("⚠ shop · add_note may change")
    # Drawn anew (as a rebuilt window does, and with another theme): still asked once.
    window.session.open(cid)
    window.set_theme("dark")
    assert len(asking()) == 3
    assert window.chat.toPlainText().count("may change things") == 1
    # Answered after all that: the tool runs and the reply ends.
    click(window.chat, "confirm:once:")
    assert window.status.connection_label.text() == "Thinking…"
    idle(qtbot, window)
    assert "▸ shop · Added note 'A-17'" in window.chat.toPlainText()
    tool = fake_openai.requests_to("/chat/completions")[1].body["messages"][-1]
    assert tool["content"].startswith('<data source="MCP server shop">\nNoted on A-17: gift')


def test_a_question_asked_elsewhere_is_told_and_one_left_unanswered_says_so(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    from assistant.ui.worker import events

    note = json.dumps({"order_id": "A-17", "note": "gift"})
    fake_openai.enqueue(Reply.tool_calls(ToolCall("shop__add_note", note)))
    send(qtbot, window, "Add a note")
    qtbot.waitUntil(lambda: any(h.startswith("confirm:") for h in anchors(window.chat)))
    cid = window.session.conversation_id
    assert cid is not None
    # Stopped before an answer: the question gives way to a line that says so.
    window.stop()
    idle(qtbot, window)
    text = window.chat.toPlainText()
    assert "may change things" not in text and "Not answered" in text
    assert not any(h.startswith("confirm:") for h in anchors(window.chat))
    # A question from a conversation not shown: the status bar says where it waits.
    window.new_conversation()
    asked = events.ConfirmationRequested(cid, "call_x", "shop__add_note", "shop", "add_note", "{}")
    window.worker.agent_event.emit(asked)
    qtbot.waitUntil(lambda: "waits for your answer" in window.statusBar().currentMessage())
    assert window.statusBar().currentMessage() == "shop · add_note waits for your answer."


def test_an_answered_question_is_not_asked_again(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    note = json.dumps({"order_id": "A-17", "note": "gift"})
    hang = ToolCall("shop__hang", "{}", id="call_hang")
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("shop__add_note", note, id="call_note"), hang),
        Reply.text("Stopped."),
    )
    send(qtbot, window, "Add a note, then wait")
    qtbot.waitUntil(lambda: any(h.startswith("confirm:") for h in anchors(window.chat)))
    click(window.chat, "confirm:once:")
    qtbot.waitUntil(lambda: "▸ shop · Hang" in window.chat.toPlainText())
    cid = window.session.conversation_id
    assert cid is not None
    window.new_conversation()
    window.conversations.select(cid)
    assert "may change things" not in window.chat.toPlainText()
    assert "▸ shop · Added note 'A-17'" in window.chat.toPlainText()
    window.stop()
    idle(qtbot, window)


def test_server_tool_lines_in_words() -> None:
    def line(name: str, args: dict[str, object], result: str | None, ok: bool = True) -> str:
        return summarize(name, json.dumps(args), result, ok, lambda _id: None).action

    assert line("shop__lookup_order", {"order_id": "A-17"}, "x") == "shop · Looked up order 'A-17'"
    assert line("shop__lookup_order", {"order_id": "A-17"}, None) == "shop · Lookup order 'A-17'"
    assert line("gh__getIssue", {"n": 3}, "x") == "gh · Got Issue"
    assert line("fs__read_file", {"path": "/a"}, "e", ok=False) == "fs · Read file '/a' failed"
