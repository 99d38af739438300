"""The chat session through the real window: it holds the conversation on screen, so a turn
reads no conversation file and writes nothing on the GUI thread; one agent lasts across turns."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QUrl
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from assistant import failpoints
from assistant.memory import ConversationStore, conversation_file
from assistant.paths import drafts_file
from assistant.ui.conversations.list_edit import ListEdit
from assistant.ui.conversations.model import PinnedRole, ProjectRole
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_chat_view import anchors
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


class ThreadCounts:
    """How often a function ran, on the GUI thread and on others."""

    def __init__(self) -> None:
        self.gui = 0
        self.other = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is threading.main_thread():
                self.gui += 1
            else:
                self.other += 1
            return fn(*args, **kwargs)

        return counted


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> ThreadCounts:
    """Counts the reads of a conversation file (whole, as `ConversationStore.load` does)."""
    counts = ThreadCounts()
    read = conversation_file.read_conversation
    monkeypatch.setattr(conversation_file, "read_conversation", counts.wrap(read))
    return counts


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> ThreadCounts:
    """Counts every fsync of the process (appends, snapshots, their directories)."""
    counts = ThreadCounts()
    monkeypatch.setattr(os, "fsync", counts.wrap(os.fsync))
    return counts


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> ThreadCounts:
    """Counts the readings of the conversation listing (which may save its cache, fsynced)."""
    counts = ThreadCounts()
    monkeypatch.setattr(ConversationStore, "all", counts.wrap(ConversationStore.all))
    return counts


def reset(*counts: ThreadCounts) -> None:
    for c in counts:
        c.gui = c.other = 0


def click(window: MainWindow, href: str) -> None:
    window.chat.anchorClicked.emit(QUrl(href))


def test_a_turn_reads_no_conversation_file_and_writes_nothing_on_the_gui_thread(
    qtbot: QtBot,
    window: MainWindow,
    fake_openai: FakeOpenAI,
    parses: ThreadCounts,
    fsyncs: ThreadCounts,
) -> None:
    qtbot.waitUntil(lambda: not window.conversations.refreshing)
    reset(parses, fsyncs)
    made_or_deleted: list[str] = []  # as the window hears of the files
    window.bridge.conversation_written.connect(
        lambda w: made_or_deleted.append(w.conversation_id) if w.record is None else None
    )
    temporary = window.new_conversation(temporary=True)  # left at once: made, then deleted
    new = window.new_conversation()  # shown and listed at once, its file made by the worker
    assert window.session.conversation_id == new == window.conversations.current_id()
    qtbot.waitUntil(lambda: made_or_deleted.count(temporary) == 2 and new in made_or_deleted)
    store = window.workspace.conversations
    assert store.exists(new) and not store.exists(temporary)
    remember = {"text": "The user's favourite colour is teal", "kind": "preference"}
    fake_openai.enqueue(
        Reply.tool_calls(
            ToolCall("remember", json.dumps(remember)),
            ToolCall("calculator", json.dumps({"expression": "2**10"})),
        ),
        Reply.text("Noted, and 2**10 is 1024."),
    )
    send(qtbot, window, "My favourite colour is teal; and what is 2**10?")
    wait_idle(qtbot, window)
    fake_openai.enqueue(Reply.text("Teal."))
    send(qtbot, window, "What is my favourite colour?")
    wait_idle(qtbot, window)
    assert "Memories used:" in window.chat.toPlainText()
    fake_openai.enqueue(Reply.text("Teal, still."))
    click(window, next(h for h in anchors(window.chat) if h.startswith("regenerate:")))
    wait_idle(qtbot, window)
    click(window, next(h for h in anchors(window.chat) if h.startswith("branch:")))
    assert "Teal.\n" in window.chat.toPlainText() + "\n"
    fake_openai.enqueue(Reply.text("Blue, then."))
    edit = next(h for h in anchors(window.chat) if h.startswith("edit:"))
    click(window, edit)
    send(qtbot, window, "Say blue")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not window.conversations.refreshing)
    print(f"GUI thread: {parses.gui} parses, {fsyncs.gui} fsyncs; others: {fsyncs.other} fsyncs")
    assert parses.gui == 0
    assert fsyncs.gui == 0
    assert fsyncs.other > 0  # the writes happened, elsewhere
    cid = window.session.conversation_id
    assert cid == new
    saved = window.workspace.conversations.load(cid)
    assert saved.branch() == window.session.conversation.branch()  # type: ignore[union-attr]
    assert saved.title == "My favourite colour is teal; and what…"


def test_the_lists_edits_show_at_once_and_read_or_write_nothing_on_the_gui_thread(
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    window: MainWindow,
    parses: ThreadCounts,
    fsyncs: ThreadCounts,
    listings: ThreadCounts,
) -> None:
    """Rename, pin, unpin, move to a project, delete and archive: the row changes at once, the
    worker writes, the listing is read again off the GUI thread."""
    store, pane = window.workspace.conversations, window.conversations
    first, second = (store.create(title).id for title in ("First", "Second"))
    for cid in (first, second):
        store.append(cid, "user", "hello")
    novel = window.workspace.projects.create("Novel").id
    qtbot.waitUntil(lambda: pane.model.row_of(second) >= 0 and not pane.refreshing)
    pane.select(first)  # read once, as any conversation opened
    monkeypatch.setattr(pane, "ask_title", lambda _title: "Renamed")
    monkeypatch.setattr(pane, "ask_project", lambda _current: novel)
    monkeypatch.setattr(pane, "confirm_delete", lambda _titles: True)
    answers: list[bool] = []  # whether each edit was written, as the list hears it
    end_edit = pane.model.end_edit

    def ended(edit: ListEdit, written: bool) -> None:
        answers.append(written)
        end_edit(edit, written)

    monkeypatch.setattr(pane.model, "end_edit", ended)

    def row(cid: str) -> QModelIndex:
        return pane.model.index(pane.model.row_of(cid))

    def on_gui_thread(action: Callable[[], None], shown: Callable[[], bool]) -> list[int]:
        """The parses, fsyncs and listings of the GUI thread for `action`, once written and
        listed again; `shown()` holds as soon as it is asked."""
        reset(parses, fsyncs, listings)
        asked = len(answers)
        action()
        assert shown()
        qtbot.waitUntil(lambda: len(answers) > asked and not pane.refreshing)
        assert shown()
        return [parses.gui, fsyncs.gui, listings.gui]

    def delete_second() -> None:
        index = pane.view.model().index(pane.model.row_of(second), 0)
        pane.view.selectionModel().select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        pane.delete_current()  # the selected one, not the current one

    done = [
        on_gui_thread(pane.rename_current, lambda: row(first).data() == "Renamed"),
        on_gui_thread(pane.toggle_pinned, lambda: row(first).data(PinnedRole) is True),
        on_gui_thread(pane.toggle_pinned, lambda: row(first).data(PinnedRole) is False),
        on_gui_thread(pane.move_current, lambda: row(first).data(ProjectRole) == novel),
        on_gui_thread(
            delete_second,
            lambda: pane.model.row_of(second) < 0 and window.session.conversation_id == first,
        ),
        on_gui_thread(pane.toggle_archived, lambda: pane.model.row_of(first) < 0),
    ]
    print(f"GUI thread (parses, fsyncs, listings) per edit: {done}; others: {listings.other}")
    assert done == [[0, 0, 0]] * 6
    assert answers == [True] * 6
    assert listings.other > 0 and fsyncs.other > 0
    saved = store.load(first)
    assert (saved.title, saved.pinned, saved.archived, saved.project) == (
        "Renamed",
        False,
        True,
        novel,
    )
    assert not store.exists(second)
    # Shown through every edit but the last: archived, it left the list and the chat (as Delete).
    assert window.session.conversation_id is None


def test_a_list_edit_the_disk_refuses_is_undone_in_the_list_and_said(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, window: MainWindow
) -> None:
    store, pane = window.workspace.conversations, window.conversations
    cid = store.create("Kept").id
    store.append(cid, "user", "hello")
    qtbot.waitUntil(lambda: pane.model.row_of(cid) >= 0 and not pane.refreshing)
    pane.select(cid)
    monkeypatch.setattr(pane, "confirm_delete", lambda _titles: True)
    monkeypatch.setattr(failpoints, "_ARMED", failpoints.parse("fail:conversation.delete"))
    pane.delete_current()
    assert pane.model.row_of(cid) < 0  # at once
    qtbot.waitUntil(lambda: pane.model.row_of(cid) >= 0)  # back when the worker could not
    assert "Could not delete the conversation:" in pane.search_note.text()
    assert "Input/output error" in pane.search_note.text() and store.exists(cid)


def test_a_new_chat_whose_file_cannot_be_made_leaves_the_list_and_keeps_its_message(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, window: MainWindow
) -> None:
    store, pane = window.workspace.conversations, window.conversations
    before = store.create("Before").id
    store.append(before, "user", "hello")
    qtbot.waitUntil(lambda: pane.model.row_of(before) >= 0 and not pane.refreshing)
    pane.select(before)
    notices: list[str] = []
    window.statusBar().messageChanged.connect(notices.append)
    failing = failpoints.parse("fail:conversation.create.write")
    monkeypatch.setattr(failpoints, "_ARMED", failing)
    lost = window.new_conversation()
    # Sent at once: the GUI thread hears that the file could not be made only after this.
    send(qtbot, window, "A message that must not be lost")
    qtbot.waitUntil(lambda: pane.model.row_of(lost) < 0)
    wait_idle(qtbot, window)  # the turn asked in it could not start without its file
    assert failing is not None and failing.seen["conversation.create.write"] == 1
    assert not store.exists(lost)
    assert pane.current_id() == before == window.session.conversation_id
    said = next(n for n in notices if "The new chat could not be saved:" in n)
    assert "input/output error" in said and "What you wrote in it is kept" in said
    again = window.new_conversation()  # the disk takes it this time
    assert window.input.toPlainText() == "A message that must not be lost"
    qtbot.waitUntil(lambda: store.exists(again))


def test_a_temporary_chat_that_cannot_be_made_leaves_its_message_on_the_clipboard_only(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, window: MainWindow
) -> None:
    """A temporary chat's text is never saved, a draft neither: it waits on the clipboard."""
    notices: list[str] = []
    window.statusBar().messageChanged.connect(notices.append)
    monkeypatch.setattr(failpoints, "_ARMED", failpoints.parse("fail:conversation.create.write"))
    lost = window.new_conversation(temporary=True)
    send(qtbot, window, "A secret that must not be lost")
    qtbot.waitUntil(lambda: window.conversations.model.row_of(lost) < 0)
    wait_idle(qtbot, window)
    assert QGuiApplication.clipboard().text() == "A secret that must not be lost"
    assert any("What you wrote in it is on the clipboard" in n for n in notices)
    window.drafts.save_now()
    saved = drafts_file(window.workspace.root)
    assert not saved.exists() or "secret" not in saved.read_text(encoding="utf-8")
    window.new_conversation()
    assert window.input.toPlainText() == ""


