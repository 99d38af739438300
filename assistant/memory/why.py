"""Why a search found a memory, in words: for the sidebar's "Why this result" and for the
memory search that `assistant mcp` offers other apps."""

from __future__ import annotations

from datetime import datetime, timedelta

from assistant.memory.items import SearchHit
from assistant.timestamps import now_utc, relative_time

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
