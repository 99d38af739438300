"""The time a query asks about: "on 3 June, 2023", "in May 2023", "2022", "in June", "last May",
"the second week of November", "summer 2021", "last summer", "last week", "two weeks ago",
"yesterday"; what is relative is resolved against `now`."""

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
_MONTH_DAY_YEAR = re.compile(  # "December 1, 2023", also typed "December 1,2023"
    rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,\s*|\s+)((?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_WEEKS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": 5}
# "the second week of November", "the last week of May 2023"
_WEEK_OF = re.compile(
    rf"\b(first|second|third|fourth|last)\s+week\s+of\s+({_MONTH_NAMES})\b"
    r"(?:\.?,?\s+((?:19|20)\d\d)\b)?",
    re.IGNORECASE,
)
# Meteorological seasons of the northern hemisphere: the month each begins in.
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON_NAMES = "|".join(SEASONS)
_SEASON_YEAR = re.compile(rf"\b({_SEASON_NAMES})\s+(?:of\s+)?((?:19|20)\d\d)\b", re.IGNORECASE)
# A season without a year, after "in", "during", "over" or "last" and "this" ("the fall of Rome"
# is no autumn).
_SEASON = re.compile(
    rf"\b(in|during|over|last|this)\s+(?:the\s+)?({_SEASON_NAMES})\b(?!\s*(?:of\s+)?\d)",
    re.IGNORECASE,
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
    week of a month ("the second week of November": days 8-14), a season of a year ("summer
    2021": June to August), a month of a year, a year ("in 2022"), or a period relative to
    `now`: a month or season without a year (the last one up to now: "in June", "last May",
    "last summer"), "N days, weeks or months ago" (give or take half a unit), yesterday, today,
    this or last week, month or year."""
    if match := _DAY_MONTH_YEAR.search(query):
        return _day(int(match[3]), MONTHS[match[2].lower()], int(match[1]))
    if match := _MONTH_DAY_YEAR.search(query):
        return _day(int(match[3]), MONTHS[match[1].lower()], int(match[2]))
    now = now or datetime.now(UTC)
    if match := _WEEK_OF.search(query):
        month = MONTHS[match[2].lower()]
        year = int(match[3]) if match[3] else _last(now, month, "in")
        return _week_of(year, month, _WEEKS[match[1].lower()])
    if match := _SEASON_YEAR.search(query):
        return _season(int(match[2]), SEASONS[match[1].lower()])
    if match := _MONTH_YEAR.search(query):
        year, month = int(match[2]), MONTHS[match[1].lower()]
        return _month(year, month)
    if match := _YEAR.search(query):
        year = int(match[1])
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    if match := _MONTH.search(query):
        month = MONTHS[match[2].lower()]
        return _month(_last(now, month, match[1].lower()), month)
    if match := _SEASON.search(query):
        first = SEASONS[match[2].lower()]
        season = _season(_last(now, first, match[1].lower()), first)
        if match[1].lower() == "last" and season[1] > now:  # "last summer" in summer
            season = _season(season[0].year - 1, first)
        return season
    if match := _AGO.search(query):
        count = _NUMBERS.get(match[1].lower()) or int(match[1])
        days = _UNIT_DAYS[match[2].lower()]
        centre = now - timedelta(days=count * days)
        return centre - timedelta(days=days / 2), centre + timedelta(days=days / 2 + 1)
    if match := _RELATIVE.search(query):
        return _relative(match[1].lower(), now)
    return None


def _last(now: datetime, month: int, word: str) -> int:
    """The year of the last `month` up to `now`: "last May" in May means a year ago; "in May"
    or "this May" in May, this one."""
    return now.year - (month > now.month or (month == now.month and word == "last"))


def _week_of(year: int, month: int, week: int) -> Span:
    """The days 1-7, 8-14, 15-21 or 22-28 of a month, or its last seven (`week` 5)."""
    start, end = _month(year, month)
    if week == 5:
        return end - timedelta(days=7), end
    first = start + timedelta(days=7 * (week - 1))
    return first, first + timedelta(days=7)


def _season(year: int, first: int) -> Span:
    """The three months from `first` of `year` (winter runs into the next year)."""
    start = datetime(year, first, 1, tzinfo=UTC)
    return start, _month(year + (first + 2) // 13, (first + 1) % 12 + 1)[1]


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
