"""Conversation search never blocks the GUI: the list filter and Ctrl+K search in the background.

The embedder here waits at a gate the test opens, as the provider's `/v1/embeddings` may wait
for a server that does not answer; meanwhile the event loop must go on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, Qt, QThreadPool, QTimer
from pytestqt.qtbot import QtBot
from shiboken6 import Shiboken

from assistant.memory import ConversationStore
from assistant.ui.conversations.pane import ConversationPane
from assistant.ui.conversations.search import ChatSearchDialog
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.embedders import GatedEmbedder

pytestmark = [
    pytest.mark.gui,
    # The offscreen platform warns whenever a shown top-level's size constraints change.
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]

CONVERSATIONS = (
    ("Lisbon trip", "Which museums are open on Monday?"),
    ("Weekend", "We could take the train to Lisbon on Saturday"),
    ("Paperwork", "The tax forms are due in May"),
)


@pytest.fixture
def embedder() -> Iterator[GatedEmbedder]:
    """The store's embedder; every gate opens at the end so that no search is left waiting."""
    gated = GatedEmbedder()
    yield gated
    gated.release()
    QThreadPool.globalInstance().waitForDone()


def fill(store: ConversationStore) -> dict[str, str]:
    """The conversations, their messages embedded; their ids by title."""
    ids = {}
    for title, text in CONVERSATIONS:
        ids[title] = store.create(title).id
        store.append(ids[title], "user", text)
    store.embed_pending()
    return ids


@pytest.fixture
def store(data_dir: Path, embedder: GatedEmbedder) -> ConversationStore:
    return ConversationStore(data_dir, embedder)


@pytest.fixture
def pane(qtbot: QtBot, store: ConversationStore) -> ConversationPane:
    fill(store)
    widget = ConversationPane(store)
    qtbot.addWidget(widget)
    return widget


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, embedder: GatedEmbedder) -> MainWindow:
    workspace = Workspace.open(data_dir)
    workspace.conversations.set_embedder(embedder)
    fill(workspace.conversations)
    win = MainWindow(workspace)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def listed(pane: ConversationPane) -> list[str]:
    model = pane.view.model()
    return sorted(model.index(row, 0).data() for row in range(model.rowCount()))


def settle() -> None:
    """Let every search finish and every result it sent arrive."""
    QThreadPool.globalInstance().waitForDone()
    QCoreApplication.sendPostedEvents()


def check_event_loop_runs(qtbot: QtBot) -> None:
    """Fail unless a timer set now fires: the GUI thread is not stuck."""
    fired: list[bool] = []
    QTimer.singleShot(0, lambda: fired.append(True))
    qtbot.waitUntil(lambda: fired == [True])


def test_the_list_filters_by_title_at_once_and_adds_content_hits_when_found(
    qtbot: QtBot, pane: ConversationPane, embedder: GatedEmbedder
) -> None:
    embedder.hold("lisbon")
    qtbot.keyClicks(pane.filter, "lisbon")
    qtbot.waitUntil(lambda: embedder.waiting("lisbon"))
    check_event_loop_runs(qtbot)
    assert pane.searching
    assert listed(pane) == ["Lisbon trip"]
    qtbot.waitUntil(lambda: pane.search_note.isVisibleTo(pane))
    assert pane.search_note.text() == "Searching the messages…"
    embedder.release("lisbon")
    qtbot.waitUntil(lambda: not pane.searching)
    assert listed(pane) == ["Lisbon trip", "Weekend"]
    assert not pane.search_note.isVisibleTo(pane)


def test_a_stale_search_that_ends_after_a_newer_one_is_dropped(
    qtbot: QtBot, pane: ConversationPane, store: ConversationStore, embedder: GatedEmbedder
) -> None:
    embedder.hold("lisbon")
    pane.filter.setText("lisbon")
    pane.apply_filter()
    qtbot.waitUntil(lambda: embedder.waiting("lisbon"))
    pane.filter.setText("tax")
    pane.apply_filter()
    qtbot.waitUntil(lambda: not pane.searching)
    assert listed(pane) == ["Paperwork"]
    embedder.release("lisbon")
    settle()
    assert listed(pane) == ["Paperwork"]
    weekend = next(c.id for c in store.all() if c.title == "Weekend")
    assert pane.content_hit(weekend) is None


def test_a_failed_search_says_so_and_the_titles_still_filter(
    qtbot: QtBot, pane: ConversationPane, embedder: GatedEmbedder
) -> None:
    embedder.crash = RuntimeError("the embedding model crashed")
    pane.filter.setText("lisbon")
    pane.apply_filter()
    qtbot.waitUntil(lambda: not pane.searching)
    assert listed(pane) == ["Lisbon trip"]
    assert pane.search_note.isVisibleTo(pane)
    assert "Only the titles were searched" in pane.search_note.text()
    assert "the embedding model crashed" in pane.search_note.text()
    embedder.crash = None
    pane.filter.setText("lisbo")
    pane.apply_filter()
    assert not pane.search_note.isVisibleTo(pane)  # a new search clears the old error


