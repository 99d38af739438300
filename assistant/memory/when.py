"""The time a query asks about: "in May 2023", "2022", "last week", "yesterday"."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH_YEAR = re.compile(r"\b(" + "|".join(MONTHS) + r")\.?,?\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:in|during|of|since|from)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_RELATIVE = re.compile(
    r"\b(yesterday|today|this week|last week|this month|last month|this year|last year)\b",
    re.IGNORECASE,
)

Span = tuple[datetime, datetime]  # start inclusive, end exclusive, in UTC


def time_span(query: str, now: datetime | None = None) -> Span | None:
    """The period `query` names, if any: a month of a year, a year ("in 2022"), or a period
    relative to `now` (yesterday, today, this or last week, month or year)."""
    if match := _MONTH_YEAR.search(query):
        year, month = int(match[2]), MONTHS[match[1].lower()]
        return _month(year, month)
    if match := _YEAR.search(query):
        year = int(match[1])
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    if match := _RELATIVE.search(query):
        return _relative(match[1].lower(), now or datetime.now(UTC))
    return None


def _month(year: int, month: int) -> Span:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _relative(phrase: str, now: datetime) -> Span:
    today = datetime(now.year, now.month, now.day, tzinfo=UTC)
    week = today - timedelta(days=today.weekday())
    spans = {
        "today": (today, today + timedelta(days=1)),
        "yesterday": (today - timedelta(days=1), today),
        "this week": (week, week + timedelta(days=7)),
        "last week": (week - timedelta(days=7), week),
        "this month": _month(now.year, now.month),
        "last month": _month(now.year - (now.month == 1), (now.month - 2) % 12 + 1),
        "this year": (
            datetime(now.year, 1, 1, tzinfo=UTC),
            datetime(now.year + 1, 1, 1, tzinfo=UTC),
        ),
        "last year": (
            datetime(now.year - 1, 1, 1, tzinfo=UTC),
            datetime(now.year, 1, 1, tzinfo=UTC),
        ),
    }
    return spans[phrase]
