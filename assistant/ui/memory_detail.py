"""The selected memory in full, under the list: its text, source, and why a search found it."""

from __future__ import annotations

import html
from dataclasses import dataclass
from urllib.parse import quote, unquote

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QFrame, QTextBrowser, QWidget

from assistant.memory import MemoryItem, SearchHit
from assistant.ui.memory_html import css, paragraphs, section
from assistant.ui.memory_model import caption
from assistant.ui.memory_wording import details_text, no_source_reason, why_text

EMPTY_DETAIL = "Select a memory to see where it came from and why it is here."
WHY_ANCHOR = "why"


@dataclass(frozen=True)
class DetailFacts:
    """What the detail page shows of a memory besides the item (looked up by the caller)."""

    item: MemoryItem
    hit: SearchHit | None = None  # when the memory is a search result
    source_exists: bool = False  # the conversation of its source is still there
    show_numbers: bool = False  # "Details" of the ranking unfolded


def _link(href: str, text: str) -> str:
    return f"<a href='{html.escape(href, quote=True)}'>{html.escape(text)}</a>"


def source_href(conversation_id: str, message_id: str | None) -> str:
    """The link that opens a memory's source message."""
    return f"source:{quote(conversation_id, safe='')}/{quote(message_id or '', safe='')}"


def detail_html(facts: DetailFacts, colors: dict[str, str]) -> str:
    """A memory's page as HTML; `colors` as from `memory_html.css`."""
    item = facts.item
    muted = colors["muted"]
    parts = [
        f"<p style='margin-top:0'>{paragraphs(item.text)}</p>",
        f"<p style='color:{muted}; font-size:small'>"
        f"{html.escape(caption(item))}{' · pinned' if item.pinned else ''}</p>",
    ]
    source = item.source
    if source is not None and facts.source_exists:
        parts.append(
            f"<p>{_link(source_href(source.conversation_id, source.message_id), 'Show source')}</p>"
        )
    else:
        reason = no_source_reason(item, facts.source_exists)
        parts.append(f"<p style='color:{muted}'>{html.escape(reason)}</p>")
    hit = facts.hit
    if hit is not None:
        parts.append(f"<a name='{WHY_ANCHOR}'></a>" + section("Why this result", muted))
        toggle = "Hide details" if facts.show_numbers else "Details"
        parts.append(f"<p>{html.escape(why_text(hit))} · {_link('details:', toggle)}</p>")
        if facts.show_numbers:
            parts.append(
                f"<p style='color:{muted}; font-size:small'>{paragraphs(details_text(hit))}</p>"
            )
    return "".join(parts)


class MemoryDetailView(QTextBrowser):
    """The selected memory in full; its links open the source or another memory."""

    source_requested = Signal(str, str)  # conversation id, message id ("" if unknown)
    numbers_toggled = Signal()  # "Details" / "Hide details" of the ranking

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryDetail")
        self.setAccessibleName("Memory details")
        self.setAccessibleDescription(
            "The selected memory in full: where it came from and why a search found it"
        )
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setOpenLinks(False)
        self.document().setDocumentMargin(10)
        self.anchorClicked.connect(self._on_anchor)
        self._shown: str | None = None  # the id of the memory shown
        self.show_facts(None)

    def show_facts(self, facts: DetailFacts | None) -> None:
        """Show a memory's page, or a hint when none is selected."""
        colors = css(self.palette())
        if facts is None:
            self._shown = None
            self.setHtml(f"<p style='color:{colors['muted']}'>{html.escape(EMPTY_DETAIL)}</p>")
            return
        bar = self.verticalScrollBar()
        keep = bar.value() if facts.item.id == self._shown else 0  # a refresh stays in place
        self._shown = facts.item.id
        self.setHtml(detail_html(facts, colors))
        bar.setValue(keep)

    def _on_anchor(self, url: QUrl) -> None:
        target = url.toString()
        scheme, _, rest = target.partition(":")
        if scheme == "source":
            conversation_id, _, message_id = rest.partition("/")
            self.source_requested.emit(unquote(conversation_id), unquote(message_id))
        elif scheme == "details":
            self.numbers_toggled.emit()