def test_expanding_a_tool_line_reads_nothing_and_draws_only_that_line(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI, parses: ThreadCounts
) -> None:
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("calculator", json.dumps({"expression": "6*7"}))),
        Reply.text("It is 42."),
    )
    send(qtbot, window, "What is 6*7?")
    wait_idle(qtbot, window)
    fake_openai.enqueue(Reply.text("You are welcome."))
    send(qtbot, window, "Thanks")
    wait_idle(qtbot, window)
    before = window.chat.toPlainText()
    thanks = window.session.conversation.branch()[-2].id  # type: ignore[union-attr]
    assert window.chat.scroll_to_message(thanks)
    selected = window.chat.textCursor().selectedText()
    reset(parses)
    drawn: list[str] = []
    window.chat.rendered.connect(drawn.append)
    click(window, next(h for h in anchors(window.chat) if h.startswith("tool:")))
    expanded = window.chat.toPlainText()
    assert 'arguments: {\n  "expression": "6*7"\n}\nresult: 42' in expanded
    assert expanded.replace(expanded[expanded.index("▾") : expanded.index("It is 42.")], "") == (
        before.replace(before[before.index("▸") : before.index("It is 42.")], "")
    )
    assert window.chat.scroll_to_message(thanks)
    assert window.chat.textCursor().selectedText() == selected  # the positions moved along
    click(window, next(h for h in anchors(window.chat) if h.startswith("tool:")))
    assert window.chat.toPlainText() == before
    assert drawn == [] and parses.gui == 0


