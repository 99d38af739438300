"""The sidebar explains each memory: where it came from, its links and its history, in words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QThreadPool, QUrl
from pytestqt.qtbot import QtBot

from assistant.memory import MemoryItem, SearchHit, Source
from assistant.memory.items import MemoryEvent
from assistant.memory.why import why_text
from assistant.timestamps import now_utc
from assistant.ui.bridge import StoreBridge
from assistant.ui.memory.detail import memory_href
from assistant.ui.memory.sidebar import MemorySidebar
from assistant.ui.memory.wording import event_text
from assistant.ui.times import day_text
from assistant.workspace import Workspace
from tests.desktop import configure
from tests.embedders import HashEmbedder
from tests.fake_openai import FakeOpenAI, Reply
from tests.sidebars import DIM, remember, shown_sidebar

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


@pytest.fixture
def workspace(data_dir: Any) -> Iterator[Workspace]:
    ws = Workspace.open(data_dir)
    ws.memory.set_embedder(HashEmbedder("hash", DIM))
    yield ws
    ws.close()


@pytest.fixture
def sidebar(qtbot: QtBot, workspace: Workspace) -> Iterator[MemorySidebar]:
    bridge = StoreBridge(workspace)
    yield shown_sidebar(qtbot, workspace, bridge)
    bridge.disconnect_stores()


def shown(sidebar: MemorySidebar, memory_id: str) -> str:
    assert sidebar.show_memory(memory_id)
    return sidebar.memories.detail.toPlainText()


def test_each_memory_says_where_it_came_from(workspace: Workspace, sidebar: MemorySidebar) -> None:
    chat = workspace.conversations.create("Lisbon trip")
    said = workspace.conversations.append(chat.id, "user", "I'm moving to Lisbon in spring")
    today = day_text(now_utc())
    typed = remember(workspace, "Likes green tea")
    tool = remember(workspace, "Moving to Lisbon", origin="tool", source=Source(chat.id, said.id))
    curator = remember(
        workspace, "Moves in spring", origin="curator", source=Source(chat.id, said.id)
    )
    imported = remember(
        workspace, "Prefers short answers", origin="import", tags=("Imported from ChatGPT",)
    )
    insight = remember(
        workspace,
        "The user is preparing to move to Lisbon in spring",
        kind="insight",
        origin="reflection",
        rests_on=(tool.id, curator.id),
    )
    assert f"✎ You added on {today}" in shown(sidebar, typed.id)
    assert "No source: you added it yourself" in shown(sidebar, typed.id)
    assert f"Remembered in 'Lisbon trip' on {today}" in shown(sidebar, tool.id)
    assert f"Extracted by the curator from 'Lisbon trip' on {today}" in shown(sidebar, curator.id)
    page = shown(sidebar, imported.id)
    assert f"Imported from ChatGPT on {today}" in page
    assert "No source: it was imported without its conversation" in page
    page = shown(sidebar, insight.id)
    assert "Insight from 2 memories" in page
    assert "Rests on Moving to Lisbon, Moves in spring" in page
    assert "No single source: drawn from other memories" in page
    # The list says it too, to a screen reader.
    row = sidebar.memories.model.index_of(insight.id)
    assert "Insight from 2 memories" in row.data(Qt.ItemDataRole.AccessibleTextRole)

    sidebar.memories.detail.anchorClicked.emit(QUrl(memory_href(tool.id)))
    selected = sidebar.memories.selected_item()
    assert selected is not None and selected.id == tool.id


def test_the_detail_tells_the_history_and_follows_a_supersede(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    porto = remember(workspace, "The user lives in Porto")
    workspace.memory.update(porto.id, text="The user lives in Porto, near the river")
    workspace.memory.pin(porto.id)
    workspace.memory.pin(porto.id, False)
    workspace.memory.mark_used([porto.id])
    workspace.memory.mark_used([porto.id])
    page = shown(sidebar, porto.id)
    for line in (
        "Added by you",
        "Edited by you: 'The user lives in Porto' → 'The user lives in Porto, near the river'",
        "Pinned by you",
        "Unpinned by you",
        "Used in 2 replies",
    ):
        assert line in page

    lisbon = workspace.memory.supersede(
        porto.id, "The user lives in Lisbon", by="curator", reason="moved to Lisbon"
    )
    qtbot.waitUntil(lambda: sidebar.memories.model.index_of(porto.id).isValid() is False)
    page = shown(sidebar, porto.id)  # archived now: the state filter follows
    assert sidebar.memories.filters.state_filter.currentData() == "archived"
    assert "Replaced by The user lives in Lisbon" in page
    assert "Replaced by a newer memory: moved to Lisbon" in page
    assert f"Held until {day_text(now_utc())}" in page
    sidebar.memories.detail.anchorClicked.emit(QUrl(memory_href(lisbon.id)))
    selected = sidebar.memories.selected_item()
    assert selected is not None and selected.id == lisbon.id
    assert (
        "Replaces The user lives in Porto, near the river" in sidebar.memories.detail.toPlainText()
    )


def test_events_and_reasons_in_words() -> None:
    at = now_utc()
    decayed = MemoryEvent(
        "m1",
        "decayed",
        at,
        reason="not used for 90 days",
        importance_before=0.8,
        importance_after=0.6,
    )
    assert event_text(decayed) == "Importance 0.8 → 0.6, not used for 90 days"
    assert event_text(MemoryEvent("m1", "created", at, by="curator")) == "Extracted by the curator"
    assert event_text(MemoryEvent("m1", "forgotten", at, by="user")) == "Forgotten by you"
    assert event_text(MemoryEvent("m1", "archived", at, reason="importance 0.05")) == (
        "Archived: importance 0.05"
    )


def test_why_this_result_in_words() -> None:
    now = now_utc()
    item = MemoryItem(
        id="m1",
        text="My sister lives in Porto",
        kind="fact",
        importance=0.8,
        pinned=False,
        created_at=now - timedelta(days=40),
        updated_at=now - timedelta(days=40),
        last_accessed=now - timedelta(days=1, hours=1),
        access_count=2,
    )
    hit = SearchHit(
        item,
        0.9,
        keyword_rank=1,
        keyword_score=2.3,
        vector_rank=2,
        similarity=0.71,
        matched=("sister", "Porto"),
    )
    assert why_text(hit, now) == (
        "Matches 'sister' and 'Porto'; close in meaning (0.71); important; used yesterday"
    )
    plain = SearchHit(
        item._replace(importance=0.5, access_count=0), 0.3, vector_rank=1, similarity=0.4
    )
    assert why_text(plain, now) == "Loosely related in meaning (0.40)"


@pytest.mark.qt_log_ignore("does not support raise", "does not support propagateSizeHints")
def test_reflect_now_writes_an_insight_that_shows_what_it_rests_on(
    qtbot: QtBot, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    root = tmp_path / "reflecting"
    configure(root, fake_openai, embeddings=False, auto_memories=True)
    workspace = Workspace.open(root)
    bridge = StoreBridge(workspace)
    sidebar = MemorySidebar(workspace, bridge)
    qtbot.addWidget(sidebar)
    sidebar.show()
    try:
        facts = [
            workspace.memory.add(text, origin="curator")
            for text in (
                "The user is learning Portuguese",
                "The user looked at flats in Lisbon",
                "The user plans to sell their car in March",
            )
        ]
        for item in facts:
            workspace.topics.add_memory("lisbon", item.id)
        insight = "The user is preparing to move to Lisbon in spring"
        ids = [facts[0].id, facts[1].id]
        fake_openai.enqueue(
            Reply.text(json.dumps({"insights": [{"text": insight, "rests_on": ids}]}))
        )
        menu = sidebar.memories.context_menu(QPoint(1, 1))
        assert sidebar.memories.controller.reflect in menu.actions()
        sidebar.memories.controller.reflect.trigger()
        assert not sidebar.memories.controller.reflect.isEnabled()  # one at a time
        qtbot.waitUntil(
            lambda: "Wrote 1 insight." in sidebar.memories.notice.label.text(), timeout=10000
        )
        assert sidebar.memories.controller.reflect.isEnabled()
        qtbot.mouseClick(sidebar.memories.notice.action_button, Qt.MouseButton.LeftButton)  # Show
        selected = sidebar.memories.selected_item()
        assert selected is not None and selected.text == insight
        page = sidebar.memories.detail.toPlainText()
        assert "Insight from 2 memories" in page
        assert (
            "Rests on The user is learning Portuguese, The user looked at flats in Lisbon" in page
        )

        fake_openai.enqueue(Reply.text(json.dumps({"insights": []})))
        sidebar.memories.controller.reflect.trigger()
        qtbot.waitUntil(sidebar.memories.controller.reflect.isEnabled, timeout=10000)
        assert "No new insight in these memories." in sidebar.memories.notice.label.text()
        assert fake_openai.pending == 0

        # Asked in the timeline window: the answer shows there, not behind it.
        timeline = sidebar.show_timeline()
        qtbot.waitUntil(timeline.isVisible)
        sidebar.memories.notice.dismiss()
        fake_openai.enqueue(Reply.text(json.dumps({"insights": []})))
        sidebar.memories.controller.reflect.trigger()
        assert "Reflecting on recent memories" in timeline.notice.label.text()
        qtbot.waitUntil(sidebar.memories.controller.reflect.isEnabled, timeout=10000)
        assert "No new insight in these memories." in timeline.notice.label.text()
        assert timeline.notice.isVisible() and sidebar.memories.notice.isHidden()
        timeline.close()
    finally:
        QThreadPool.globalInstance().waitForDone()
        bridge.disconnect_stores()
        workspace.close()


def test_a_history_not_read_yet_is_never_read_on_the_gui_thread(
    qtbot: QtBot, data_dir: Path
) -> None:
    """Opened from its index cache, the store reads the histories when the worker asks; until
    then the detail says so, and it shows the history once it is read."""
    first = Workspace.open(data_dir)
    item = first.memory.add("Walks the dog at seven")
    first.close()
    workspace = Workspace.open(data_dir)
    bridge = StoreBridge(workspace)
    try:
        assert not workspace.memory.history_loaded  # opened from the cache
        sidebar = shown_sidebar(qtbot, workspace, bridge)
        assert sidebar.show_memory(item.id)
        assert "Reading the history…" in sidebar.memories.detail.toPlainText()
        assert not workspace.memory.history_loaded  # the detail did not read it
        workspace.memory.load_history()  # as the worker does at start-up
        qtbot.waitUntil(lambda: "Added by you" in sidebar.memories.detail.toPlainText())
    finally:
        bridge.disconnect_stores()
        workspace.close()
