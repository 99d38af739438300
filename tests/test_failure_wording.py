"""A failed reply says what failed: the server's refusal is not a connection problem, and the
failure's line stays when its conversation is shown again."""

from __future__ import annotations

from pathlib import Path

import httpx2
import openai
import pytest
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.openai_errors import provider_error
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_main_window import send, wait_idle

URL = "http://127.0.0.1:9/v1/chat/completions"


def status_error(status: int) -> openai.APIStatusError:
    response = httpx2.Response(status, request=httpx2.Request("POST", URL), json={"error": "no"})
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    return client._make_status_error("no", body=None, response=response)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (status_error(400), "Request refused (HTTP 400)"),
        (status_error(422), "Request refused (HTTP 422)"),
        (status_error(401), "API key rejected"),
        (status_error(429), "Rate limited"),
        (status_error(503), "Server error (HTTP 503)"),
        (openai.APIConnectionError(request=httpx2.Request("POST", URL)), "Connection problem"),
        (openai.APITimeoutError(request=httpx2.Request("POST", URL)), "Connection problem"),
    ],
)
def test_each_failure_says_what_it_is(error: Exception, status: str) -> None:
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    assert provider_error(error, client, model="m", purpose="chat").status == status


@pytest.mark.gui
def test_a_refused_request_is_named_and_its_line_stays_when_shown_again(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    store = ConversationStore(data_dir)
    other = store.create("Another").id
    store.append(other, "user", "something else")
    win = shown_window(qtbot, data_dir)
    win.conversations.new_button.click()
    fake_openai.enqueue(Reply.error(400, "Scripted failure for QA"))
    send(qtbot, win, "boom now")
    wait_idle(qtbot, win)
    line = "⚠ The server refused the chat request (HTTP 400): Scripted failure for QA"
    assert line in win.chat.toPlainText()
    assert win.status.connection_label.text() == "Request refused (HTTP 400)"
    assert "Scripted failure for QA" in win.status.connection_label.toolTip()
    cid = win.conversations.current_id()
    assert cid is not None and cid != other
    win.conversations.select(other)
    qtbot.waitUntil(lambda: "boom now" not in win.chat.toPlainText())
    win.conversations.select(cid)  # drawn again from the file, as after choosing a branch
    qtbot.waitUntil(lambda: "boom now" in win.chat.toPlainText())
    assert line in win.chat.toPlainText() and "No reply yet" not in win.chat.toPlainText()
    win.close()
