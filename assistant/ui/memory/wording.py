"""Memories in words: why a search found one, where one came from, why it has no source,
and what happened to it (its history)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from assistant.memory import MemoryItem, SearchHit
from assistant.memory.items import MemoryEvent, Origin
from assistant.timestamps import now_utc
from assistant.ui.times import day_text, relative_time
from assistant.ui.wording import count, shorten

TitleOf = Callable[[str], str | None]  # a conversation's title, None if it is gone

ORIGIN_ICONS: dict[str, str] = {
    "user": "✎",
    "tool": "↳",
    "curator": "⚙",
    "import": "⇩",
    "reflection": "✦",
}
_BY: dict[str, str] = {
    "user": "you",
    "tool": "the assistant",
    "curator": "the curator",
    "import": "an import",
    "reflection": "a reflection",
}

IMPORTANT = 0.7  # from this importance on, a memory is "important"
RECENT = timedelta(days=30)  # a use or an addition this recent helps a memory rank


def quoted_list(words: tuple[str, ...] | list[str]) -> str:
    """'a', 'a' and 'b', 'a', 'b' and 'c'."""
    quoted = [f"'{w}'" for w in words]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def closeness(similarity: float) -> str:
    """How close in meaning a cosine similarity is, in words."""
    if similarity >= 0.6:
        return "close in meaning"
    if similarity >= 0.45:
        return "related in meaning"
    return "loosely related in meaning"


def why_text(hit: SearchHit, now: datetime | None = None) -> str:
    """Why a search found a memory, in words:
    "Matches 'sister' and 'Porto'; close in meaning (0.71); important; used yesterday"."""
    now = now or now_utc()
    item = hit.item
    parts: list[str] = []
    if hit.matched:
        parts.append(f"matches {quoted_list(hit.matched)}")
    elif hit.keyword_rank is not None:
        parts.append("shares words with the search")
    if hit.similarity is not None:
        parts.append(f"{closeness(hit.similarity)} ({hit.similarity:.2f})")
    if item.pinned:
        parts.append("pinned")
    if item.importance >= IMPORTANT:
        parts.append("important")
    if item.access_count and now - item.last_accessed <= RECENT:
        parts.append(f"used {relative_time(item.last_accessed, now)}")
    elif now - item.created_at <= RECENT:
        parts.append(f"added {relative_time(item.created_at, now)}")
    text = "; ".join(parts) or "ranked by importance and recency"
    return text[0].upper() + text[1:]


def details_text(hit: SearchHit) -> str:
    """The numbers behind a hit's rank, for "Details"."""
    lines = [f"Score {hit.score:.3f}"]
    if hit.keyword_rank is not None:
        lines.append(f"Keyword rank {hit.keyword_rank} (BM25 {hit.keyword_score:.2f})")
    if hit.vector_rank is not None:
        lines.append(f"Meaning rank {hit.vector_rank} (similarity {hit.similarity:.2f})")
    lines.append(f"Importance +{hit.importance_boost:.3f} (importance {hit.item.importance:.2f})")
    lines.append(f"Recency +{hit.recency_boost:.3f}")
    return "\n".join(lines)


def imported_from(item: MemoryItem) -> str | None:
    """ "ChatGPT" for a memory tagged "Imported from ChatGPT", else None."""
    for tag in item.tags:
        if tag.lower().startswith("imported from "):
            return tag[len("imported from ") :]
    return None


def origin_short(item: MemoryItem) -> str:
    """Where a memory came from, in a few words: "You added", "Extracted by the curator"."""
    if item.origin == "user":
        return "You added"
    if item.origin == "tool":
        return "Remembered by the assistant"
    if item.origin == "curator":
        return "Extracted by the curator"
    if item.origin == "import":
        source = imported_from(item)
        return f"Imported from {source}" if source else "Imported"
    return f"Insight from {count(len(item.rests_on), 'memory', 'memories')}"


def origin_text(item: MemoryItem, title_of: TitleOf) -> str:
    """Where a memory came from: "Remembered in 'Lisbon trip' on 3 March"."""
    when = f"on {day_text(item.created_at)}"
    title = title_of(item.source.conversation_id) if item.source is not None else None
    where = f"in '{title}' " if title else ""
    if item.origin == "user":
        return f"You added {when}"
    if item.origin == "tool":
        return f"Remembered {where}{when}"
    if item.origin == "curator":
        return f"Extracted by the curator {where.replace('in ', 'from ', 1)}{when}"
    if item.origin == "import":
        return f"{origin_short(item)} {when}"
    return f"{origin_short(item)}, {when}"


def no_source_reason(item: MemoryItem, conversation_exists: bool) -> str:
    """Why "Show source" cannot open the message a memory came from."""
    if item.source is not None and not conversation_exists:
        return "Its conversation was deleted"
    if item.origin == "user":
        return "No source: you added it yourself"
    if item.origin == "import":
        return "No source: it was imported without its conversation"
    if item.origin == "reflection":
        return "No single source: drawn from other memories"
    return "No source: the message was not recorded"


def by_text(by: Origin | None) -> str:
    """Who did something, after "by": "you", "the curator"."""
    return _BY.get(by or "", "")


def _quote(text: str | None, limit: int = 80) -> str:
    return f"'{shorten(text or '', limit)}'"


def event_text(event: MemoryEvent, item: MemoryItem | None = None) -> str:
    """One event of a memory's history in words: "Importance 0.8 → 0.6, not used for 90 days".

    `item`, the memory, if known, names the source of an import ("Imported from ChatGPT")."""
    who = f" by {by_text(event.by)}" if event.by else ""
    kind = event.type
    if kind == "created" and event.by == "import" and item is not None:
        return origin_short(item)
    if kind == "created":
        return {
            "user": "Added by you",
            "tool": "Remembered by the assistant",
            "curator": "Extracted by the curator",
            "import": "Imported",
            "reflection": "Written by a reflection",
        }.get(event.by or "", "Added")
    if kind == "edited":
        return f"Edited{who}: {_quote(event.text_before)} → {_quote(event.text_after)}"
    if kind == "merged":
        return f"Refined{who}: was {_quote(event.text_before)}"
    if kind == "superseded":
        reason = f": {event.reason}" if event.reason else ""
        return f"Replaced by a newer memory{reason}"
    if kind == "decayed":
        before, after = event.importance_before, event.importance_after
        change = (
            f"Importance {before:.1f} → {after:.1f}"
            if before is not None and after is not None
            else "Importance lowered"
        )
        return f"{change}, {event.reason}" if event.reason else change
    if kind == "used":
        return "Used in a reply"
    if kind == "archived":
        return f"Archived{who}" + (f": {event.reason}" if event.reason else "")
    return f"{kind.capitalize()}{who}"  # pinned, unpinned, forgotten, restored
