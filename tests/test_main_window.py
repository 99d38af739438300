"""The main window end to end: real worker thread, real openai client, local fake server."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, QTimer, QUrl, Slot
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from assistant.agent.provider import STREAM_TOOLS_NOTICE
from assistant.paths import settings_file
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests import child
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_chat_view import anchors

pytestmark = pytest.mark.gui

OBJECT_NAMES = [
    "conversationList",
    "newConversationButton",
    "chatView",
    "chatInput",
    "sendButton",
    "stopButton",
    "memorySidebar",
    "memorySearch",
    "memoryList",
    "workingMemoryView",
]


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


def send(qtbot: QtBot, win: MainWindow, text: str) -> None:
    win.input.setPlainText(text)
    qtbot.keyClick(win.input, Qt.Key.Key_Return)


def wait_idle(qtbot: QtBot, win: MainWindow) -> None:
    qtbot.waitUntil(win.send_button.isEnabled, timeout=10000)


def leave_a_layout(qtbot: QtBot, root: Path) -> list[int]:
    """Open a window on `root`, resize it and its panes, close it; returns the pane sizes."""
    first = MainWindow(Workspace.open(root))
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    first.resize(1000, 640)
    first.splitter.setSizes([200, 500, 300])
    sizes = first.splitter.sizes()
    first.close()
    return sizes


@pytest.fixture
def slow_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a workspace takes 0.3 s more, as a big data dir does."""
    open_ = Workspace.open

    def slow(root: Path) -> Workspace:
        time.sleep(0.3)
        return open_(root)

    monkeypatch.setattr(Workspace, "open", slow)


def test_window_has_contract_widgets_and_actions(window: MainWindow) -> None:
    for name in OBJECT_NAMES:
        assert window.findChild(QWidget, name) is not None, name
    assert window.menu.export.objectName() == "actionExport"
    assert window.menu.import_.objectName() == "actionImport"
    assert window.menu.settings.objectName() == "actionSettings"


def test_streamed_reply_appears_and_is_saved(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply.text("Hello! **Nice** to meet you.", chunk_delay=0.01))
    send(qtbot, window, "Hi there")
    qtbot.waitUntil(lambda: "Nice to meet you" in window.chat.toPlainText(), timeout=10000)
    wait_idle(qtbot, window)
    # The speed shows only for a reply that took 0.5 s or more: on a busy machine, or not.
    shown = re.sub(r" · [\d.,]+ tok/s$", "", window.chat.toPlainText())
    assert shown == (
        "You\nHi there\nCopy  ·  Edit\nAssistant\nHello! Nice to meet you.\n"
        "Copy  ·  Copy as text  ·  Regenerate  ·  chat-model · 11 tokens"
    )
    assert window.input.toPlainText() == ""
    cid = window.conversations.current_id()
    assert cid is not None
    conversation = window.workspace.conversations.load(cid)
    assert [m.content for m in conversation.messages] == [
        "Hi there",
        "Hello! **Nice** to meet you.",
    ]
    assert conversation.title == "Hi there"


def test_tool_call_line_and_memory_chips(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    remember = {"text": "The user's favourite colour is teal", "kind": "preference"}
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("remember", json.dumps(remember))), Reply.text("Noted!")
    )
    send(qtbot, window, "My favourite colour is teal")
    wait_idle(qtbot, window)
    text = window.chat.toPlainText()
    assert "▸ Remembered · ◆ The user's favourite colour is teal" in text
    (item,) = window.workspace.memory.all()
    assert item.id not in text  # no bare id in the collapsed line
    assert f"memory:{item.id}" in window.chat.toHtml()
    fake_openai.enqueue(Reply.text("Teal, of course."))
    send(qtbot, window, "What is my favourite colour, teal or red?")
    wait_idle(qtbot, window)
    assert "Memories used:" in window.chat.toPlainText()
    assert "favourite colour is teal" in window.chat.toPlainText()
    (item,) = window.workspace.memory.all()
    assert f"memory:{item.id}" in window.chat.toHtml()


