"""File passages in the searches: Ctrl+K shows them among the messages, marked as files, and
the memory sidebar's search shows them apart from the memories; picking one opens the file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from assistant.knowledge import Citation, Knowledge, Place
from assistant.memory import ConversationStore
from assistant.ui.conversations.search import ChatSearchDialog
from assistant.ui.knowledge.opening import FilePreview
from assistant.ui.window.main_window import MainWindow
from tests.desktop import shown_window
from tests.files import make_pdf

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, tmp_path: Path) -> Iterator[MainWindow]:
    store = ConversationStore(data_dir)
    cid = store.create("Zoo").id
    store.append(cid, "user", "Do you know about the platypus?")
    folder = tmp_path / "papers"
    folder.mkdir()
    make_pdf(folder / "animals.pdf", ["Contents.", "The platypus lays eggs and has a bill."])
    (folder / "zoo.md").write_text("# Zoo\n\nOpening hours: nine to five.\n")
    knowledge = Knowledge(data_dir, None)
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: len(win.workspace.knowledge.index) == 3, timeout=20000)
    yield win
    win.close()


def test_ctrl_k_shows_file_passages_marked_as_files_and_opens_them(
    qtbot: QtBot, window: MainWindow
) -> None:
    dialog = ChatSearchDialog(window.workspace.conversations, window, window.workspace.knowledge)
    qtbot.addWidget(dialog)
    dialog.field.setText("platypus")
    dialog.run_search()
    qtbot.waitUntil(lambda: not dialog.searching)
    texts = [dialog.hits.item(i).text() for i in range(dialog.hits.count())]
    assert sorted(t.split("\n")[0] for t in texts) == ["Zoo", "▤ File: animals.pdf p. 2"]
    row = next(i for i, t in enumerate(texts) if t.startswith("▤ File:"))
    dialog.hits.setCurrentRow(row)
    with qtbot.waitSignal(dialog.file_chosen) as chosen:
        qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    (citation,) = chosen.args
    assert citation == Citation(citation.path, Place(page=2))
    assert citation.path.endswith("animals.pdf")


def test_the_memory_search_shows_file_passages_apart(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = window.sidebar.memories
    assert page.file_hits.isHidden()
    page.filters.search.setText("opening hours")
    qtbot.waitUntil(lambda: not page.file_hits.isHidden(), timeout=10000)
    assert page.file_hits.heading.text() == "In your files"
    rows = [page.file_hits.list.item(i).text() for i in range(page.file_hits.list.count())]
    assert rows[0].startswith("▤ zoo.md Zoo, lines 1-3 — ")
    shown: list[FilePreview] = []
    monkeypatch.setattr(FilePreview, "show", lambda self: shown.append(self))  # noqa: PLW0108
    with qtbot.waitSignal(window.sidebar.file_requested) as requested:
        page.file_hits.list.itemActivated.emit(page.file_hits.list.item(0))
    assert requested.args[0].place == Place(first_line=1, last_line=3, heading=("Zoo",))
    (preview,) = shown  # the window opened it
    assert preview.highlighted.startswith("# Zoo")
    page.filters.search.setText("")
    qtbot.waitUntil(page.file_hits.isHidden, timeout=10000)
