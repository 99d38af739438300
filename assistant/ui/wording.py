"""Numbers and quotes in the user's words: numbers grouped as their locale groups them, nouns
agreeing, long texts shortened to one line."""

from __future__ import annotations

from PySide6.QtCore import QLocale

from assistant.redaction import redact


def shorten(text: str, limit: int) -> str:
    """`text` on one line, redacted, then cut with "…" to at most `limit` characters."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _locale() -> QLocale:
    """The user's locale, grouping thousands even where it is "C" (which would not)."""
    locale = QLocale()
    locale.setNumberOptions(locale.numberOptions() & ~QLocale.NumberOption.OmitGroupSeparator)
    return locale


def number(value: int) -> str:
    """`value` as the user's locale writes it ("3,012" in English, "3.012" in German)."""
    return _locale().toString(value)


def decimal(value: float, places: int) -> str:
    """`value` with `places` decimals as the user's locale writes it ("3,012.5", "3.012,5")."""
    return _locale().toString(value, "f", places)


def count(value: int, singular: str, plural: str | None = None) -> str:
    """'1 memory', '3,012 memories': the number in the user's locale, the noun agreeing."""
    noun = singular if value == 1 else (plural or singular + "s")
    return f"{number(value)} {noun}"
