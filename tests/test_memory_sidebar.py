"""The memory sidebar and its list model: filtering, search, pin, edit, forget and live updates."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from PySide6.QtCore import QPoint, Qt, QThreadPool, QUrl
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox, QLineEdit, QListView, QTextBrowser
from pytestqt.qtbot import QtBot

from assistant.memory.fading import archive_limit
from assistant.memory.inbox import Proposal
from assistant.memory.items import MemoryItem, SearchHit, Source
from assistant.timestamps import now_utc, relative_time
from assistant.transfer import apply_import, export_data, parse_import
from assistant.ui.bridge import StoreBridge
from assistant.ui.memory.detail import source_href
from assistant.ui.memory.dialogs import MemoryDialog, MemoryValues
from assistant.ui.memory.html import EMPTY_WORKING
from assistant.ui.memory.list_view import EMPTY_MEMORIES
from assistant.ui.memory.model import HitRole, ItemRole, MemoryListModel, caption
from assistant.ui.memory.sidebar import MemorySidebar
from assistant.ui.worker import pinned_overflow
from assistant.workspace import Workspace
from tests.embedders import HashEmbedder, hashed_vector
from tests.sidebars import DIM, remember, shown_sidebar

pytestmark = [
    pytest.mark.gui,
    # The offscreen platform warns whenever a shown top-level's size constraints change.
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]

SEARCH_SETTLE_MS = 300


class GuardedEmbedder(HashEmbedder):
    """Counts embeddings requested on the GUI thread, where the network must never be waited on."""

    def __init__(self) -> None:
        super().__init__("hash", DIM)
        self.gui_thread_calls = 0

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if threading.current_thread() is threading.main_thread():
            self.gui_thread_calls += 1
        return super().embed(texts)


def open_workspace(root: Path) -> tuple[Workspace, GuardedEmbedder]:
    workspace = Workspace.open(root)
    embedder = GuardedEmbedder()
    workspace.memory.set_embedder(embedder)
    return workspace, embedder


def search(workspace: Workspace, query: str) -> list[SearchHit]:
    return workspace.memory.search(query, k=50, query_vector=hashed_vector(query, DIM))


def drain(qtbot: QtBot) -> None:
    """Let background jobs finish and their results arrive."""
    QThreadPool.globalInstance().waitForDone()
    qtbot.wait(10)


def texts(model: MemoryListModel) -> list[str]:
    return [model.index(row).data() for row in range(model.rowCount())]


@pytest.fixture
def workspace(data_dir: Path, qtbot: QtBot) -> Iterator[Workspace]:
    ws, embedder = open_workspace(data_dir)
    yield ws
    drain(qtbot)
    ws.close()
    assert embedder.gui_thread_calls == 0, "the GUI thread waited on the embedder"


@pytest.fixture
def bridge(workspace: Workspace) -> Iterator[StoreBridge]:
    bridge = StoreBridge(workspace)
    yield bridge
    bridge.disconnect_stores()


@pytest.fixture
def sidebar(qtbot: QtBot, workspace: Workspace, bridge: StoreBridge) -> MemorySidebar:
    return shown_sidebar(qtbot, workspace, bridge)


def select(sidebar: MemorySidebar, memory_id: str) -> None:
    index = sidebar.memories.model.index_of(memory_id)
    assert index.isValid()
    sidebar.memories.list_view.setCurrentIndex(index)


# -- the model -------------------------------------------------------------------------------


def test_model_passes_the_model_tester(
    qtmodeltester: Any, workspace: Workspace, bridge: StoreBridge
) -> None:
    items = [
        remember(workspace, f"memory number {n} about {topic}", kind)
        for n, (topic, kind) in enumerate(
            [("tea", "preference"), ("trains", "fact"), ("tea plans", "plan"), ("rain", "event")]
        )
    ]
    model = MemoryListModel(workspace.memory)
    bridge.memory_changed.connect(model.on_memory_changed)
    qtmodeltester.check(model)
    assert model.rowCount() == 4

    workspace.memory.pin(items[0].id)
    remember(workspace, "a new memory about tea", "fact")
    workspace.memory.forget(items[1].id)
    workspace.memory.update(items[2].id, kind="fact")
    workspace.memory.mark_used([items[3].id])
    qtmodeltester.check(model)
    assert texts(model) == [i.text for i in workspace.memory.all()]

    model.set_filter(kind="fact")
    qtmodeltester.check(model)
    assert {i.kind for i in (model.item_at(model.index(r)) for r in range(model.rowCount()))} == {
        "fact"
    }
    workspace.memory.update(items[3].id, kind="fact")  # enters the filter
    workspace.memory.update(items[2].id, kind="plan")  # leaves it
    qtmodeltester.check(model)
    expected = [i.text for i in workspace.memory.all() if i.kind == "fact"]
    assert texts(model) == expected

    model.set_filter(kind=None)
    hits = search(workspace, "tea")
    model.set_hits(hits)
    qtmodeltester.check(model)
    assert model.is_searching()
    assert texts(model) == [h.item.text for h in hits]
    assert model.index(0).data(HitRole) == hits[0]
    assert isinstance(model.index(0).data(ItemRole), MemoryItem)
    # 'tea' is in three of the four memories: it does not set one of them apart
    assert "Why: Matches &#x27;tea&#x27;, which 3 of 4 memories have, so it does not set" in (
        model.index(0).data(Qt.ItemDataRole.ToolTipRole)
    )

    hit_id = hits[0].item.id
    workspace.memory.forget(hit_id)
    assert hit_id not in [model.item_at(model.index(r)).id for r in range(model.rowCount())]  # type: ignore[union-attr]
    workspace.memory.restore(hit_id)
    assert model.index(0).data(ItemRole).id == hit_id  # back at its rank
    qtmodeltester.check(model)

    model.clear_hits()
    model.set_filter("forgotten")
    qtmodeltester.check(model)
    assert texts(model) == [items[1].text]


def test_model_orders_pinned_first_then_newest(workspace: Workspace, bridge: StoreBridge) -> None:
    old, middle, new = (remember(workspace, f"memory {n}") for n in ("old", "middle", "new"))
    model = MemoryListModel(workspace.memory)
    bridge.memory_changed.connect(model.on_memory_changed)
    assert texts(model) == [new.text, middle.text, old.text]

    moves: list[int] = []
    resets: list[int] = []
    model.rowsMoved.connect(lambda *_: moves.append(1))
    model.modelReset.connect(lambda: resets.append(1))
    workspace.memory.pin(old.id)
    assert texts(model) == [old.text, new.text, middle.text]
    workspace.memory.pin(middle.id)
    assert texts(model) == [middle.text, old.text, new.text]
    workspace.memory.pin(middle.id, False)
    assert texts(model) == [old.text, new.text, middle.text]
    assert texts(model) == [i.text for i in workspace.memory.all()]
    assert len(moves) == 3
    assert not resets


def test_model_resets_for_large_batches(workspace: Workspace, bridge: StoreBridge) -> None:
    for n in range(100):
        remember(workspace, f"note {n}", importance=0.1)
    model = MemoryListModel(workspace.memory)
    bridge.memory_changed.connect(model.on_memory_changed)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    later = now_utc() + timedelta(days=300)
    workspace.memory.decay(later, half_life_days=90)  # fades all 100, archives a few
    assert resets == [1]
    assert model.rowCount() == 100 - archive_limit(100)


def test_captions_and_relative_times(workspace: Workspace) -> None:
    item = remember(workspace, "Likes jazz", "preference", importance=0.7)
    assert caption(item) == "preference · importance 0.7 · never used"
    now = item.created_at
    used = item._replace(access_count=2, last_accessed=now - timedelta(days=3))
    assert caption(used, now) == "preference · importance 0.7 · used 3 days ago"
    assert relative_time(now - timedelta(days=3), now) == "3 days ago"
    assert relative_time(now - timedelta(days=1, hours=2), now) == "yesterday"
    assert relative_time(now - timedelta(hours=5), now) == "5 hours ago"
    assert relative_time(now - timedelta(minutes=1), now) == "1 minute ago"
    assert relative_time(now - timedelta(days=15), now) == "2 weeks ago"
    assert relative_time(now - timedelta(days=400), now) == "1 year ago"


# -- the sidebar -----------------------------------------------------------------------------


def test_sidebar_has_contract_names_and_empty_state(sidebar: MemorySidebar) -> None:
    assert sidebar.objectName() == "memorySidebar"
    assert isinstance(sidebar.findChild(QLineEdit, "memorySearch"), QLineEdit)
    assert isinstance(sidebar.findChild(QListView, "memoryList"), QListView)
    assert isinstance(sidebar.findChild(QTextBrowser, "workingMemoryView"), QTextBrowser)
    assert sidebar.memories.filters.search.placeholderText() == "Search memories"
    assert sidebar.memories.filters.search.isClearButtonEnabled()
    assert sidebar.memories.list_frame.list_stack.currentIndex() == 1  # the empty state
    shown = sidebar.memories.list_frame.empty_label.text()
    assert EMPTY_MEMORIES.split(". ")[0] in shown
    assert "or add one yourself" in shown
    assert sidebar.memories.detail.isHidden()  # nothing to show the details of
    assert EMPTY_WORKING in sidebar.working_view.toPlainText()


def detail_shows(qtbot: QtBot, sidebar: MemorySidebar, text: str) -> None:
    """Wait for the detail, drawn once the selection's burst of signals is over, to show `text`."""
    qtbot.waitUntil(lambda: text in sidebar.memories.detail.toPlainText())


