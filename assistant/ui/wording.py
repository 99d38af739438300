"""Numbers and quotes in the user's words: numbers grouped as their locale groups them, nouns
agreeing, long texts shortened to one line."""

from __future__ import annotations

from PySide6.QtCore import QLocale

from assistant.redaction import redact


def shorten(text: str, limit: int) -> str:
    """`text` on one line, redacted, then cut with "…" to at most `limit` characters."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def number(value: int) -> str:
    """`value` as the user's locale writes it ("3,012" in English, "3.012" in German)."""
    return QLocale().toString(value)


def count(value: int, singular: str, plural: str | None = None) -> str:
    """'1 memory', '3,012 memories': the number in the user's locale, the noun agreeing."""
    noun = singular if value == 1 else (plural or singular + "s")
    return f"{number(value)} {noun}"
