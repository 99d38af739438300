"""The selected memory in full, under the list: its text, where it came from, its links to
other memories, why a search found it, and its history."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QWidget

from assistant.memory import MemoryItem, SearchHit, SemanticMemory, Source
from assistant.memory.items import MemoryEvent
from assistant.memory.why import details_text, why_text
from assistant.ui.memory.html import css, paragraphs, section
from assistant.ui.memory.model import caption
from assistant.ui.memory.wording import (
    ORIGIN_ICONS,
    event_text,
    no_source_reason,
    origin_text,
    scope_text,
)
from assistant.ui.themed_page import ThemedPage
from assistant.ui.times import day_text
from assistant.ui.wording import count, shorten

EMPTY_DETAIL = "Select a memory to see where it came from, why it is here and its history."
WHY_ANCHOR = "why"
LINK_CHARS = 60  # a linked memory is named by the start of its text


@dataclass(frozen=True)
class DetailFacts:
    """What the detail page shows of a memory (looked up by the caller)."""

    item: MemoryItem
    hit: SearchHit | None = None  # when the memory is a search result
    source_exists: bool = False  # the conversation of its source is still there
    show_numbers: bool = False  # "Details" of the ranking unfolded
    origin: str = ""  # where it came from, in words
    history: Sequence[MemoryEvent] = ()  # oldest first
    history_pending: bool = False  # not read from the log yet (just after start-up)
    related: Mapping[str, MemoryItem] = field(default_factory=dict)  # linked memories by id
    titles: Mapping[str, str] = field(default_factory=dict)  # conversation titles by id
    projects: Mapping[str, str] = field(default_factory=dict)  # project names by id

    @classmethod
    def gather(
        cls,
        item: MemoryItem,
        hit: SearchHit | None,
        memory: SemanticMemory,
        titles: Mapping[str, str],
        *,
        show_numbers: bool = False,
        projects: Mapping[str, str] | None = None,
    ) -> DetailFacts:
        """Look up what the page of `item` shows: its history, the memories it links to, and
        whether its source conversation is still there (`titles`: the conversations')."""
        pending = not memory.history_loaded  # the worker reads it: never on the GUI thread
        history = [] if pending else memory.history(item.id)
        linked = {
            *item.supersedes,
            *item.rests_on,
            *(e.related_id for e in history if e.related_id is not None),
        }
        if item.superseded_by is not None:
            linked.add(item.superseded_by)
        return cls(
            item,
            hit,
            source_exists=item.source is not None and item.source.conversation_id in titles,
            show_numbers=show_numbers,
            origin=origin_text(item, titles.get),
            history=history,
            history_pending=pending,
            related={i: found for i in linked if (found := memory.get(i)) is not None},
            titles=titles,
            projects=projects or {},
        )


def source_href(conversation_id: str, message_id: str | None) -> str:
    """The link that opens a message (a memory's source, a reply that used it)."""
    return f"source:{quote(conversation_id, safe='')}/{quote(message_id or '', safe='')}"


def memory_href(memory_id: str) -> str:
    """The link that selects a memory in the sidebar."""
    return f"memory:{quote(memory_id, safe='')}"


def link(href: str, text: str) -> str:
    """An HTML link, escaped."""
    return f"<a href='{html.escape(href, quote=True)}'>{html.escape(text)}</a>"


def memory_link(memory_id: str, related: Mapping[str, MemoryItem]) -> str:
    """A link to a memory named by the start of its text (or a note that it is gone)."""
    item = related.get(memory_id)
    if item is None:
        return "<i>a memory no longer kept</i>"
    return link(memory_href(memory_id), shorten(item.text, LINK_CHARS))


def message_link(source: Source | None, titles: Mapping[str, str], text: str) -> str:
    """A link to a message, `text` followed by its conversation's title; "" if it is gone."""
    if source is None or source.conversation_id not in titles:
        return ""
    href = source_href(source.conversation_id, source.message_id)
    return f"{link(href, text)} in '{html.escape(titles[source.conversation_id])}'"


def _validity(item: MemoryItem) -> str:
    if item.valid_from is not None and item.valid_to is not None:
        return f"Held from {day_text(item.valid_from)} to {day_text(item.valid_to)}"
    if item.valid_to is not None:
        return f"Held until {day_text(item.valid_to)}"
    if item.valid_from is not None:
        return f"Holds since {day_text(item.valid_from)}"
    return ""


def event_links(
    event: MemoryEvent, related: Mapping[str, MemoryItem], titles: Mapping[str, str]
) -> list[str]:
    """Links of an event (detail and timeline): the memory merged in or the successor, and the
    message it came from (the reply, for a use), if still there."""
    links = []
    if event.related_id is not None and event.type in ("merged", "superseded"):
        word = "by" if event.type == "superseded" else "with"
        links.append(f"{word} {memory_link(event.related_id, related)}")
    label = "the reply" if event.type == "used" else "source"
    message = message_link(event.source, titles, label)
    if message:
        links.append(message)
    return links


def history_rows(facts: DetailFacts, colors: Mapping[str, str]) -> str:
    """The history as table rows, oldest first; a run of uses is one row."""
    rows: list[str] = []
    events = list(facts.history)
    n = 0
    while n < len(events):
        event = events[n]
        run = 1
        while event.type == "used" and n + run < len(events) and events[n + run].type == "used":
            run += 1
        last = events[n + run - 1]
        if run > 1:
            text = f"Used in {count(run, 'reply', 'replies')}"
            links = message_link(last.source, facts.titles, "the last")
            first_day, last_day = day_text(event.at, short=True), day_text(last.at, short=True)
            when = first_day if first_day == last_day else f"{first_day} to {last_day}"
        else:
            text = event_text(event, facts.item, facts.projects)
            links = " · ".join(event_links(event, facts.related, facts.titles))
            when = day_text(event.at, short=True)
        rows.append(
            f"<tr><td style='color:{colors['muted']}; white-space:nowrap'>{html.escape(when)}"
            f"</td><td>{html.escape(text)}{' · ' + links if links else ''}</td></tr>"
        )
        n += run
    return "".join(rows)


def detail_html(facts: DetailFacts, colors: Mapping[str, str]) -> str:
    """A memory's page as HTML; `colors` as from `memory_html.css`."""
    item = facts.item
    muted = colors["muted"]
    icon = ORIGIN_ICONS.get(item.origin, "")
    parts = [
        f"<p style='margin-top:0'>{paragraphs(item.text)}</p>",
        f"<p style='color:{muted}; font-size:small'>"
        f"{html.escape(caption(item))}{' · pinned' if item.pinned else ''}</p>",
    ]
    hit = facts.hit  # first: what a search is for
    if hit is not None:
        parts.append(f"<a name='{WHY_ANCHOR}'></a>" + section("Why this result", muted))
        toggle = "Hide details" if facts.show_numbers else "Details"
        parts.append(f"<p>{html.escape(why_text(hit))} · {link('details:', toggle)}</p>")
        if facts.show_numbers:
            parts.append(
                f"<p style='color:{muted}; font-size:small'>{paragraphs(details_text(hit))}</p>"
            )
    if facts.origin:
        parts.append(f"<p>{icon} {html.escape(facts.origin)}</p>")
    source = item.source
    if source is not None and facts.source_exists:
        parts.append(
            f"<p>{link(source_href(source.conversation_id, source.message_id), 'Show source')}</p>"
        )
    else:
        reason = no_source_reason(item, facts.source_exists)
        parts.append(f"<p style='color:{muted}'>{html.escape(reason)}</p>")
    facts_lines = []
    if facts.projects:  # where it is used, once there are projects
        scope = scope_text(item.project, facts.projects)
        facts_lines.append(html.escape(f"Scope: {scope} ({_used_in(item.project)})"))
    validity = _validity(item)
    if validity:
        facts_lines.append(html.escape(validity))
    if item.superseded_by is not None:
        facts_lines.append(f"Replaced by {memory_link(item.superseded_by, facts.related)}")
    facts_lines.extend(f"Replaces {memory_link(i, facts.related)}" for i in item.supersedes)
    if item.rests_on:
        links = ", ".join(memory_link(i, facts.related) for i in item.rests_on)
        facts_lines.append(f"Rests on {links}")
    if facts_lines:
        parts.append("<p>" + "<br>".join(facts_lines) + "</p>")
    if facts.history_pending:
        parts.append(section("History", muted))
        parts.append("<p>Reading the history…</p>")
    elif facts.history:
        parts.append(section("History", muted))
        parts.append(
            "<table cellspacing='0' cellpadding='2'>" + history_rows(facts, colors) + "</table>"
        )
    return "".join(parts)


class MemoryDetailView(ThemedPage):
    """The selected memory in full; its links open a message or another memory."""

    source_requested = Signal(str, str)  # conversation id, message id ("" if unknown)
    memory_requested = Signal(str)  # memory id
    numbers_toggled = Signal()  # "Details" / "Hide details" of the ranking

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, margin=10)
        self.setObjectName("memoryDetail")
        self.setAccessibleName("Memory details")
        self.setAccessibleDescription(
            "The selected memory in full: where it came from, why a search found it, its history"
        )
        self.anchorClicked.connect(self._on_anchor)
        self._shown: str | None = None  # the id of the memory shown
        self.show_facts(None)

    def show_facts(self, facts: DetailFacts | None) -> None:
        """Show a memory's page, or a hint when none is selected."""
        if facts is None:
            self._shown = None
            self.show_page(
                lambda palette: (
                    f"<p style='color:{css(palette)['muted']}'>{html.escape(EMPTY_DETAIL)}</p>"
                )
            )
            return
        bar = self.verticalScrollBar()
        keep = bar.value() if facts.item.id == self._shown else 0  # a refresh stays in place
        self._shown = facts.item.id
        self.show_page(lambda palette: detail_html(facts, css(palette)))
        bar.setValue(keep)

    def _on_anchor(self, url: QUrl) -> None:
        open_link(url, self.source_requested.emit, self.memory_requested.emit)
        if url.toString() == "details:":
            self.numbers_toggled.emit()


def open_link(
    url: QUrl, on_source: Callable[[str, str], object], on_memory: Callable[[str], object]
) -> None:
    """Call `on_source(conversation_id, message_id)` or `on_memory(memory_id)` for a link."""
    scheme, _, rest = url.toString().partition(":")
    if scheme == "source":
        conversation_id, _, message_id = rest.partition("/")
        on_source(unquote(conversation_id), unquote(message_id))
    elif scheme == "memory":
        on_memory(unquote(rest))


def _used_in(project: str | None) -> str:
    return "used in every chat" if project is None else "used in its chats only"