def test_typing_a_search_shows_hits_and_clearing_restores(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    for text in ("Drinks green tea every morning", "Dentist on Friday", "Favourite colour: blue"):
        remember(workspace, text)
    assert sidebar.memories.model.rowCount() == 3
    qtbot.keyClicks(sidebar.memories.filters.search, "dentist")
    qtbot.waitUntil(
        lambda: sidebar.memories.model.is_searching() and sidebar.memories.model.rowCount() == 1
    )
    assert texts(sidebar.memories.model) == ["Dentist on Friday"]
    assert sidebar.memories.count_label.text() == "1 result"

    sidebar.memories.list_view.setCurrentIndex(sidebar.memories.model.index(0))
    detail_shows(qtbot, sidebar, "Matches 'dentist'")
    assert "Keyword rank" not in sidebar.memories.detail.toPlainText()  # the numbers: on demand
    assert sidebar.memories.controller.why.isEnabled()
    sidebar.memories.controller.why.trigger()
    assert "Keywords +" in sidebar.memories.detail.toPlainText()

    sidebar.memories.filters.search.clear()
    qtbot.waitUntil(lambda: not sidebar.memories.model.is_searching())
    assert sidebar.memories.model.rowCount() == 3
    assert (
        "Why this result" not in sidebar.memories.detail.toPlainText()
    )  # it went with the results

    qtbot.keyClicks(sidebar.memories.filters.search, "nothing like this")
    qtbot.waitUntil(
        lambda: (
            sidebar.memories.model.is_searching()
            and sidebar.memories.list_frame.list_stack.currentIndex() == 1
        )
    )
    assert "No matches" in sidebar.memories.list_frame.empty_label.text()


def test_a_filter_that_hides_every_memory_says_so_and_clears(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    remember(workspace, "Cycles to work")
    page = sidebar.memories
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    author = page.filters.author_filter
    author.setCurrentIndex(author.findData("import"))  # none is imported
    frame = page.list_frame
    qtbot.waitUntil(lambda: frame.list_stack.currentIndex() == 1)
    said = frame.empty_label.text()
    assert "No memories match these filters" in said and "No memories yet" not in said
    assert frame.empty_clear.isVisibleTo(frame) and not frame.empty_add.isVisibleTo(frame)
    frame.empty_clear.click()
    qtbot.waitUntil(lambda: frame.list_stack.currentIndex() == 0)
    assert author.currentData() == "" and page.model.rowCount() == 1


def test_no_matches_does_not_say_a_long_query_back_whole(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    remember(workspace, "Cycles to work")
    page = sidebar.memories
    pasted = "The quick brown fox jumps over the lazy dog. " * 200
    page.filters.search.setText(pasted)
    frame = page.list_frame
    qtbot.waitUntil(
        lambda: not page.search.running and frame.list_stack.currentIndex() == 1, timeout=10000
    )
    said = frame.empty_label.text()
    assert "No matches" in said and "“The quick brown fox jumps over the lazy dog." in said
    assert len(said) < 400 and "…”" in said


def test_a_newer_query_discards_older_results(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    remember(workspace, "Drinks green tea every morning")
    remember(workspace, "Dentist on Friday")
    sidebar.memories.filters.search.setText("tea")
    qtbot.keyClick(sidebar.memories.filters.search, Qt.Key.Key_Return)  # searches at once
    sidebar.memories.filters.search.setText("dentist")
    qtbot.keyClick(sidebar.memories.filters.search, Qt.Key.Key_Return)
    drain(qtbot)
    qtbot.waitUntil(lambda: texts(sidebar.memories.model) == ["Dentist on Friday"])
    qtbot.wait(SEARCH_SETTLE_MS)
    assert texts(sidebar.memories.model) == ["Dentist on Friday"]


def test_pin_by_clicking_persists_after_reopening(qtbot: QtBot, data_dir: Path) -> None:
    workspace, _ = open_workspace(data_dir)
    older = remember(workspace, "An older memory")
    remember(workspace, "A newer memory")
    bridge = StoreBridge(workspace)
    sidebar = MemorySidebar(workspace, bridge)
    qtbot.addWidget(sidebar)
    sidebar.resize(340, 760)
    sidebar.show()
    qtbot.waitExposed(sidebar)
    assert texts(sidebar.memories.model)[1] == older.text

    view = sidebar.memories.list_view
    rect = view.visualRect(sidebar.memories.model.index(1))
    pin = sidebar.memories.delegate.pin_rect(rect).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pin)
    assert texts(sidebar.memories.model)[0] == older.text
    assert sidebar.memories.model.index(0).data(ItemRole).pinned

    sidebar.close()
    bridge.disconnect_stores()
    workspace.close()

    workspace, _ = open_workspace(data_dir)
    bridge = StoreBridge(workspace)
    again = MemorySidebar(workspace, bridge)
    qtbot.addWidget(again)
    item = again.memories.model.index(0).data(ItemRole)
    assert item.text == older.text and item.pinned
    again.memories.list_view.setCurrentIndex(again.memories.model.index(0))
    assert again.memories.controller.pin.text() == "Unpin"
    again.memories.controller.pin.trigger()  # unpin through the context-menu action
    assert not workspace.memory.get(older.id).pinned  # type: ignore[union-attr]
    bridge.disconnect_stores()
    workspace.close()


def test_delete_forgets_at_once_and_undo_restores(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    keep = remember(workspace, "Keep this one")
    gone = remember(workspace, "Forget this one")
    select(sidebar, gone.id)
    sidebar.memories.list_view.setFocus()
    qtbot.keyClick(sidebar.memories.list_view, Qt.Key.Key_Delete)
    assert texts(sidebar.memories.model) == [keep.text]  # at once, no waiting
    assert workspace.memory.get(gone.id).state == "forgotten"  # type: ignore[union-attr]
    assert sidebar.memories.notice.isVisible()
    assert sidebar.memories.notice.label.text() == "Memory forgotten."

    select(sidebar, keep.id)
    sidebar.memories.controller.forget.trigger()
    assert sidebar.memories.model.rowCount() == 0

    qtbot.mouseClick(sidebar.memories.notice.action_button, Qt.MouseButton.LeftButton)  # Undo
    qtbot.waitUntil(lambda: texts(sidebar.memories.model) == [keep.text])
    assert not sidebar.memories.notice.isVisible()
    assert (
        sidebar.memories.selected_item() is not None
        and sidebar.memories.selected_item().id == keep.id
    )  # type: ignore[union-attr]

    sidebar.memories.controller.undo_forget()  # the stack still holds the first one
    qtbot.waitUntil(lambda: sidebar.memories.model.rowCount() == 2)
    assert workspace.memory.get(gone.id).state == "active"  # type: ignore[union-attr]
    assert sidebar.memories.controller.undo_forget() is False


def test_forgotten_filter_lists_and_restores(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    item = remember(workspace, "Old phone number is 555-0100")
    sidebar.memories.controller.forget_memory(item.id)
    sidebar.memories.filters.state_filter.setCurrentIndex(
        sidebar.memories.filters.state_filter.findData("forgotten")
    )
    assert texts(sidebar.memories.model) == [item.text]
    select(sidebar, item.id)
    assert sidebar.memories.controller.restore.isEnabled()
    sidebar.memories.controller.restore.trigger()
    qtbot.waitUntil(lambda: sidebar.memories.model.rowCount() == 0)
    assert workspace.memory.get(item.id).state == "active"  # type: ignore[union-attr]


def test_enter_edits_through_the_dialog(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = remember(workspace, "Lives in Lyon")
    asked: list[MemoryItem | None] = []

    def ask(parent: Any, current: MemoryItem | None = None) -> MemoryValues:
        asked.append(current)
        return MemoryValues("Lives in Lisbon", "fact", 0.8)

    monkeypatch.setattr(MemoryDialog, "ask", staticmethod(ask))
    select(sidebar, item.id)
    sidebar.memories.list_view.setFocus()
    qtbot.keyClick(sidebar.memories.list_view, Qt.Key.Key_Return)
    assert asked and asked[0] is not None and asked[0].id == item.id
    qtbot.waitUntil(lambda: texts(sidebar.memories.model) == ["Lives in Lisbon"])
    changed = workspace.memory.get(item.id)
    assert changed is not None and changed.importance == 0.8


def test_edit_memory_takes_values(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    item = remember(workspace, "Likes cats")
    one_line = sidebar.memories.list_view.visualRect(sidebar.memories.model.index(0)).height()
    longer = "Likes cats and dogs, " * 12
    sidebar.memories.controller.edit_memory(item.id, MemoryValues(longer, "preference", 0.6))
    qtbot.waitUntil(lambda: texts(sidebar.memories.model) == [longer.strip()])
    assert sidebar.memories.model.index(0).data(ItemRole).kind == "preference"
    # The row grows to three lines (then elides).
    qtbot.waitUntil(
        lambda: (
            sidebar.memories.list_view.visualRect(sidebar.memories.model.index(0)).height()
            > one_line + 20
        )
    )


def test_add_through_the_dialog(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        MemoryDialog,
        "ask",
        staticmethod(lambda parent, item=None: MemoryValues("Allergic to peanuts", "fact", 0.9)),
    )
    assert sidebar.memories.list_frame.list_stack.currentIndex() == 1  # empty state
    sidebar.memories.list_frame.empty_add.click()
    # The row comes with the store's change, the selection with the job's result: either first.
    qtbot.waitUntil(lambda: sidebar.memories.selected_item() is not None)
    assert sidebar.memories.model.rowCount() == 1
    assert sidebar.memories.list_frame.list_stack.currentIndex() == 0
    assert sidebar.memories.selected_item().text == "Allergic to peanuts"  # type: ignore[union-attr]
    assert sidebar.memories.count_label.text() == "1 memory"


def test_adding_while_searching_reveals_the_new_memory(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember(workspace, "Cycles to work")
    qtbot.keyClicks(sidebar.memories.filters.search, "cycles")
    qtbot.waitUntil(
        lambda: sidebar.memories.model.is_searching() and sidebar.memories.model.rowCount() == 1
    )
    monkeypatch.setattr(
        MemoryDialog,
        "ask",
        staticmethod(lambda parent, item=None: MemoryValues("Owns a cargo bike", "fact", 0.5)),
    )
    sidebar.memories.controller.add.trigger()
    qtbot.waitUntil(
        lambda: (
            sidebar.memories.selected_item() is not None
            and sidebar.memories.selected_item().text == "Owns a cargo bike"
        )  # type: ignore[union-attr]
    )
    assert sidebar.memories.filters.search.text() == ""
    assert not sidebar.memories.model.is_searching()


def test_dialog_fields_and_values(qtbot: QtBot, workspace: Workspace) -> None:
    item = remember(workspace, "Runs on Sundays", "event", importance=0.4)
    dialog = MemoryDialog(item)
    qtbot.addWidget(dialog)
    assert dialog.values() == MemoryValues("Runs on Sundays", "event", 0.4)
    assert dialog.importance_slider.value() == 40
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    dialog.text_edit.setPlainText("   ")
    assert not save.isEnabled()
    dialog.text_edit.setPlainText("Runs on Saturdays")
    dialog.kind_combo.setCurrentIndex(dialog.kind_combo.findData("plan"))
    dialog.importance_slider.setValue(75)
    assert save.isEnabled()
    assert dialog.values() == MemoryValues("Runs on Saturdays", "plan", 0.75)

    empty = MemoryDialog()
    qtbot.addWidget(empty)
    assert empty.values().text == ""
    assert not empty.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled()


def test_memory_added_on_another_thread_appears_without_reset(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    remember(workspace, "Already here")
    resets: list[int] = []
    inserted: list[int] = []
    sidebar.memories.model.modelReset.connect(lambda: resets.append(1))
    sidebar.memories.model.rowsInserted.connect(lambda *_: inserted.append(1))
    thread = threading.Thread(target=workspace.memory.add, args=("Learned by the agent",))
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: sidebar.memories.model.rowCount() == 2)
    assert texts(sidebar.memories.model)[0] == "Learned by the agent"
    assert inserted == [1]
    assert resets == []


def test_show_memory_clears_filters_and_selects(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    target = remember(workspace, "The one to find", "decision")
    for n in range(40):
        remember(workspace, f"Filler memory {n}", "fact")
    sidebar.memories.filters.kind_filter.setCurrentIndex(
        sidebar.memories.filters.kind_filter.findData("fact")
    )
    qtbot.keyClicks(sidebar.memories.filters.search, "filler")
    qtbot.waitUntil(sidebar.memories.model.is_searching)
    assert sidebar.memories.model.row_of(target.id) < 0
    sidebar.tabs.setCurrentIndex(1)

    assert sidebar.show_memory(target.id)
    assert sidebar.tabs.currentIndex() == 0
    assert sidebar.memories.filters.search.text() == ""
    assert sidebar.memories.filters.kind_filter.currentIndex() == 0  # all kinds
    selected = sidebar.memories.selected_item()
    assert selected is not None and selected.id == target.id
    assert (
        sidebar.memories.list_view.viewport()
        .rect()
        .intersects(
            sidebar.memories.list_view.visualRect(sidebar.memories.model.index_of(target.id))
        )
    )
    assert not sidebar.show_memory("no-such-id")


def test_show_source_emits_the_items_source(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    chat = workspace.conversations.create("Lisbon trip")
    message = workspace.conversations.append(chat.id, "user", "My sister lives in Porto")
    sourced = remember(workspace, "From a chat", source=Source(chat.id, message.id))
    plain = remember(workspace, "Typed in by hand")
    select(sidebar, plain.id)
    assert not sidebar.memories.controller.source.isEnabled()
    assert sidebar.memories.controller.source.text() == "No source: you added it yourself"
    detail_shows(qtbot, sidebar, "No source: you added it yourself")
    select(sidebar, sourced.id)
    assert sidebar.memories.controller.source.isEnabled()
    with qtbot.waitSignal(sidebar.source_requested, timeout=1000) as blocker:
        sidebar.memories.controller.source.trigger()
    assert blocker.args == [chat.id, message.id]
    with qtbot.waitSignal(sidebar.source_requested, timeout=1000) as blocker:
        sidebar.memories.detail.anchorClicked.emit(QUrl(source_href(chat.id, message.id)))
    assert blocker.args == [chat.id, message.id]

    workspace.conversations.delete(chat.id)
    select(sidebar, plain.id)
    select(sidebar, sourced.id)
    assert not sidebar.memories.controller.source.isEnabled()
    detail_shows(qtbot, sidebar, "Its conversation was deleted")


def test_working_memory_view_is_live(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    shown = workspace.conversations.create()
    sidebar.set_conversation(workspace.conversations.load(shown.id))
    assert EMPTY_WORKING in sidebar.working_view.toPlainText()
    workspace.working.update(shown.id, task="Plan the Lisbon trip", push_subgoal="Book flights")
    qtbot.waitUntil(lambda: "Plan the Lisbon trip" in sidebar.working_view.toPlainText())
    workspace.working.update(shown.id, push_subgoal="Pick a hotel", note="Budget €1,200")
    workspace.working.update(shown.id, result_name="cheapest flight", result="TAP, €186")
    shown = sidebar.working_view.toPlainText()
    for part in ("Book flights", "Pick a hotel", "Current step", "Budget €1,200", "TAP, €186"):
        assert part in shown
    workspace.working.update("conv-2", task="Another conversation's task")
    assert "Another conversation" not in sidebar.working_view.toPlainText()
    sidebar.set_conversation(None)
    assert EMPTY_WORKING in sidebar.working_view.toPlainText()


def test_conversation_page_shows_summary_and_topics(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    info = workspace.conversations.create("Trip")
    message = workspace.conversations.append(info.id, "user", "Let's plan a trip")
    sidebar.set_conversation(workspace.conversations.load(info.id))
    view = sidebar.conversation_view
    assert "No summary yet" in view.toPlainText()
    workspace.conversations.set_summary(info.id, "Planning a trip to Lisbon.", message.id)
    sidebar.set_conversation(workspace.conversations.load(info.id))  # as the chat session does
    assert "Planning a trip to Lisbon." in view.toPlainText()
    assert "No topics yet" in view.toPlainText()
    learned = remember(workspace, "Going to Lisbon in May", source=Source(info.id, message.id))
    elsewhere = remember(workspace, "Works at the bakery", source=Source("other", None))
    workspace.topics.set_summary("travel", "Trips and flights.", (learned.id,))
    workspace.topics.set_summary("work", "The job.", (elsewhere.id,))
    qtbot.waitUntil(lambda: "Trips and flights." in view.toPlainText())
    assert "The job." not in view.toPlainText()  # another conversation's topic
    used = remember(workspace, "The bakery opens at six")
    workspace.topics.set_summary("work", "The job.", (elsewhere.id, used.id))
    workspace.conversations.append(info.id, "assistant", "It opens at six.", memory_ids=(used.id,))
    sidebar.set_conversation(workspace.conversations.load(info.id))
    assert "The job." in view.toPlainText()  # recalled in this conversation


def test_keyword_only_note(qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar) -> None:
    assert sidebar.memories.filters.keyword_note.isHidden()  # empty store: nothing to say
    workspace.memory.set_embedder(None)
    qtbot.waitUntil(lambda: not sidebar.memories.filters.keyword_note.isHidden())
    assert "Keyword search only" in sidebar.memories.filters.keyword_note.text()


def test_context_menu_lists_the_actions(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    remember(workspace, "Something")

    def entries(pos: QPoint) -> list[tuple[str, bool]]:
        menu = sidebar.memories.context_menu(pos)
        try:
            return [(a.text(), a.isEnabled()) for a in menu.actions() if not a.isSeparator()]
        finally:
            menu.deleteLater()

    row = sidebar.memories.list_view.visualRect(sidebar.memories.model.index(0)).center()
    assert entries(row) == [
        ("Pin", True),
        ("Edit…", True),
        ("Forget", True),
        ("No source: you added it yourself", False),
        ("Why This Result", False),
        ("Add Memory…", True),
        ("Reflect Now", True),
    ]
    assert sidebar.memories.selected_item() is not None
    assert entries(QPoint(5, 5000)) == [("Add Memory…", True), ("Reflect Now", True)]


def test_too_many_pinned_memories_are_warned_about(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    workspace.settings.prompt_budget_tokens = 1000
    remember(workspace, "A short pinned fact", pinned=True)
    qtbot.wait(10)
    assert "Too much pinned" not in sidebar.memories.notice.label.text()
    for i in range(4):
        remember(workspace, f"Pinned fact {i}: " + "detail " * 60, pinned=True)
    qtbot.waitUntil(lambda: "Too much pinned" in sidebar.memories.notice.label.text())
    assert sidebar.memories.notice.isVisible()


def test_an_automatic_budget_does_not_warn_about_a_short_pinned_memory(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    workspace.settings.prompt_budget_tokens = 0  # automatic: a share of the model's window
    remember(workspace, "A short pinned fact", pinned=True)
    sidebar.memories.controller.check_pinned_budget()
    assert "Too much pinned" not in sidebar.memories.notice.label.text()
    assert pinned_overflow(workspace) is None


def test_clicking_a_memory_enables_edit_and_forget(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    remember(workspace, "The user's sister Ana lives in Porto")
    qtbot.waitUntil(lambda: sidebar.memories.model.rowCount() == 1)
    sidebar.memories.list_view.clearSelection()
    assert (
        not sidebar.memories.controller.edit.isEnabled()
        and not sidebar.memories.controller.forget.isEnabled()
    )
    row = sidebar.memories.list_view.visualRect(sidebar.memories.model.index(0)).center()
    QTest.mouseClick(sidebar.memories.list_view.viewport(), Qt.MouseButton.LeftButton, pos=row)
    assert sidebar.memories.selected_item() is not None
    controller = sidebar.memories.controller
    assert controller.edit.isEnabled() and controller.forget.isEnabled()
    assert sidebar.memories.edit_button.isEnabled() and sidebar.memories.forget_button.isEnabled()
    assert sidebar.memories.detail.isVisible()
    detail_shows(qtbot, sidebar, "You added on")  # the detail follows the click


def test_search_results_refresh_after_an_import(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar, tmp_path: Path
) -> None:
    remember(workspace, "My sister lives in Porto")
    qtbot.keyClicks(sidebar.memories.filters.search, "Porto")
    qtbot.waitUntil(
        lambda: sidebar.memories.model.is_searching() and sidebar.memories.model.rowCount() == 1
    )
    select(sidebar, sidebar.memories.model.item_at(sidebar.memories.model.index(0)).id)  # type: ignore[union-attr]
    kept = sidebar.memories.selected_item()

    source, _ = open_workspace(tmp_path / "other")
    for text in ("Porto has the best tiles", "Flights to Porto are cheap in May", "Likes tea"):
        remember(source, text)
    plan = parse_import(json.dumps(export_data(source, include_memories=True)))
    source.close()
    importer = threading.Thread(target=apply_import, args=(plan, workspace, "skip"))
    importer.start()  # as the import dialog does: off the GUI thread, which never embeds
    importer.join()

    qtbot.waitUntil(lambda: sidebar.memories.model.rowCount() == 3)
    assert "Likes tea" not in texts(sidebar.memories.model)
    assert sidebar.memories.selected_item() == kept  # the selection stays


@pytest.mark.parametrize("key", [Qt.Key.Key_Return, Qt.Key.Key_Enter])
def test_ctrl_enter_saves_the_dialog_and_enter_is_a_new_line(qtbot: QtBot, key: Qt.Key) -> None:
    dialog = MemoryDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    dialog.text_edit.setFocus()
    ctrl = Qt.KeyboardModifier.ControlModifier
    qtbot.keyClick(dialog.text_edit, key, ctrl)  # nothing to save yet
    assert dialog.isVisible()
    qtbot.keyClicks(dialog.text_edit, "Likes tea")
    qtbot.keyClick(dialog.text_edit, Qt.Key.Key_Return)
    qtbot.keyClicks(dialog.text_edit, "and cake")
    with qtbot.waitSignal(dialog.accepted):
        qtbot.keyClick(dialog.text_edit, key, ctrl)
    assert dialog.values().text == "Likes tea\nand cake"


def test_a_proposal_says_where_accepting_it_keeps_the_memory(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    """With projects, each proposal names its scope, as each memory does: a project's fact
    its project, a personal one "Global", a change the scope of the memory it changes."""
    falcon = workspace.projects.create("Falcon")
    added: list[MemoryItem] = []  # as the agent adds it: off the GUI thread
    thread = threading.Thread(
        target=lambda: added.append(
            workspace.memory.add("The Falcon budget is 10k", project=falcon.id)
        )
    )
    thread.start()
    thread.join()
    [kept] = added
    workspace.inbox.propose(
        [
            Proposal("The Falcon launch is on 12 March", project=falcon.id),
            Proposal("The user likes figs"),
            Proposal("The Falcon budget is 12k", change="replace", target=kept.id),
        ]
    )
    sidebar.review.refresh()
    lines = [sidebar.review.list.item(i).text() for i in range(sidebar.review.list.count())]
    assert [line.split("\n")[1].split(" · ")[0] for line in lines] == [
        "Falcon",
        "Global",
        "Falcon",
    ]


def test_the_memory_dialog_keeps_a_text_over_the_limit_and_says_so(qtbot: QtBot) -> None:
    """Save used to take 2,500 characters: the dialog closed, the store refused the text and it
    was gone. Now the counter shows the length and Save (and Ctrl+Enter) waits for a shorter
    text, which stays in the box."""
    dialog = MemoryDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    dialog.text_edit.setPlainText("x" * 2500)
    assert dialog.counter.text() == "2,500 / 2,000 — 500 over the limit"
    assert not save.isEnabled() and "at most 2,000" in save.toolTip()
    qtbot.keyClick(dialog.text_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.isVisible() and dialog.text_edit.toPlainText() == "x" * 2500
    dialog.text_edit.setPlainText("x" * 2000)
    assert save.isEnabled() and dialog.counter.text() == "2,000 / 2,000"
