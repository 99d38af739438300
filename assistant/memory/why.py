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


def spread_text(common: tuple[tuple[str, int], ...], searched: int) -> str:
    """Which memories have these matched words: "'Porto', which every memory has", "'tea' and
    'milk', which 5 of 6 memories have"."""
    words = quoted_list([word for word, _ in common])
    fewest = min(have for _, have in common)
    if searched and fewest >= searched:
        return f"{words}, which every memory has"
    return f"{words}, which {fewest} of {searched} memories have"


def why_text(hit: SearchHit, now: datetime | None = None) -> str:
    """Why a search found a memory, in words:
    "Matches 'sister' and 'Porto'; close in meaning (0.71); important; used yesterday".

    A matched word that most memories have is named as such: it does not set this memory apart
    from the others that have it (BM25 gives it next to no weight). Pinning is not a reason:
    search does not favour pinned memories.
    """
    now = now or now_utc()
    item = hit.item
    parts: list[str] = []
    common = {word for word, _ in hit.common}
    telling = [word for word in hit.matched if word not in common]
    if telling and hit.common:
        spread = spread_text(hit.common, hit.searched)
        parts.append(f"matches {quoted_list(telling)} (and {spread})")
    elif telling:
        parts.append(f"matches {quoted_list(telling)}")
    elif hit.common:
        spread = spread_text(hit.common, hit.searched)
        parts.append(f"matches {spread}, so it does not set this one apart")
    elif hit.keyword_rank is not None:
        parts.append("shares words with the search")
    if hit.similarity is not None:
        parts.append(f"{closeness(hit.similarity)} ({hit.similarity:.2f})")
    if item.importance >= IMPORTANT:
        parts.append("important")
    if item.access_count and now - item.last_accessed <= RECENT:
        parts.append(f"used {relative_time(item.last_accessed, now)}")
    elif now - item.created_at <= RECENT:
        parts.append(f"added {relative_time(item.created_at, now)}")
    text = "; ".join(parts) or "ranked by importance and recency"
    return text[0].upper() + text[1:]


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def details_text(hit: SearchHit) -> str:
    """The score of a hit as the sum of its parts, one line each, for "Details"."""
    lines = [f"Score {hit.score:.3f}, the sum of:"]
    if hit.keyword_rank is not None:
        if hit.common and len(hit.common) == len(hit.matched):
            spread = spread_text(hit.common, hit.searched)
            line = f"about the same for each memory with {spread}"
        else:
            score = max(hit.keyword_score or 0.0, 0.0)
            line = f"{ordinal(hit.keyword_rank)} by keywords (keyword score {score:.2f})"
        lines.append(f"Keywords +{hit.keyword_part:.3f}: {line}")
    else:
        lines.append("Keywords +0.000: none of the search's words")
    if hit.vector_rank is not None and hit.similarity is not None:
        lines.append(
            f"Meaning +{hit.meaning_part:.3f}: {ordinal(hit.vector_rank)} by meaning "
            f"(similarity {hit.similarity:.2f})"
        )
    lines.append(f"Importance +{hit.importance_boost:.3f} (importance {hit.item.importance:.2f})")
    item, now = hit.item, now_utc()
    when = (
        f"used {relative_time(item.last_accessed, now)}"
        if item.access_count
        else (f"added {relative_time(item.created_at, now)}, not used since")
    )
    lines.append(f"Recency +{hit.recency_boost:.3f} ({when})")
    rest = (
        hit.score - hit.keyword_part - hit.meaning_part - hit.importance_boost - hit.recency_boost
    )
    if rest > 0.0005:
        lines.append(f"Date named in the search +{rest:.3f}")
    return "\n".join(lines)
