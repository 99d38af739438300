"""The Knowledge page on a real service: adding a folder shows progress then each file's status;
rules are saved and applied; the window starts the service and stops it when it closes; a
reply that read files shows where, and a click opens the file there."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QStackedWidget, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from assistant.knowledge import Knowledge, KnowledgeEvent
from assistant.knowledge.reading import ENCRYPTED
from assistant.ui.knowledge.bridge import KnowledgeBridge
from assistant.ui.knowledge.opening import FilePreview
from assistant.ui.knowledge.page import KnowledgePage, progress_text
from assistant.ui.settings.dialog import SettingsDialog
from assistant.ui.settings.knowledge_page import KnowledgeSettingsPage
from tests.desktop import configure, shown_window
from tests.embedders import HashEmbedder
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.files import make_pdf
from tests.test_chat_view import anchors

pytestmark = pytest.mark.gui


@pytest.fixture
def bridge(qtbot: QtBot, data_dir: Path) -> Iterator[KnowledgeBridge]:
    running = KnowledgeBridge(Knowledge(data_dir, HashEmbedder()))
    with qtbot.waitSignal(running.changed, timeout=20000, check_params_cb=_idle):
        running.start()
    yield running
    running.stop()


def _idle(event: KnowledgeEvent) -> bool:
    return event.phase == "idle"


def rows(page: KnowledgePage) -> dict[str, str]:
    out = {}
    for i in range(page.files.topLevelItemCount()):
        top = page.files.topLevelItem(i)
        assert isinstance(top, QTreeWidgetItem)
        out[top.text(0)] = top.text(1)
        for j in range(top.childCount()):
            child = top.child(j)
            out[child.text(0)] = child.text(1)
    return out


def test_adding_a_folder_shows_progress_then_each_files_status(
    qtbot: QtBot, bridge: KnowledgeBridge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    make_pdf(folder / "report.pdf", ["One.", "Two.", "Three."])
    make_pdf(folder / "locked.pdf", ["Secret."], password="pw")
    (folder / "notes.md").write_text("# Notes\n\nThe ferry leaves at nine.\n")
    page = KnowledgePage(bridge)
    qtbot.addWidget(page)
    assert page.progress_label.text() == "Up to date"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    seen: list[str] = []
    bridge.changed.connect(lambda e: seen.append(progress_text(e)))
    page.add_button.click()
    assert page.folders.item(0).text() == str(folder)
    qtbot.waitUntil(lambda: rows(page).get("report.pdf") == "3 passages, 3 pages", timeout=20000)
    qtbot.waitUntil(lambda: page.progress_label.text() == "Up to date", timeout=20000)
    assert rows(page)["locked.pdf"] == ENCRYPTED
    assert rows(page)[str(folder)] == "2 files indexed, 4 passages; 1 file not read"
    assert any(text.startswith("Reading 1 of 3 files: ") for text in seen)
    assert not page.progress.isVisible()


def test_rules_are_saved_and_applied(
    qtbot: QtBot, bridge: KnowledgeBridge, tmp_path: Path, data_dir: Path
) -> None:
    folder = tmp_path / "code"
    (folder / "vendor").mkdir(parents=True)
    (folder / "main.py").write_text("print('hi')\n")
    (folder / "vendor" / "lib.py").write_text("print('lib')\n")
    page = KnowledgePage(bridge)
    qtbot.addWidget(page)
    page.add_folder(str(folder))
    qtbot.waitUntil(lambda: "vendor/lib.py" in rows(page), timeout=20000)
    page.exclude.setText("vendor, .git")
    page.exclude.editingFinished.emit()
    qtbot.waitUntil(lambda: "vendor/lib.py" not in rows(page), timeout=20000)
    assert "main.py" in rows(page)
    again = Knowledge(data_dir, HashEmbedder())
    assert again.sources.exclude == ("vendor", ".git")
    page.folders.setCurrentRow(0)
    page.remove_button.click()
    assert rows(page) == {}
    qtbot.waitUntil(lambda: bridge.knowledge.search("print") == [], timeout=20000)


def test_the_window_runs_the_service_and_stops_it_on_close(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("The platypus lays eggs.\n")
    knowledge = Knowledge(data_dir, None)
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: bool(win.workspace.knowledge.search("platypus")), timeout=20000)
    win.close()
    assert not any(t.name == "knowledge" for t in threading.enumerate())


def test_the_edit_menu_opens_the_knowledge_page_of_the_settings(
    qtbot: QtBot,
    data_dir: Path,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("The platypus lays eggs.\n")
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    opened: list[SettingsDialog] = []
    monkeypatch.setattr(SettingsDialog, "exec", lambda self: opened.append(self) or 0)
    win.menu.knowledge.trigger()
    (dialog,) = opened
    current = dialog.findChild(QStackedWidget, "settingsPages").currentWidget()
    assert isinstance(current, KnowledgeSettingsPage)
    assert [p.title for p in dialog.pages][-1] == "Knowledge"
    current.page.add_folder(str(folder))  # applies at once: the window's index follows it
    qtbot.waitUntil(lambda: bool(win.workspace.knowledge.search("platypus")), timeout=20000)
    qtbot.waitUntil(lambda: "1 file indexed" in current.page.files.topLevelItem(0).text(1),
                    timeout=20000)  # fmt: skip
    win.menu.settings.trigger()  # Settings opens at its first page, with the Knowledge page
    assert opened[1].findChild(QStackedWidget, "settingsPages").currentIndex() == 0
    for dialog in opened:
        dialog.deleteLater()
    win.close()


def test_a_reply_that_read_files_shows_citations_that_open_them(
    qtbot: QtBot,
    data_dir: Path,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "plan.md").write_text("# Plan\n\nIntro.\n\n## Budget\n\nAsk the board in March.\n")
    make_pdf(folder / "report.pdf", ["Contents.", "The board meets in March."])
    knowledge = Knowledge(data_dir, None)
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: len(win.workspace.knowledge.index) == 4, timeout=20000)
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("search_files", json.dumps({"query": "board March"}))),
        Reply.text("Ask the board in March (plan.md; report.pdf p. 2)."),
    )
    win.input.setPlainText("When do we ask the board?")
    qtbot.keyClick(win.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Files read:" in win.chat.toPlainText(), timeout=20000)
    text = win.chat.toPlainText()
    assert "Searched your files for 'board March' · 2 found" in text
    assert "▤ report.pdf p. 2" in text
    assert "▤ plan.md Plan > Budget, lines 5-7" in text
    opened: list[str] = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True
    )
    cites = [h for h in anchors(win.chat) if h.startswith("cite:")]
    assert len(cites) == 2
    shown: list[FilePreview] = []
    monkeypatch.setattr(FilePreview, "show", lambda self: shown.append(self))  # noqa: PLW0108
    for href in cites:
        win.chat.anchorClicked.emit(QUrl(href))
    assert opened == [str(folder / "report.pdf")]  # a PDF opens in the system's viewer
    (preview,) = shown  # text opens in the app, at its lines
    assert preview.highlighted == "## Budget\n\nAsk the board in March."
    preview.deleteLater()
    win.close()
