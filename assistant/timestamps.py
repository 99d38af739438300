"""Times as the app writes and reads them: ISO 8601 in UTC, with microseconds and a "Z"."""

from __future__ import annotations

from datetime import UTC, datetime


def now_utc() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def stamp(moment: datetime | None = None) -> str:
    """`moment` (default: now) as written in the data files, e.g. 2026-11-24T08:40:05.123456Z."""
    moment = now_utc() if moment is None else moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse(value: str) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (one that names no zone is taken as UTC)."""
    moment = datetime.fromisoformat(value)
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def is_timestamp(value: str) -> bool:
    """Whether `value` is an ISO 8601 time."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def relative_time(moment: datetime, now: datetime | None = None) -> str:
    """`moment` in words relative to `now`: "just now", "3 days ago", "over a year ago"."""
    seconds = ((now or now_utc()) - moment).total_seconds()
    if seconds < 60:
        return "just now"
    minutes = int(seconds // 60)
    hours, days = minutes // 60, minutes // 1440
    for amount, unit in (
        (days // 365, "year"),
        (days // 30, "month"),
        (days // 7, "week"),
    ):
        if amount:
            return f"{amount} {unit}{'s' if amount > 1 else ''} ago"
    if days == 1:
        return "yesterday"
    if days:
        return f"{days} days ago"
    if hours:
        return f"{hours} hour{'s' if hours > 1 else ''} ago"
    return f"{minutes} minute{'s' if minutes > 1 else ''} ago"