def test_ctrl_k_says_searching_and_enter_opens_the_best_hit_when_it_arrives(
    qtbot: QtBot, window: MainWindow, embedder: GatedEmbedder
) -> None:
    dialog = ChatSearchDialog(window.workspace.conversations, window)
    qtbot.addWidget(dialog)
    dialog.chosen.connect(window.show_message)
    dialog.show()
    embedder.hold("train lisbon")
    qtbot.keyClicks(dialog.field, "train lisbon")
    qtbot.waitUntil(lambda: embedder.waiting("train lisbon"))
    check_event_loop_runs(qtbot)
    assert dialog.status.text() == "Searching…"
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
    assert dialog.isVisible()  # nothing to open yet
    with qtbot.waitSignal(dialog.chosen) as chosen:
        embedder.release("train lisbon")
    cid, _mid = chosen.args
    assert window.workspace.conversations.load(cid).title == "Weekend"
    assert window.conversations.current_id() == cid
    assert "Lisbon" in window.chat.textCursor().selectedText()
    assert not dialog.isVisible()


def test_ctrl_k_shows_a_failed_search(
    qtbot: QtBot, window: MainWindow, embedder: GatedEmbedder
) -> None:
    dialog = ChatSearchDialog(window.workspace.conversations, window)
    qtbot.addWidget(dialog)
    embedder.crash = RuntimeError("the embedding model crashed")
    dialog.field.setText("lisbon")
    dialog.run_search()
    qtbot.waitUntil(lambda: not dialog.searching)
    assert dialog.status.text().startswith("The search failed:")
    assert "the embedding model crashed" in dialog.status.text()
    assert dialog.hits.count() == 0


@pytest.mark.parametrize("close", ["escape", "delete"])
def test_closing_ctrl_k_during_a_search_opens_nothing_later(
    qtbot: QtBot, window: MainWindow, embedder: GatedEmbedder, close: str
) -> None:
    dialog = ChatSearchDialog(window.workspace.conversations, window)
    opened: list[tuple[str, str]] = []
    dialog.chosen.connect(lambda cid, mid: opened.append((cid, mid)))
    dialog.show()
    shown = window.conversations.current_id()
    embedder.hold("lisbon")
    qtbot.keyClicks(dialog.field, "lisbon")
    qtbot.waitUntil(lambda: embedder.waiting("lisbon"))
    qtbot.keyClick(dialog.field, Qt.Key.Key_Return)  # open the best hit when found...
    if close == "escape":
        qtbot.keyClick(dialog.field, Qt.Key.Key_Escape)  # ...but the user leaves first
        assert not dialog.isVisible() and not dialog.searching
    else:
        Shiboken.delete(dialog)  # its window went, and the dialog with it
    embedder.release("lisbon")
    settle()
    assert opened == []
    assert window.conversations.current_id() == shown


def test_the_open_conversation_found_by_its_messages_stays_open_and_selected(
    qtbot: QtBot, window: MainWindow, embedder: GatedEmbedder
) -> None:
    weekend = next(c.id for c in window.workspace.conversations.all() if c.title == "Weekend")
    window.conversations.select(weekend)
    embedder.hold("lisbon")
    window.conversations.filter.setText("lisbon")
    window.conversations.apply_filter()
    qtbot.waitUntil(lambda: embedder.waiting("lisbon"))
    assert listed(window.conversations) == ["Lisbon trip"]  # titles first
    assert "train to Lisbon" in window.chat.toPlainText()  # still open
    embedder.release("lisbon")
    qtbot.waitUntil(lambda: not window.conversations.searching)
    assert window.conversations.current_id() == weekend
    assert "train to Lisbon" in window.chat.toPlainText()


def test_ctrl_k_left_while_it_searches_is_deleted_and_opens_nothing(
    qtbot: QtBot, window: MainWindow, embedder: GatedEmbedder
) -> None:
    shown = window.conversations.current_id()
    embedder.hold("lisbon")

    def use_the_dialog() -> None:
        dialog = window.findChild(ChatSearchDialog)
        assert dialog is not None
        qtbot.keyClicks(dialog.field, "lisbon")
        qtbot.waitUntil(lambda: embedder.waiting("lisbon"))
        qtbot.keyClick(dialog.field, Qt.Key.Key_Return)
        qtbot.keyClick(dialog.field, Qt.Key.Key_Escape)

    QTimer.singleShot(0, use_the_dialog)
    window.search_conversations()  # returns once the dialog is closed
    qtbot.waitUntil(lambda: window.findChild(ChatSearchDialog) is None)
    embedder.release("lisbon")
    settle()
    assert window.conversations.current_id() == shown
