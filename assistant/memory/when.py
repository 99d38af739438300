"""The time a query asks about: "on 3 June, 2023", "in May 2023", "2022", "in June", "last May",
"last week", "two weeks ago", "yesterday"; what is relative is resolved against `now`."""

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
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_NAMES})\.?,?\s+((?:19|20)\d\d)\b", re.IGNORECASE
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b", re.IGNORECASE
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?,?\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:in|during|of|since|from)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
# A month without a year: after "in", "during", "last" or "this" only ("may I ask" is no May).
_MONTH = re.compile(rf"\b(in|during|last|this)\s+({_MONTH_NAMES})\b(?!\s*\d)", re.IGNORECASE)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_AGO = re.compile(
    r"\b(a|an|one|two|three|four|five|six|\d{1,2})\s+(day|week|month)s?\s+ago\b", re.IGNORECASE
)
_RELATIVE = re.compile(
    r"\b(yesterday|today|this week|last week|this month|last month|this year|last year)\b",
    re.IGNORECASE,
)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30}

Span = tuple[datetime, datetime]  # start inclusive, end exclusive, in UTC


def time_span(query: str, now: datetime | None = None) -> Span | None:
    """The period `query` names, if any: a day (give or take one: time zones, a late night), a
    month of a year, a year ("in 2022"), or a period relative to `now`: a month without a
    year (the last one up to now: "in June", "last May"), "N days, weeks or months ago"
    (give or take half a unit), yesterday, today, this or last week, month or year."""
    if match := _DAY_MONTH_YEAR.search(query):
        return _day(int(match[3]), MONTHS[match[2].lower()], int(match[1]))
    if match := _MONTH_DAY_YEAR.search(query):
        return _day(int(match[3]), MONTHS[match[1].lower()], int(match[2]))
    if match := _MONTH_YEAR.search(query):
        year, month = int(match[2]), MONTHS[match[1].lower()]
        return _month(year, month)
    if match := _YEAR.search(query):
        year = int(match[1])
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    now = now or datetime.now(UTC)
    if match := _MONTH.search(query):
        month = MONTHS[match[2].lower()]
        # "last May" in May means a year ago; "in May" or "this May" in May, this one.
        back = month > now.month or (month == now.month and match[1].lower() == "last")
        return _month(now.year - back, month)
    if match := _AGO.search(query):
        count = _NUMBERS.get(match[1].lower()) or int(match[1])
        days = _UNIT_DAYS[match[2].lower()]
        centre = now - timedelta(days=count * days)
        return centre - timedelta(days=days / 2), centre + timedelta(days=days / 2 + 1)
    if match := _RELATIVE.search(query):
        return _relative(match[1].lower(), now)
    return None


def _day(year: int, month: int, day: int) -> Span | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "31 June"
        return None
    return start - timedelta(days=1), start + timedelta(days=2)


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
