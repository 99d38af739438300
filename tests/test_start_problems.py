"""Damage found on disk at start is said in a notice over the chat: each problem in words, the
file kept aside named, the parser's message only as detail; it stays until dismissed."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.memory.memory_log import LOG_NAME
from assistant.memory.semantic import SemanticMemory
from assistant.paths import memory_dir, settings_file
from tests.desktop import shown_window


def damage(data_dir: Path) -> None:
    """An invalid settings.json, a memory log with a cut end, a conversation with a bad line."""
    store = ConversationStore(data_dir)
    cid = store.create("Tea talk").id
    store.append(cid, "user", "remember that I prefer green tea")
    store.append(cid, "assistant", "Noted.")
    path = store.directory / f"{cid}.jsonl"
    *lines, last = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines) + b"garbage\n" + last)
    mem = SemanticMemory.open(memory_dir(data_dir))
    mem.add("The user prefers green tea.")
    mem.close()
    log_path = memory_dir(data_dir) / LOG_NAME
    log_path.write_bytes(log_path.read_bytes() + b"garbage\n" + b'{"version":1,"op":"put","ite')
    for cache in memory_dir(data_dir).glob("*cache*"):
        cache.unlink()
    settings_file(data_dir).write_text("{ not json", encoding="utf-8")


def test_every_problem_found_at_start_is_listed_until_dismissed(
    qtbot: QtBot, data_dir: Path
) -> None:
    damage(data_dir)
    win = shown_window(qtbot, data_dir)
    notice = win.start_problems
    assert notice is not None and notice.isVisible()
    text = notice.label.text()
    assert "3 problems found" in text, text
    assert "The settings file could not be read; defaults are used" in text
    [kept] = data_dir.glob("settings.json.corrupt-*")
    assert kept.name in text
    assert "Tea talk" in text and "skipped 1 unreadable line" in text
    assert f"{LOG_NAME}: skipped 1 unreadable line" in text
    headlines = text.split("<small>")[0]
    assert "Expecting" not in headlines  # the parser's message is only a detail
    assert "<small>Detail: Expecting" in text
    assert str(data_dir) in text
    assert "⚠" not in win.statusBar().currentMessage()
    qtbot.wait(50)
    QApplication.processEvents()
    assert notice.isVisible()  # no timer hides it
    # Reached with the keyboard: Tab goes through the text and its ✕.
    assert notice.label.focusPolicy() & Qt.FocusPolicy.TabFocus
    close = notice.findChild(type(notice.action_button), "memoryNoticeClose")
    assert close is not None and close.focusPolicy() & Qt.FocusPolicy.TabFocus
    close.setFocus()
    qtbot.keyClick(close, Qt.Key.Key_Space)
    assert not notice.isVisible()
    win.close()


def test_a_clean_start_shows_no_notice(qtbot: QtBot, data_dir: Path) -> None:
    win = shown_window(qtbot, data_dir)
    assert win.start_problems is None
    win.close()