def test_stop_cancels_and_keeps_partial_text(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    words = " ".join(f"w{i}" for i in range(200))
    fake_openai.enqueue(Reply.text(words, chunk_delay=0.02))
    send(qtbot, window, "Write a lot")
    qtbot.waitUntil(lambda: "w3" in window.chat.toPlainText(), timeout=10000)
    assert window.stop_button.isEnabled()
    qtbot.mouseClick(window.stop_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert "Stopped." in window.chat.toPlainText()
    cid = window.conversations.current_id()
    assert cid is not None
    saved = window.workspace.conversations.load(cid).messages
    assert saved[-1].role == "assistant"
    assert 0 < len(saved[-1].content) < len(words)


def test_failure_shows_retry_and_retry_answers(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply.error(401))
    send(qtbot, window, "Are you there?")
    wait_idle(qtbot, window)
    assert "Retry" in window.chat.toPlainText()
    cid = window.conversations.current_id()
    assert cid is not None
    [asked] = window.workspace.conversations.load(cid).messages
    assert f"retry:{asked.id}" in window.chat.toHtml()
    fake_openai.enqueue(Reply.text("Yes, here now."))
    window.chat.anchorClicked.emit(QUrl(f"retry:{asked.id}"))
    wait_idle(qtbot, window)
    assert "Yes, here now." in window.chat.toPlainText()
    contents = [m.content for m in window.workspace.conversations.load(cid).messages]
    assert contents == ["Are you there?", "Yes, here now."]


def test_retry_under_an_earlier_failure_answers_that_message(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """Each failure's Retry asks its own message again (every Retry used to answer the last
    message), and a failure above a later message keeps its mark when the chat is drawn again."""
    fake_openai.enqueue(Reply.error(400))
    send(qtbot, window, "First, refused")
    wait_idle(qtbot, window)
    fake_openai.enqueue(Reply.error(400))
    send(qtbot, window, "Second, refused too")
    wait_idle(qtbot, window)
    cid = window.conversations.current_id()
    assert cid is not None
    first, second = window.workspace.conversations.load(cid).messages
    window.chat.show_conversation(window.workspace.conversations.load(cid))  # drawn again
    html = window.chat.toHtml()
    assert f"retry:{first.id}" in html and f"retry:{second.id}" in html
    fake_openai.enqueue(Reply.text("Answer to the first."))
    window.chat.anchorClicked.emit(QUrl(f"retry:{first.id}"))
    wait_idle(qtbot, window)
    saved = window.workspace.conversations.load(cid)
    answer = next(m for m in saved.messages if m.content == "Answer to the first.")
    assert answer.parent_id == first.id


def test_the_gui_thread_keeps_working_while_a_turn_streams(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """Behaviour only: how long the GUI thread may stall is a benchmark (`ui_bench`)."""
    fake_openai.enqueue(
        Reply.tool_calls(
            ToolCall("calculator", json.dumps({"expression": "2**10"})),
            ToolCall("current_datetime", "{}"),
            chunk_delay=0.01,
        ),
        Reply.text(" ".join(f"token{i}" for i in range(300)), chunk_delay=0.002),
    )
    shown: list[int] = []  # how many tokens the chat showed at each tick of a GUI-thread timer
    probe = QTimer()
    probe.setInterval(5)
    probe.timeout.connect(lambda: shown.append(window.chat.toPlainText().count("token")))
    probe.start()
    send(qtbot, window, "compute and talk")
    wait_idle(qtbot, window)
    probe.stop()
    assert "token299" in window.chat.toPlainText()
    assert any(0 < n < 300 for n in shown)  # the reply was seen part-written: it streamed
    assert len(set(shown)) > 2  # in more than one update, while the timer kept ticking


def test_layout_is_remembered(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> None:
    configure(data_dir, fake_openai)
    sizes = leave_a_layout(qtbot, data_dir)
    second = MainWindow(Workspace.open(data_dir))
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert "geometry" in second.workspace.settings.ui_state
    assert second.size().height() == 640  # the offscreen screen is too narrow to check width
    assert not second.sidebar.isVisible()  # 800 px wide: the memory pane folds away
    second.resize(1100, 640)  # and comes back with room for it
    qtbot.waitUntil(lambda: second.splitter.sizes()[2] > 0)
    restored = second.splitter.sizes()
    assert (restored[0], restored[2]) == (sizes[0], sizes[2])  # the centre takes what is left
    second.close()


def test_first_run_shows_welcome_and_memory_still_browsable(qtbot: QtBot, data_dir: Path) -> None:
    workspace = Workspace.open(data_dir)
    workspace.memory.add("The user likes hiking")
    win = MainWindow(workspace)
    qtbot.addWidget(win)
    win.show()
    assert win.stack.currentWidget() is win.welcome
    assert "No model connected" in win.status.provider_label.text()
    assert win.sidebar.memories.model.rowCount() == 1
    win.close()


def test_a_long_conversation_opens_at_its_end_and_renders_earlier_turns_on_the_way_up(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    workspace = Workspace.open(data_dir)
    cid = workspace.conversations.create("Long").id
    for i in range(250):
        workspace.conversations.append(cid, "user", f"Question {i}: how about *this*?")
        workspace.conversations.append(cid, "assistant", f"## Answer {i}\n\n- a point\n- `code`")
    win = MainWindow(workspace)
    qtbot.addWidget(win)
    win.show()
    win.conversations.select(cid)  # `make bench` times this
    chat = win.chat
    bar = chat.verticalScrollBar()
    assert "Answer 249" in chat.toPlainText() and "Question 0" not in chat.toPlainText()
    assert bar.value() == bar.maximum() > 0

    def middle() -> tuple[str, int]:  # the line in the middle of the view, and where it is
        cursor = chat.cursorForPosition(chat.viewport().rect().center())
        return cursor.block().text(), chat.cursorRect(cursor).top()

    while chat.has_earlier():
        bar.setValue(0)
        seen = middle()
        qtbot.waitUntil(lambda: bar.value() > 0)  # earlier turns came above
        assert middle() == seen  # and what the user saw stayed in place
    text = chat.toPlainText()
    assert text.index("Question 0:") < text.index("Answer 0") < text.index("Answer 249")
    assert text.count("Answer 17\n") == 1 and text.count("Question 17:") == 1
    win.close()


def test_shift_enter_is_a_new_line_and_escape_stops(qtbot: QtBot, window: MainWindow) -> None:
    window.input.setPlainText("first line")
    window.input.moveCursor(window.input.textCursor().MoveOperation.End)
    qtbot.keyClick(window.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(window.input, "second line")
    assert window.input.toPlainText() == "first line\nsecond line"
    with qtbot.waitSignal(window.input.stop, timeout=1000):
        qtbot.keyClick(window.input, Qt.Key.Key_Escape)


@pytest.mark.parametrize(
    ("key", "modifier"),
    [
        (Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier),
        (Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier),
    ],
)
def test_enter_sends(
    qtbot: QtBot, window: MainWindow, key: Qt.Key, modifier: Qt.KeyboardModifier
) -> None:
    with qtbot.waitSignal(window.input.send, timeout=1000):
        qtbot.keyClick(window.input, key, modifier)


def test_memory_chip_shows_the_memory_in_the_sidebar(qtbot: QtBot, window: MainWindow) -> None:
    item = window.workspace.memory.add("The user's cat is called Miso")
    window.workspace.memory.add("Another memory")
    window.chat.memory_clicked.emit(item.id)
    current = window.sidebar.findChild(QWidget, "memoryList").currentIndex()  # type: ignore[union-attr]
    assert current.isValid()
    assert "Miso" in current.data()


def test_closing_during_a_reply_saves_the_partial_text(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    win = MainWindow(Workspace.open(data_dir))
    qtbot.addWidget(win)
    win.show()
    fake_openai.enqueue(Reply.text(" ".join(f"w{i}" for i in range(500)), chunk_delay=0.02))
    send(qtbot, win, "Tell me everything")
    qtbot.waitUntil(lambda: "w5" in win.chat.toPlainText(), timeout=10000)
    cid = win.conversations.current_id()
    win.close()
    assert not win.thread_.isRunning()
    assert cid is not None
    messages = Workspace.open(data_dir).conversations.load(cid).messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].content.startswith("w0 w1 w2")


# -- opening in two steps: the frame at once, the panes when the workspace is open ---------------


def test_frame_shows_first_then_panes_fill_with_the_data(qtbot: QtBot, data_dir: Path) -> None:
    workspace = Workspace.open(data_dir)
    cid = workspace.conversations.create("Trip planning").id
    workspace.conversations.append(cid, "user", "Where should we hike?")
    workspace.memory.add("The user likes hiking")
    workspace.close()
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_workspace(data_dir)
    win.show()
    assert not win.is_ready()
    assert not win.send_button.isEnabled() and not win.menu.settings.isEnabled()
    qtbot.keyClicks(win.input, "typed while loading")
    qtbot.keyClick(win.input, Qt.Key.Key_Return)  # nothing to send to yet: the text stays
    assert win.findChild(QWidget, "conversationList") is None
    with qtbot.waitSignal(win.ready, timeout=10000):
        pass
    assert win.is_ready()
    for name in OBJECT_NAMES:
        assert win.findChild(QWidget, name) is not None, name
    assert win.conversations.current_id() == cid
    assert "Where should we hike?" in win.chat.toPlainText()
    assert win.sidebar.memories.model.rowCount() == 1
    assert win.send_button.isEnabled() and win.menu.settings.isEnabled()
    assert win.input.toPlainText() == "typed while loading"
    assert not win.menu.new.shortcut().isEmpty()
    win.close()


def test_layout_is_restored_before_the_panes_arrive(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    sizes = leave_a_layout(qtbot, data_dir)
    second = MainWindow()
    qtbot.addWidget(second)
    second.open_workspace(data_dir)
    second.show()
    qtbot.waitExposed(second)
    assert second.size().height() == 640  # before the workspace is open
    with qtbot.waitSignal(second.ready, timeout=10000):
        pass
    second.resize(1100, 640)  # the 800 px offscreen screen folds the memory pane away
    qtbot.waitUntil(lambda: second.splitter.sizes()[2] > 0)
    restored = second.splitter.sizes()
    assert (restored[0], restored[2]) == (sizes[0], sizes[2])
    second.close()


@pytest.mark.usefixtures("slow_open")
@pytest.mark.parametrize("when", ["before the loader starts", "while it runs"])
def test_closing_while_opening_closes_the_workspace_once(
    qtbot: QtBot, data_dir: Path, closed_workspaces: list[Workspace], when: str
) -> None:
    closed = closed_workspaces
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_workspace(data_dir)
    win.show()
    if when == "while it runs":
        qtbot.waitUntil(win.is_opening)
    win.close()
    assert not win.isVisible()  # at once, even while the workspace is still opening
    qtbot.waitUntil(lambda: len(closed) == (1 if when == "while it runs" else 0))
    qtbot.waitUntil(lambda: not win.is_opening())
    qtbot.wait(50)  # the queued `opened` and `finished` are delivered, and change nothing
    assert not win.is_ready()
    assert len(closed) == (1 if when == "while it runs" else 0)


def test_a_data_dir_that_cannot_be_opened_is_reported(qtbot: QtBot, tmp_path: Path) -> None:
    (tmp_path / "memory").write_text("a file where the memory folder should be")
    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.open_failed, timeout=10000) as failed:
        win.open_workspace(tmp_path)
        win.show()
    assert "memory" in failed.args[0]
    assert "Could not open your data" in win.statusBar().currentMessage()
    assert not win.is_ready()
    win.close()


def test_the_frame_imports_neither_numpy_nor_the_stores() -> None:
    code = (
        "import sys\n"
        "from assistant.ui.app import MainWindow, _application\n"
        "app = _application()\n"
        "window = MainWindow()\n"
        "window.show(); app.processEvents()\n"
        "slow = ('numpy', 'keyring', 'openai', 'assistant.workspace', 'assistant.memory',\n"
        "        'assistant.ui.memory.sidebar')\n"
        "heavy = [m for m in slow if m in sys.modules]\n"
        "print(heavy)\n"
        "sys.exit(1 if heavy else 0)\n"
    )
    result = child.python("-c", code, env=child.environment(QT_QPA_PLATFORM="offscreen"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_failure_while_building_the_panes_is_reported(
    qtbot: QtBot,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    closed_workspaces: list[Workspace],
) -> None:
    def broken(self: MainWindow) -> None:
        raise RuntimeError("the conversation list is broken")

    monkeypatch.setattr(MainWindow, "_open_first", broken)
    win = MainWindow()
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.open_failed, timeout=10000) as failed:
        win.open_workspace(data_dir)
        win.show()
    assert failed.args == ["the conversation list is broken"]
    assert not win.is_ready()
    assert len(closed_workspaces) == 1
    assert not win.thread_.isRunning()
    win.close()  # nothing left to stop or close
    assert len(closed_workspaces) == 1


@pytest.mark.usefixtures("slow_open")
def test_a_failure_after_the_window_closed_is_not_reported(qtbot: QtBot, tmp_path: Path) -> None:
    (tmp_path / "memory").write_text("a file where the memory folder should be")
    win = MainWindow()
    qtbot.addWidget(win)
    reported: list[str] = []
    win.open_failed.connect(reported.append)
    win.open_workspace(tmp_path)
    win.show()
    qtbot.waitUntil(win.is_opening)
    win.close()
    qtbot.waitUntil(lambda: not win.is_opening())
    qtbot.wait(50)
    assert reported == []


def test_a_corrupt_settings_file_is_reported_by_the_two_step_start(
    qtbot: QtBot, data_dir: Path
) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    settings_file(data_dir).write_text("{ not json")
    win = MainWindow()
    qtbot.addWidget(win)
    win.open_workspace(data_dir)  # reads the layout without moving the file aside
    assert settings_file(data_dir).exists()
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    assert win.start_problems is not None
    assert "The settings file could not be read" in win.start_problems.label.text()
    win.close()


def test_a_server_that_cannot_stream_tools_answers_and_says_so(
    qtbot: QtBot, data_dir: Path
) -> None:
    with FakeOpenAI(stream_tool_choice=False) as server:
        configure(data_dir, server, embeddings=False)
        win = shown_window(qtbot, data_dir)
        server.enqueue(Reply.text("Whole, but here."))
        send(qtbot, win, "Hello")
        qtbot.waitUntil(lambda: "Whole, but here." in win.chat.toPlainText(), timeout=10000)
        wait_idle(qtbot, win)
        assert STREAM_TOOLS_NOTICE in win.statusBar().currentMessage()
        win.close()


def test_memory_upkeep_never_holds_the_conversation(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False, auto_memories=True)
    win = MainWindow(Workspace.open(data_dir))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    curating, release = threading.Event(), threading.Event()

    def slow_extraction(_request: object) -> Reply:
        curating.set()
        release.wait(30)
        return Reply.text('{"memories": []}')

    fake_openai.enqueue(Reply.text("First answer."), slow_extraction, Reply.text("Second answer."))
    try:
        send(qtbot, win, "one")
        qtbot.waitUntil(lambda: curating.is_set() and win.send_button.isEnabled(), timeout=10000)
        assert not win.stop_button.isEnabled()
        assert win.status.upkeep_label.isVisible()
        assert win.status.upkeep_label.text() == "Updating memory…"
        send(qtbot, win, "two")
        qtbot.waitUntil(lambda: "Second answer." in win.chat.toPlainText(), timeout=10000)
        wait_idle(qtbot, win)
        assert not release.is_set()  # answered while the curator still worked on the first
    finally:
        release.set()
    qtbot.waitUntil(lambda: not win.status.upkeep_label.isVisible(), timeout=10000)
    win.close()


def test_a_heading_renders_while_streaming_and_a_stop_mark_is_kept(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    words = " ".join(f"w{i}" for i in range(400))
    fake_openai.enqueue(Reply.text(f"## Plan\n\nSome **bold** words {words}", chunk_delay=0.02))
    send(qtbot, window, "Plan something")

    def heading_shown() -> bool:
        block = window.chat.document().begin()
        while block.isValid():
            if block.text() == "Plan" and block.blockFormat().headingLevel() == 2:
                return True
            block = block.next()
        return False

    qtbot.waitUntil(heading_shown, timeout=10000)
    qtbot.waitUntil(lambda: "Some bold words w0 w1" in window.chat.toPlainText(), timeout=10000)
    assert window.stop_button.isEnabled()  # the reply has not ended
    window.stop()
    wait_idle(qtbot, window)
    cid = window.conversations.current_id()
    assert cid is not None
    window.chat.show_conversation(window.workspace.conversations.load(cid))
    assert "■ Stopped." in window.chat.toPlainText()


def test_regenerate_adds_a_sibling_and_the_pager_switches(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply.text("First take."), Reply.text("Second take."))
    send(qtbot, window, "Tell me a joke")
    wait_idle(qtbot, window)
    cid = window.conversations.current_id()
    assert cid is not None
    user = window.workspace.conversations.load(cid).messages[0]
    window.chat.regenerate_requested.emit(user.id)
    qtbot.waitUntil(lambda: "Second take." in window.chat.toPlainText(), timeout=10000)
    wait_idle(qtbot, window)
    conversation = window.workspace.conversations.load(cid)
    replies = conversation.versions()[conversation.branch()[-1].id]
    assert [r.content for r in replies] == ["First take.", "Second take."]
    assert "< 2/2 >" in window.chat.toPlainText()
    window.chat.branch_requested.emit(replies[0].id)
    assert "First take." in window.chat.toPlainText()
    assert "Second take." not in window.chat.toPlainText()


def test_edit_and_resend_keeps_both_branches_through_export_and_import(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    from assistant.transfer import apply_import, export_data, parse_import

    fake_openai.enqueue(Reply.text("Lisbon is lovely."), Reply.text("Porto is lovely."))
    send(qtbot, window, "Tell me about Lisbon")
    wait_idle(qtbot, window)
    cid = window.conversations.current_id()
    assert cid is not None
    first = window.workspace.conversations.load(cid).messages[0]
    window.chat.edit_requested.emit(first.id, first.content)
    assert window.composer.editing == first.id
    assert window.input.toPlainText() == "Tell me about Lisbon"
    send(qtbot, window, "Tell me about Porto")
    qtbot.waitUntil(lambda: "Porto is lovely." in window.chat.toPlainText(), timeout=10000)
    wait_idle(qtbot, window)
    assert window.composer.editing is None
    conversation = window.workspace.conversations.load(cid)
    assert [m.content for m in conversation.branch()] == [
        "Tell me about Porto",
        "Porto is lovely.",
    ]
    assert "Lisbon is lovely." not in window.chat.toPlainText()
    assert "You   < 2/2 >" in window.chat.toPlainText()

    data = export_data(window.workspace, [cid], include_memories=False)
    other = Workspace.open(tmp_path / "other")
    try:
        apply_import(parse_import(json.dumps(data)), other, "skip")
        (imported,) = other.conversations.all()
        copy = other.conversations.load(imported.id)
        assert sorted(m.content for m in copy.messages) == sorted(
            m.content for m in conversation.messages
        )
        assert {m.id: m.parent_id for m in copy.messages} == {
            m.id: m.parent_id for m in conversation.messages
        }
    finally:
        other.close()


def test_a_temporary_chat_is_deleted_when_left_and_new_reuses_empty(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    store = window.workspace.conversations
    empty = window.new_conversation()
    assert window.new_conversation() == empty
    temporary = window.new_conversation(temporary=True)
    qtbot.waitUntil(lambda: empty not in {c.id for c in store.all()})  # left empty: not kept
    assert window.temporary_banner.isVisible()
    assert "deleted when you leave it" in window.temporary_banner.text()
    fake_openai.enqueue(Reply.text("Not remembered."))
    send(qtbot, window, "a secret")
    wait_idle(qtbot, window)
    path = store.directory / f"{temporary}.jsonl"
    assert path.exists()
    window.new_conversation()
    assert not window.temporary_banner.isVisible()
    qtbot.waitUntil(lambda: not path.exists())  # deleted by the worker


def test_a_chat_imported_as_do_not_remember_says_so_in_a_banner(
    qtbot: QtBot, window: MainWindow
) -> None:
    store = window.workspace.conversations
    store.import_conversation("secret", "Private", "2026-01-01T00:00:00Z", [], do_not_remember=True)
    ordinary = store.create().id
    window.conversations.refresh()
    window.conversations.select("secret")
    banner = window.temporary_banner
    qtbot.waitUntil(banner.isVisible)
    assert banner.text() == ("Imported as do-not-remember: Assistant learns nothing from this chat")
    assert "still uses what it already remembers" in banner.toolTip()
    window.conversations.select(ordinary)
    qtbot.waitUntil(lambda: not banner.isVisible())
    window.new_conversation(temporary=True)
    qtbot.waitUntil(banner.isVisible)
    assert "deleted when you leave it" in banner.text()


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768)])
def test_the_temporary_chats_banner_is_one_line_in_a_row_of_its_own(
    qtbot: QtBot, window: MainWindow, size: tuple[int, int]
) -> None:
    window.resize(*size)
    toolbar = window.chat_pane.model_bar.height()
    window.new_conversation(temporary=True)
    banner = window.temporary_banner
    qtbot.waitUntil(banner.isVisible)
    qtbot.waitUntil(lambda: banner.height() < 2 * banner.fontMetrics().lineSpacing() + 12)
    assert window.chat_pane.model_bar.height() == toolbar  # the toolbar does not grow
    chat = window.chat_pane.stack
    assert banner.width() >= chat.width() - 2  # as wide as the chat, under the toolbar
    top = banner.mapTo(window, banner.rect().topLeft()).y()
    assert (
        window.chat_pane.model_bar.mapTo(window, window.chat_pane.model_bar.rect().bottomLeft()).y()
        < top
    )
    assert top + banner.height() <= chat.mapTo(window, chat.rect().topLeft()).y()
    assert "This chat does not use or add to your long-term memory" in banner.toolTip()


def other_conversation(window: MainWindow) -> str:
    """A second conversation in the list, to leave the current one for."""
    store = window.workspace.conversations
    other = store.create("Other").id
    store.append(other, "user", "old question")
    window.conversations.refresh()
    return other


def test_leaving_and_coming_back_during_a_reply_shows_it_whole(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    other = other_conversation(window)
    words = " ".join(f"w{i}" for i in range(60))
    fake_openai.enqueue(Reply.text(words, chunk_delay=0.02))
    send(qtbot, window, "Long one")
    cid = window.conversations.current_id()
    assert cid is not None
    qtbot.waitUntil(lambda: "w3" in window.chat.toPlainText(), timeout=10000)
    window.conversations.select(other)
    assert "old question" in window.chat.toPlainText()
    window.conversations.select(cid)
    wait_idle(qtbot, window)
    text = window.chat.toPlainText()
    assert text.count("w0 w1") == 1 and "w59" in text
    assert text.count("Assistant") == 1


class _Heard(QObject):
    """The texts of the agent's events, as the GUI thread receives them."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.texts: list[str] = []

    @Slot(object)
    def hear(self, event: object) -> None:
        self.texts.append(getattr(event, "text", ""))


def test_coming_back_mid_reply_shows_what_was_streamed_and_streams_on(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    other = other_conversation(window)
    item = window.workspace.memory.add("The user plays the cello")
    first = " ".join(f"a{i}" for i in range(40))
    words = " ".join(f"w{i}" for i in range(2000))  # 40 s: it is stopped long before
    fake_openai.enqueue(
        Reply.tool_calls(
            ToolCall("forget", json.dumps({"memory_id": item.id})), content=first, chunk_delay=0.02
        ),
        Reply.text(f"Forgotten. {words}", chunk_delay=0.02),
    )
    send(qtbot, window, "Long one")
    cid = window.conversations.current_id()
    assert cid is not None
    qtbot.waitUntil(lambda: "a3" in window.chat.toPlainText(), timeout=10000)
    window.conversations.select(other)
    away = _Heard(window)  # queued to the GUI thread: it hears each event after the window
    window.worker.agent_event.connect(away.hear)
    qtbot.waitUntil(lambda: "w20" in "".join(away.texts), timeout=10000)  # the tool ran meanwhile
    window.conversations.select(cid)
    text = window.chat.toPlainText()
    assert window.stop_button.isEnabled()  # the reply goes on
    assert f"{first}\n▸ Forgot" in text and "Forgotten. w0 w1 w2" in text and "w20" in text
    assert text.count("▸") == 1 and text.count("Assistant") == 1 and text.count("Long one") == 1
    line = "↺ Forgot “The user plays the cello” · Undo"
    assert text.endswith(line)  # the change made while the user was away
    shown = len(text)
    qtbot.waitUntil(lambda: len(window.chat.toPlainText()) > shown, timeout=10000)
    window.stop()
    wait_idle(qtbot, window)
    text = window.chat.toPlainText()
    assert text.count("a0 a1") == 1 and text.count("▸") == 1 and "Stopped." in text
    assert text.count(line) == 1


def test_a_memory_line_shows_under_the_reply_while_it_streams(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    item = window.workspace.memory.add("The user plays the cello")
    words = " ".join(f"w{i}" for i in range(2000))
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("forget", json.dumps({"memory_id": item.id}))),
        Reply.text(f"Forgotten. {words}", chunk_delay=0.02),
    )
    send(qtbot, window, "Forget that I play the cello")
    line = "↺ Forgot “The user plays the cello” · Undo"
    qtbot.waitUntil(lambda: line in window.chat.toPlainText(), timeout=10000)
    assert window.stop_button.isEnabled()  # shown while the reply is being written
    qtbot.waitUntil(lambda: "w10" in window.chat.toPlainText(), timeout=10000)
    text = window.chat.toPlainText()
    assert text.endswith(line)  # the reply streams on above it
    assert text.index("Forgotten. w0") < text.index("w10") < text.index(line)
    window.stop()
    wait_idle(qtbot, window)
    text = window.chat.toPlainText()
    assert text.count(line) == 1 and text.index("Stopped.") < text.index(line)


def test_the_actions_of_a_just_sent_message_reach_the_saved_message(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply.text("Sure."))
    send(qtbot, window, "Edit me later")
    wait_idle(qtbot, window)
    cid = window.conversations.current_id()
    assert cid is not None
    saved = window.workspace.conversations.load(cid).messages[0]
    edit_link = next(h for h in anchors(window.chat) if h.startswith("edit:"))
    with qtbot.waitSignal(window.chat.edit_requested) as asked:
        window.chat.anchorClicked.emit(QUrl(edit_link))
    assert asked.args == [saved.id, "Edit me later"]
    assert window.composer.editing == saved.id


def test_a_fresh_memory_with_an_embedder_does_not_say_keyword_only(
    qtbot: QtBot, window: MainWindow
) -> None:
    label = window.status.memory_label
    qtbot.waitUntil(lambda: bool(label.text()))
    assert label.text() == "0 memories"
    assert "Search by meaning is on (embed-model)" in label.toolTip()
