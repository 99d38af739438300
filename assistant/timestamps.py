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
