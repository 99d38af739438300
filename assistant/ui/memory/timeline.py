"""The memory timeline: what was learned, changed and forgotten, by day, newest first.

Each entry links to its memory (selected in the sidebar) and to the message it came from
(the conversation opens at that message).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from assistant.memory import MemoryItem, SemanticMemory
from assistant.memory.items import EventType, MemoryEvent
from assistant.memory.tombstones import REJECTED_PROPOSAL
from assistant.timestamps import now_utc
from assistant.ui.bridge import StoreBridge
from assistant.ui.debounce import Debounced
from assistant.ui.jobs import LatestJob, Progress
from assistant.ui.memory.detail import event_links, memory_link, open_link
from assistant.ui.memory.html import css, empty
from assistant.ui.memory.wording import event_text
from assistant.ui.notice_bar import NoticeBar
from assistant.ui.themed_page import ThemedPage
from assistant.ui.times import day_text
from assistant.ui.wording import count

PAGE = 200  # entries shown at first, and added by "Show older"
REFRESH_MS = 400  # after memory changes settle


@dataclass(frozen=True)
class EventGroup:
    """A filter of the timeline: a name for the user and the event types it shows."""

    key: str
    label: str
    description: str
    types: tuple[EventType, ...]
    shown: bool = True  # at first


GROUPS = (
    EventGroup(
        "learned", "Learned", "Memories added, remembered, extracted or imported", ("created",)
    ),
    EventGroup(
        "changed",
        "Changed",
        "Edits, refinements, replacements, pins and restores",
        ("edited", "merged", "superseded", "pinned", "unpinned", "restored"),
    ),
    EventGroup(
        "faded",
        "Faded",
        "Importance lowered by disuse, and memories archived",
        ("decayed", "archived"),
    ),
    EventGroup(
        "forgotten", "Forgotten", "Memories you forgot, and proposals you rejected", ("forgotten",)
    ),
    EventGroup("used", "Used", "Each time a memory was put in a reply's prompt", ("used",), False),
)


@dataclass(frozen=True)
class TimelinePage:
    """What the timeline shows: events newest first, their memories, conversation titles."""

    events: Sequence[MemoryEvent]
    items: Mapping[str, MemoryItem]
    titles: Mapping[str, str]
    more: bool  # there are older events than those shown


def day_heading(moment: datetime, now: datetime | None = None) -> str:
    """ "Today", "Yesterday", or "Monday 23 November"."""
    day = moment.astimezone().date()
    today = (now or now_utc()).astimezone().date()
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    return f"{moment.astimezone():%A} {day_text(moment)}"


def _entry(event: MemoryEvent, page: TimelinePage, colors: Mapping[str, str]) -> str:
    item = page.items.get(event.memory_id)
    if event.reason == REJECTED_PROPOSAL and item is None:
        links = ["<i>a proposal, never a memory (its text is not kept)</i>"]
    else:
        links = [memory_link(event.memory_id, page.items)]
    links += event_links(event, page.items, page.titles)
    return (
        f"<tr><td width='48' style='color:{colors['muted']}'>"
        f"{event.at.astimezone():%H:%M}</td>"
        f"<td>{html.escape(event_text(event, item))} · {' · '.join(links)}</td></tr>"
    )


def timeline_html(
    page: TimelinePage, colors: Mapping[str, str], now: datetime | None = None
) -> str:
    """The events grouped by day, newest first, as HTML."""
    if not page.events:
        return empty(
            "Nothing here yet",
            "What Assistant learns, changes and forgets shows here, day by day.",
            colors["muted"],
        )
    parts: list[str] = []
    heading = ""
    for event in page.events:
        day = day_heading(event.at, now)
        if day != heading:
            if heading:
                parts.append("</table>")
            heading = day
            parts.append(
                f"<p style='margin-top:14px; margin-bottom:4px; font-weight:600'>"
                f"{html.escape(day)}</p><table width='100%' cellspacing='0' cellpadding='3'>"
            )
        parts.append(_entry(event, page, colors))
    parts.append("</table>")
    if page.more:
        parts.append("<p><a href='older:'>Show older</a></p>")
    return "".join(parts)


class MemoryTimeline(QDialog):
    """A window with the memory timeline, filtered by kind of event, live as memory changes."""

    memory_requested = Signal(str)  # memory id
    source_requested = Signal(str, str)  # conversation id, message id

    def __init__(
        self,
        memory: SemanticMemory,
        bridge: StoreBridge,
        titles: Callable[[], dict[str, str]],
        parent: QWidget | None = None,
        *,
        actions: Sequence[QAction] = (),
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memoryTimeline")
        self.setWindowTitle("Memory Timeline")
        self.setAccessibleName("Memory Timeline")
        self.setAccessibleDescription("What Assistant learned, changed and forgot, by day")
        self.resize(620, 620)
        self._memory = memory
        self._titles = titles
        self._limit = PAGE
        self._load: LatestJob[TimelinePage] = LatestJob(self._on_loaded, self._on_failed, self)

        filters = QHBoxLayout()
        filters.setSpacing(10)
        caption = QLabel("Show:", self)
        filters.addWidget(caption)
        self.filter_buttons: dict[str, QCheckBox] = {}
        for group in GROUPS:
            button = QCheckBox(group.label, self)
            button.setObjectName(f"timelineFilter{group.key.capitalize()}")
            button.setChecked(group.shown)
            button.setToolTip(group.description)
            button.setAccessibleName(f"Show {group.label.lower()}")
            button.setAccessibleDescription(group.description)
            button.toggled.connect(self._on_filter_toggled)
            filters.addWidget(button)
            self.filter_buttons[group.key] = button
        filters.addStretch(1)
        self.count_label = QLabel(self)
        self.count_label.setObjectName("memoryTimelineCount")
        filters.addWidget(self.count_label)
        for act in actions:
            tool = QToolButton(self)
            tool.setObjectName(f"{act.objectName()}Button")
            tool.setDefaultAction(act)
            tool.setAccessibleName(act.text())
            tool.setAccessibleDescription(act.toolTip())
            filters.addWidget(tool)

        self.view = ThemedPage(self, margin=12)
        self.view.setObjectName("memoryTimelineView")
        self.view.setAccessibleName("Timeline")
        self.view.setAccessibleDescription(
            "Events newest first, by day; each links to its memory and the message it came from"
        )
        self.view.setFrameShape(QFrame.Shape.StyledPanel)
        self.view.anchorClicked.connect(self._on_anchor)

        self.notice = NoticeBar(self)  # Reflect Now's answer, asked here

        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.notice)
        layout.addWidget(self.view, 1)

        self._refresh_soon = Debounced(REFRESH_MS, self.refresh, self)
        bridge.memory_changed.connect(self._on_memory_changed)
        bridge.conversation_changed.connect(self._on_memory_changed)

    def types(self) -> list[EventType]:
        """The event types the filters let through."""
        return [
            t for group in GROUPS if self.filter_buttons[group.key].isChecked() for t in group.types
        ]

    def refresh(self) -> None:
        """Load the events in the background and show them."""
        limit, types = self._limit, self.types()
        memory, titles = self._memory, self._titles()

        def load(_progress: Progress) -> TimelinePage:
            events = memory.timeline(types=types, limit=limit + 1) if types else []
            shown = events[:limit]
            ids = {e.memory_id for e in shown} | {e.related_id for e in shown if e.related_id}
            items = {i: item for i in ids if (item := memory.get(i)) is not None}
            return TimelinePage(shown, items, titles, len(events) > limit)

        self._load.run(load)

    def _on_loaded(self, page: TimelinePage) -> None:
        bar = self.view.verticalScrollBar()
        keep = bar.value()
        self.view.show_page(lambda palette: timeline_html(page, css(palette)))
        bar.setValue(keep)
        n = len(page.events)
        self.count_label.setText(
            (f"latest {count(n, 'event')}" if page.more else count(n, "event")) if n else ""
        )

    def _on_failed(self, message: str) -> None:
        self.view.setPlainText(f"The timeline could not be read: {message}")

    def _on_filter_toggled(self, _checked: bool) -> None:
        self._limit = PAGE
        self.refresh()

    def _on_memory_changed(self, *_args: object) -> None:
        if self.isVisible():
            self._refresh_soon.trigger()

    def _on_anchor(self, url: QUrl) -> None:
        if url.toString() == "older:":
            self._limit += PAGE
            self.refresh()
            return
        open_link(url, self.source_requested.emit, self.memory_requested.emit)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        """Load the events each time the window opens."""
        super().showEvent(event)
        self.refresh()
