"""One writer: `assistant mcp` goes through the running app (its real local socket), and the
data dir's lock is handed over cleanly when either of them starts while the other runs."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from mcp import Client
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListView
from pytestqt.qtbot import QtBot

from assistant.datalock import DataDirLock, DataDirLockedError
from assistant.errors import AssistantError
from assistant.mcp_server.backend import Backend
from assistant.memory import SemanticMemory
from assistant.paths import memory_dir
from assistant.ui.app import instance_server
from assistant.ui.single_instance import InstanceServer, MemoryRequest
from assistant.ui.window.main_window import MainWindow
from tests.desktop import shown_window
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_mcp_server import no_process_left, text_of, use_model, with_client
from tests.test_reliability import holder

pytestmark = pytest.mark.gui
__all__ = ["holder", "no_process_left"]  # fixtures, used here too

WAIT_MS = 120_000  # a guard against a hang: starting `assistant mcp` takes seconds


class ClientThread(threading.Thread):
    """An MCP client session against `assistant mcp`, run beside the Qt event loop."""

    def __init__(self, root: Path, session: Callable[[Client], Any], **env: str) -> None:
        super().__init__(daemon=True)
        self.root, self.session, self.env = root, session, env
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = with_client(self.root, self.session, **self.env)
        except BaseException as exc:
            self.error = exc

    def outcome(self, qtbot: QtBot) -> Any:
        qtbot.waitUntil(lambda: not self.is_alive(), timeout=WAIT_MS)
        if self.error is not None:
            raise self.error
        return self.result


def sidebar_rows(win: MainWindow) -> list[str]:
    """What the memory list says of each row (its accessible text)."""
    view = win.findChild(QListView, "memoryList")
    assert view is not None
    model = view.model()
    role = Qt.ItemDataRole.AccessibleTextRole
    return [model.data(model.index(row, 0), role) for row in range(model.rowCount())]


@pytest.fixture
def app(qtbot: QtBot, data_dir: Path) -> Iterator[tuple[MainWindow, InstanceServer, DataDirLock]]:
    """The app as `run_app` starts it: the lock, the window, its local socket."""
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = DataDirLock(data_dir)
    lock.acquire()
    win = shown_window(qtbot, data_dir)
    server = instance_server(win, data_dir)
    yield win, server, lock
    server.close()
    win.close()
    lock.release()


def test_a_remember_goes_through_the_app_and_shows_in_the_sidebar_at_once(
    qtbot: QtBot, data_dir: Path, app: tuple[MainWindow, InstanceServer, DataDirLock]
) -> None:
    """Then the app quits while the client is still connected: the next call runs directly."""
    win, server, lock = app
    app_closed = threading.Event()

    async def session(client: Client) -> list[str]:
        args = {"text": "The user's sister Ana lives in Braga."}
        said = [text_of(await client.call_tool("remember", args))]
        await anyio.to_thread.run_sync(app_closed.wait, WAIT_MS / 1000)
        args = {"text": "The user is learning Portuguese."}
        said.append(text_of(await client.call_tool("remember", args)))
        return said

    thread = ClientThread(data_dir, session)
    thread.start()
    wanted = "The user's sister Ana lives in Braga.. "
    qtbot.waitUntil(lambda: any(r.startswith(wanted) for r in sidebar_rows(win)), timeout=WAIT_MS)
    [row] = [r for r in sidebar_rows(win) if r.startswith(wanted)]
    assert row.endswith("Remembered by Claude Desktop")
    [item] = win.workspace.memory.all()
    assert (item.origin, item.client) == ("mcp", "claude-ai")
    server.close()  # the app quits: its socket, then its lock
    win.close()
    lock.release()
    app_closed.set()
    through_app, directly = thread.outcome(qtbot)
    assert through_app.startswith(f"Remembered as [{item.id}]. (No model is set up")
    assert directly.startswith("Remembered as [")
    memory = SemanticMemory.open(memory_dir(data_dir))
    texts = sorted(i.text for i in memory.all())
    memory.close()
    assert texts == ["The user is learning Portuguese.", "The user's sister Ana lives in Braga."]


def test_an_app_started_during_a_request_waits_for_it_then_takes_over(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    """`assistant mcp` holds the lock while the model decides (slowly); the app waits for the
    lock, opens with the memory in it, and the client's next call goes through the app."""
    use_model(data_dir, fake_openai)
    memory = SemanticMemory.open(memory_dir(data_dir))
    porto = memory.add("The user lives in Porto.")
    memory.close()
    decision = {"candidate": 0, "action": "SUPERSEDE", "target": porto.id, "reason": "moved"}
    fake_openai.enqueue(Reply.text(json.dumps({"decisions": [decision]}), delay=3))
    app_up = threading.Event()

    async def session(client: Client) -> list[str]:
        said = [text_of(await client.call_tool("remember", {"text": "The user lives in Lisbon."}))]
        await anyio.to_thread.run_sync(app_up.wait, WAIT_MS / 1000)
        args = {"text": "The user works as a nurse."}
        said.append(text_of(await client.call_tool("remember", args)))
        return said

    env = {"OPENAI_API_KEY": fake_openai.api_key, "OPENAI_BASE_URL": fake_openai.base_url}
    thread = ClientThread(data_dir, session, **env)
    thread.start()
    qtbot.waitUntil(lambda: fake_openai.requests_to("/v1/chat/completions") != [], timeout=WAIT_MS)
    lock = DataDirLock(data_dir)
    with pytest.raises(DataDirLockedError):  # `assistant mcp` has it, for this request
        lock.acquire()
    lock.acquire(wait_s=60)  # what `run_app` does after no app answered
    try:
        win = shown_window(qtbot, data_dir)
        server = instance_server(win, data_dir)
        current = {i.text: i for i in win.workspace.memory.all()}
        assert set(current) == {"The user lives in Lisbon."}  # nothing lost, Porto superseded
        app_up.set()
        first, second = thread.outcome(qtbot)
        assert first.startswith("Remembered as [") and f"It replaces [{porto.id}]" in first
        assert second.startswith("Remembered as [")
        rows = sidebar_rows(win)
        assert any(r.startswith("The user works as a nurse.. ") for r in rows)
        server.close()
        win.close()
    finally:
        lock.release()


def test_a_holder_that_never_answers_is_not_waited_for_forever(
    data_dir: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(AssistantError, match=f"process {holder.pid}.*gave up after 1 s"):
        Backend(data_dir, wait_s=1).run("recent_memories", {}, "Claude Desktop")


def test_an_app_still_opening_is_asked_again(qtbot: QtBot, data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    with DataDirLock(data_dir):
        server = InstanceServer()
        assert server.listen(data_dir)
        try:
            answers: list[str | BaseException] = []

            def ask() -> None:
                try:
                    answers.append(Backend(data_dir, wait_s=1).run("recent_memories", {}, "x"))
                except AssistantError as exc:
                    answers.append(exc)

            thread = threading.Thread(target=ask)
            thread.start()
            qtbot.waitUntil(lambda: not thread.is_alive(), timeout=WAIT_MS)
            [refused] = answers
            assert isinstance(refused, AssistantError)
            assert (
                str(refused) == "Assistant is still opening its data; gave up after 1 s. Try again."
            )

            def reply(request: MemoryRequest) -> None:
                request.reply({"ok": True, "text": f"ran {request.payload['op']}"})

            server.memory_handler = reply
            thread = threading.Thread(target=ask)
            thread.start()
            qtbot.waitUntil(lambda: not thread.is_alive(), timeout=WAIT_MS)
            assert answers[1] == "ran recent_memories"
        finally:
            server.close()
