"""Times in the user's words: how long ago, a date, or "date unknown" for an undated import."""

from __future__ import annotations

from datetime import datetime

from assistant.timestamps import now_utc, parse

UNDATED_BEFORE_YEAR = 1971  # imports with no time at all are dated by their order in 1970


def date_text(moment: datetime) -> str:
    """`moment` in local time, e.g. "3 Mar 2026, 14:05"."""
    local = moment.astimezone()
    return f"{local:%d %b %Y, %H:%M}".lstrip("0")


def listing_time(stamp: str) -> str:
    """A stored time for a list: its local date and time, or "date unknown"."""
    try:
        moment = parse(stamp)
    except ValueError:
        return stamp
    if moment.year < UNDATED_BEFORE_YEAR:
        return "date unknown"
    return date_text(moment)


def day_text(moment: datetime, *, short: bool = False) -> str:
    """A date in words, without the year when it is this year: "3 March", "3 March 2025";
    `short`: "3 Mar"."""
    local = moment.astimezone()
    year = "" if local.year == now_utc().astimezone().year else f" {local.year}"
    month = local.strftime("%b" if short else "%B")
    return f"{local.day} {month}{year}"


def list_group(stamp: str, now: datetime | None = None) -> str:
    """The group a conversation last active at `stamp` is listed under: "Today",
    "Yesterday", "Previous 7 days", "Previous 30 days", then its month ("March 2025"), or
    "Date unknown"."""
    try:
        moment = parse(stamp)
    except ValueError:
        return "Date unknown"
    if moment.year < UNDATED_BEFORE_YEAR:
        return "Date unknown"
    local, today = moment.astimezone(), (now or now_utc()).astimezone()
    days = (today.date() - local.date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days < 7:
        return "Previous 7 days"
    if days < 30:
        return "Previous 30 days"
    return f"{local:%B %Y}"
