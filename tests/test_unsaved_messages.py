"""What the user sent is never lost: a message the disk refused goes back into the message box,
a failed reply's reason is kept in the conversation file, and a draft the disk refused is said
only when typed text is at risk."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.drafts import write_drafts
from assistant.errors import StorageError
from assistant.memory import jsonl
from assistant.ui.chat import drafts as drafts_ui
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui

TOO_MUCH = "this one cannot be saved " * 240  # a long message, as the disk fills up


def refuse_message(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """The disk is full when a record with `text` in it is written (what it held is cut back)."""
    write_all = jsonl._write_all
    marker = text.encode()

    def full(fd: int, data: bytes) -> None:
        if marker in data:
            write_all(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        write_all(fd, data)

    monkeypatch.setattr(jsonl, "_write_all", full)


def test_a_message_the_disk_refuses_goes_back_into_the_box(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    fake_openai.enqueue(Reply.text("Saved and answered."))
    send(qtbot, win, "An earlier message")
    wait_idle(qtbot, win)
    refuse_message(monkeypatch, "this one cannot be saved")
    send(qtbot, win, TOO_MUCH)
    wait_idle(qtbot, win)
    assert win.input.toPlainText() == TOO_MUCH.strip()  # nothing typed is lost
    shown = win.chat.toPlainText()
    assert "Not sent:" in shown and "the disk is full" in shown
    assert "this one cannot be saved" not in shown  # not shown as sent
    cid = win.session.conversation_id
    assert cid is not None
    saved = win.workspace.conversations.load(cid).messages
    assert [m.content for m in saved] == ["An earlier message", "Saved and answered."]
    assert "retry:" not in win.chat.toHtml()  # Retry would answer another message
    monkeypatch.undo()  # space freed: Send again sends it
    fake_openai.enqueue(Reply.text("Got the long one."))
    send(qtbot, win, win.input.toPlainText())
    wait_idle(qtbot, win)
    saved = win.workspace.conversations.load(cid).messages
    assert [m.content for m in saved][-2:] == [TOO_MUCH.strip(), "Got the long one."]
    assert win.input.toPlainText() == ""
    win.close()


def test_a_failed_reply_keeps_its_reason_and_retry_after_a_restart(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    fake_openai.enqueue(Reply.error(400, "Bad thing from server"))
    send(qtbot, win, "Refused question")
    wait_idle(qtbot, win)
    fake_openai.enqueue(Reply.text("Answered later."))
    send(qtbot, win, "Next question")
    wait_idle(qtbot, win)
    line = next(x for x in win.chat.toPlainText().splitlines() if x.startswith("⚠"))
    assert "Bad thing from server" in line
    cid = win.session.conversation_id
    assert cid is not None
    win.close()

    again = shown_window(qtbot, data_dir)
    again.conversations.select(cid)
    first = again.workspace.conversations.load(cid).messages[0]
    assert line in again.chat.toPlainText().splitlines()
    assert f"retry:{first.id}" in again.chat.toHtml()
    again.close()


def test_a_draft_write_the_disk_refuses_alarms_only_for_typed_text(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sending clears the message's draft: if that write fails, the message is saved anyway,
    so nothing is said; a draft of typed text that cannot be written is said."""
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    fake_openai.enqueue(Reply.text("Hello."))
    send(qtbot, win, "Start")
    wait_idle(qtbot, win)
    win.input.setPlainText("typed, then sent")
    written: list[dict[str, str]] = []
    real = write_drafts

    def spy(path: Path, drafts: dict[str, str]) -> None:
        real(path, drafts)
        written.append(drafts)

    monkeypatch.setattr(drafts_ui, "write_drafts", spy)
    qtbot.waitUntil(lambda: bool(written), timeout=10000)
    tries: list[dict[str, str]] = []

    def full(path: Path, drafts: dict[str, str]) -> None:
        tries.append(drafts)
        raise StorageError(f"Could not write {path}: the disk is full.")

    monkeypatch.setattr(drafts_ui, "write_drafts", full)
    notices: list[str] = []
    win.drafts.notice.connect(notices.append)
    fake_openai.enqueue(Reply.text("Got it."))
    send(qtbot, win, "typed, then sent")
    wait_idle(qtbot, win)
    qtbot.waitUntil(lambda: bool(tries) and not win.drafts._saving, timeout=10000)
    assert notices == []  # the message is saved: only its draft was to go
    win.input.setPlainText("typed and kept")
    qtbot.waitUntil(lambda: bool(notices), timeout=10000)
    assert notices[0].startswith("Your unsent message was not saved")
    monkeypatch.undo()
    win.close()
