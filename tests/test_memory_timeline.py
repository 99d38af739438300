"""The memory timeline: what was learned, changed and forgotten, by day, with links."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QThreadPool, QUrl
from PySide6.QtWidgets import QAbstractButton, QTextBrowser, QWidget
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore, Source
from assistant.memory.inbox import Proposal
from assistant.memory.items import MemoryEvent
from assistant.timestamps import now_utc
from assistant.ui.bridge import StoreBridge
from assistant.ui.memory.detail import memory_href, source_href
from assistant.ui.memory.sidebar import MemorySidebar
from assistant.ui.memory.timeline import MemoryTimeline, TimelinePage, day_heading, timeline_html
from assistant.workspace import Workspace
from tests.desktop import shown_window
from tests.embedders import HashEmbedder
from tests.sidebars import DIM, remember, shown_sidebar

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore(
        "This plugin does not support propagateSizeHints", "This plugin does not support raise"
    ),
]


@pytest.fixture
def workspace(data_dir: Path, qtbot: QtBot) -> Iterator[Workspace]:
    ws = Workspace.open(data_dir)
    ws.memory.set_embedder(HashEmbedder("hash", DIM))
    yield ws
    QThreadPool.globalInstance().waitForDone()
    ws.close()


@pytest.fixture
def sidebar(qtbot: QtBot, workspace: Workspace) -> Iterator[MemorySidebar]:
    bridge = StoreBridge(workspace)
    yield shown_sidebar(qtbot, workspace, bridge, height=700)
    bridge.disconnect_stores()


def open_timeline(qtbot: QtBot, sidebar: MemorySidebar) -> MemoryTimeline:
    qtbot.mouseClick(sidebar.memories.timeline_button, Qt.MouseButton.LeftButton)
    timeline = sidebar.findChild(MemoryTimeline, "memoryTimeline")
    assert timeline is not None
    qtbot.waitUntil(lambda: "Today" in timeline.view.toPlainText() or "Nothing" in text(timeline))
    return timeline


def text(timeline: MemoryTimeline) -> str:
    return timeline.view.toPlainText()


def test_the_timeline_lists_what_was_learned_changed_and_forgotten(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    chat = workspace.conversations.create("Lisbon trip")
    said = workspace.conversations.append(chat.id, "user", "My sister lives in Porto")
    sister = remember(
        workspace,
        "The user's sister lives in Porto",
        origin="curator",
        source=Source(chat.id, said.id),
    )
    tea = remember(workspace, "Likes green tea")
    workspace.memory.update(tea.id, text="Likes green tea in the morning")
    workspace.memory.mark_used([sister.id])
    timeline = open_timeline(qtbot, sidebar)
    shown = text(timeline)
    assert (
        "Extracted by the curator · The user's sister lives in Porto · source in 'Lisbon trip'"
        in shown
    )
    assert "Edited by you: 'Likes green tea' → 'Likes green tea in the morning'" in shown
    assert "Used in a reply" not in shown  # uses are off at first
    assert timeline.count_label.text() == "3 events"

    workspace.memory.forget(tea.id)  # live: the open timeline follows
    qtbot.waitUntil(lambda: "Forgotten by you" in text(timeline))

    qtbot.mouseClick(timeline.filter_buttons["learned"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Extracted by the curator" not in text(timeline))
    assert "Forgotten by you" in text(timeline)
    timeline.filter_buttons["used"].click()
    qtbot.waitUntil(lambda: "Used in a reply" in text(timeline))


def test_timeline_links_open_the_memory_and_its_message(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    chat = workspace.conversations.create("Lisbon trip")
    said = workspace.conversations.append(chat.id, "user", "I moved to Lisbon")
    moved = remember(workspace, "Lives in Lisbon", origin="tool", source=Source(chat.id, said.id))
    other = remember(workspace, "Likes tea")
    timeline = open_timeline(qtbot, sidebar)
    timeline.view.anchorClicked.emit(QUrl(memory_href(moved.id)))
    selected = sidebar.memories.selected_item()
    assert selected is not None and selected.id == moved.id
    with qtbot.waitSignal(sidebar.source_requested) as opened:
        timeline.view.anchorClicked.emit(QUrl(source_href(chat.id, said.id)))
    assert opened.args == [chat.id, said.id]
    assert other.id  # listed too, without a source link
    assert "Added by you · Likes tea" in text(timeline)
    assert "Likes tea · source" not in text(timeline)

    workspace.memory.supersede(other.id, "Likes coffee", by="user", reason="changed taste")
    qtbot.waitUntil(
        lambda: (
            "Replaced by a newer memory: changed taste · Likes tea · by Likes coffee"
            in text(timeline)
        )
    )


def test_every_timeline_control_is_named_and_described(
    qtbot: QtBot, sidebar: MemorySidebar
) -> None:
    timeline = open_timeline(qtbot, sidebar)
    assert "Nothing here yet" in text(timeline)
    for widget in timeline.findChildren(QWidget):
        if isinstance(widget, QAbstractButton | QTextBrowser):
            assert widget.accessibleName(), widget.objectName()
            assert widget.accessibleDescription() or widget.toolTip(), widget.objectName()
    assert (
        sidebar.memories.timeline_button.accessibleName()
        and sidebar.memories.timeline_button.accessibleDescription()
    )


def test_a_rejected_proposal_reads_as_one_not_as_an_untitled_forgotten_memory(
    qtbot: QtBot, workspace: Workspace, sidebar: MemorySidebar
) -> None:
    (proposal,) = workspace.inbox.propose([Proposal("The user collects zqstamps")])
    assert workspace.review().reject([proposal.id]) == 1
    gone = remember(workspace, "Likes green tea")
    workspace.memory.forget(gone.id)
    shown = text(open_timeline(qtbot, sidebar))
    assert (
        "Rejected by you on the Review tab · a proposal, never a memory (its text is not kept)"
        in shown
    )
    assert "Forgotten by you · Likes green tea" in shown
    assert "a memory no longer kept" not in shown and "zqstamps" not in shown


def test_days_are_headed_and_older_events_come_on_demand() -> None:
    now = now_utc()
    assert day_heading(now, now) == "Today"
    assert day_heading(now - timedelta(days=1), now) == "Yesterday"
    events = [
        MemoryEvent("gone", "forgotten", now, by="user"),
        MemoryEvent("gone", "created", now - timedelta(days=3), by="user"),
    ]
    colors = {"muted": "#888888"}
    page = TimelinePage(events, {}, {}, more=True)
    html = timeline_html(page, colors, now)
    assert "a memory no longer kept" in html  # a memory forgotten before this session
    assert html.index("Today") < html.index(day_heading(events[1].at, now))
    assert "older:" in html


def test_a_timeline_source_opens_the_conversation_at_that_message(
    qtbot: QtBot, data_dir: Path
) -> None:
    store = ConversationStore(data_dir)
    chat = store.create("Lisbon trip").id
    said = store.append(chat, "user", "I moved to Lisbon last week")
    store.append(chat, "assistant", "Noted: you live in Lisbon now.")
    other = store.create("Tax forms").id
    store.append(other, "user", "Forms")
    store.close()
    window = shown_window(qtbot, data_dir)
    window.workspace.memory.add("Lives in Lisbon", origin="tool", source=Source(chat, said.id))
    window.conversations.select(other)
    assert window.menu.memory_timeline.isEnabled()
    window.menu.memory_timeline.trigger()  # View > Memory Timeline
    timeline = window.sidebar.findChild(MemoryTimeline, "memoryTimeline")
    assert timeline is not None and timeline.isVisible()
    qtbot.waitUntil(lambda: "Lisbon trip" in text(timeline))
    timeline.view.anchorClicked.emit(QUrl(source_href(chat, said.id)))
    assert window.conversations.current_id() == chat
    assert "I moved to Lisbon" in window.chat.toPlainText()
    window.close()