def test_the_users_answer_about_a_pinned_memory_reaches_the_next_turn(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    """The agent lasts from turn to turn: what it asked in one, the next message answers."""
    pinned = window.workspace.memory.add("The user lives in Lyon", pinned=True)
    forget = ToolCall("forget", json.dumps({"memory_id": pinned.id}))
    fake_openai.enqueue(Reply.tool_calls(forget), Reply.text("It is pinned: shall I forget it?"))
    send(qtbot, window, "Forget where I live")
    wait_idle(qtbot, window)
    assert window.workspace.memory.get(pinned.id).state == "active"  # type: ignore[union-attr]
    fake_openai.enqueue(Reply.tool_calls(forget), Reply.text("Forgotten."))
    send(qtbot, window, "Yes, forget it")
    wait_idle(qtbot, window)
    assert window.workspace.memory.get(pinned.id).state == "forgotten"  # type: ignore[union-attr]
    assert "↺ Forgot “The user lives in Lyon” · Undo" in window.chat.toPlainText()


def test_new_settings_make_a_new_agent(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue(Reply.text("One."), Reply.text("Two."), Reply.text("Three."))
    send(qtbot, window, "first")
    wait_idle(qtbot, window)
    send(qtbot, window, "second")
    wait_idle(qtbot, window)
    window.workspace.settings.chat_model = "another-model"
    window.workspace.save_settings()
    send(qtbot, window, "third")
    wait_idle(qtbot, window)
    models = Counter(r.body["model"] for r in fake_openai.requests_to("/chat/completions"))
    assert models == {"chat-model": 2, "another-model": 1}
    assert "Three." in window.chat.toPlainText()
