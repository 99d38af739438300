""" "Remember this" on a place a reply read and on an attached file: the memory dialog comes
filled with the passage and its source, and the memory names the file and the conversation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu, QPushButton
from pytestqt.qtbot import QtBot

from assistant.knowledge import Citation, Place
from assistant.knowledge.excerpts import passage_at
from assistant.ui.knowledge.opening import FilePreview
from assistant.ui.memory.dialogs import MemoryDialog, MemoryValues
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI
from tests.files import make_pdf
from tests.test_keyboard_focus import link_point

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    configure(data_dir, fake_openai, embeddings=False)
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[MemoryValues]:
    """The memory dialog, answered at once with what it was filled with."""
    seen: list[MemoryValues] = []

    def ask(_parent: Any, _item: Any = None, *, start: MemoryValues | None = None) -> Any:
        assert start is not None
        seen.append(start)
        return start

    monkeypatch.setattr(MemoryDialog, "ask", staticmethod(ask))
    return seen


def test_the_passage_at_a_place_in_a_pdf_or_text_file(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "r.pdf", ["Alpha page.", "Beta page: the lease ends in May."])
    assert passage_at(str(pdf), Place(page=2)) == "Beta page: the lease ends in May."
    assert passage_at(str(pdf), Place()) == "Alpha page.\n\nBeta page: the lease ends in May."
    text = tmp_path / "t.md"
    text.write_text("# One\n\nFirst.\n\n" + "filler line\n" * 120 + "\n# Two\n\nSecond part.\n")
    assert passage_at(str(text), Place(first_line=125, last_line=127)).endswith("Second part.")


def test_remember_on_an_attachment_makes_a_memory_with_its_source(
    qtbot: QtBot, window: MainWindow, asked: list[MemoryValues], tmp_path: Path
) -> None:
    workspace = window.workspace
    cid = workspace.conversations.create().id
    report = make_pdf(tmp_path / "report.pdf", ["The hangar lease ends in October."])
    ref = workspace.attachments.add(cid, report).ref()
    message = workspace.conversations.append(cid, "user", "Keep this.", attachments=[ref])
    window.conversations.refresh()
    window.conversations.select(cid)
    qtbot.waitUntil(lambda: window.session.conversation_id == cid)
    before = {i.id for i in workspace.memory.all(None)}
    window.chat.remember_requested.emit(ref, message.id)
    assert asked == [
        MemoryValues("From report.pdf: The hangar lease ends in October.", "fact", 0.5)
    ]
    qtbot.waitUntil(lambda: len(workspace.memory.all(None)) == len(before) + 1, timeout=10000)
    (item,) = [i for i in workspace.memory.all(None) if i.id not in before]
    assert item.text == "From report.pdf: The hangar lease ends in October."
    assert item.tags == ("file:report.pdf",)
    assert item.source is not None and (item.source.conversation_id, item.source.message_id) == (
        cid,
        message.id,
    )


def test_remember_in_the_preview_of_a_cited_place_takes_its_lines(
    qtbot: QtBot,
    window: MainWindow,
    asked: list[MemoryValues],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nIntro.\n\nAda prefers tea at four.\n")
    shown: list[FilePreview] = []
    monkeypatch.setattr(FilePreview, "show", lambda self: shown.append(self))  # noqa: PLW0108
    window.chat.citation_clicked.emit(Citation(str(notes), Place(first_line=5, last_line=5)))
    (preview,) = shown
    button = preview.findChild(QPushButton, "rememberButton")
    assert button is not None
    button.click()
    assert asked == [MemoryValues("From notes.md line 5: Ada prefers tea at four.", "fact", 0.5)]
    memory = window.workspace.memory
    qtbot.waitUntil(lambda: any(i.text.startswith("From notes.md") for i in memory.all(None)))


@pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing the keyboard")
def test_the_chips_context_menu_offers_remember_this(
    qtbot: QtBot,
    window: MainWindow,
    asked: list[MemoryValues],
    tmp_path: Path,
) -> None:
    workspace = window.workspace
    cid = workspace.conversations.create().id
    note = tmp_path / "note.txt"
    note.write_text("Ada's locker code is 4711.\n")
    ref = workspace.attachments.add(cid, note).ref()
    message = workspace.conversations.append(cid, "user", "Keep this.", attachments=[ref])
    window.conversations.refresh()
    window.conversations.select(cid)
    qtbot.waitUntil(lambda: window.session.conversation_id == cid)
    chip = link_point(window.chat, f"attached:{ref.id}")
    menus: list[list[str]] = []

    def choose() -> None:  # the menu is open (modal): read it, and choose
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        menus.append([a.text() for a in menu.actions()])
        next(a for a in menu.actions() if a.text() == "Remember This…").trigger()
        menu.close()

    QTimer.singleShot(200, choose)
    window.chat.contextMenuEvent(
        QContextMenuEvent(QContextMenuEvent.Reason.Mouse, chip, window.chat.mapToGlobal(chip))
    )
    assert "Remember This…" in menus[0]
    assert asked == [MemoryValues("From note.txt: Ada's locker code is 4711.", "fact", 0.5)]
    memory = workspace.memory
    qtbot.waitUntil(lambda: any("4711" in i.text for i in memory.all(None)), timeout=10000)
    (item,) = [i for i in memory.all(None) if "4711" in i.text]
    assert item.source is not None and item.source.message_id == message.id
