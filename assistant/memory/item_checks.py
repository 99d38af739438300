"""What a memory's fields must be: some text, at most MAX_TEXT_CHARS of it, a known kind and an
importance between 0 and 1."""

from __future__ import annotations

from assistant.memory.items import KINDS, MAX_TEXT_CHARS


def clean_text(text: str) -> str:
    """`text` without the space around it; ValueError if empty or longer than MAX_TEXT_CHARS."""
    text = text.strip()
    if not text:
        raise ValueError("A memory needs some text.")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"A memory {too_long(text)}")
    return text


def too_long(text: str) -> str:
    """What is wrong with a text too long for a memory, in words."""
    return (
        f"can be at most {MAX_TEXT_CHARS:,} characters; this one has {len(text):,}. Keep the "
        "essential fact, or split it into several memories."
    )


def check_fields(kind: str, importance: float) -> None:
    """ValueError unless `kind` is a memory kind and `importance` is within 0..1."""
    if kind not in KINDS:
        raise ValueError(f"Unknown memory kind {kind!r}; expected one of {', '.join(KINDS)}.")
    if not 0.0 <= importance <= 1.0:
        raise ValueError(f"Importance must be between 0 and 1, not {importance}.")
