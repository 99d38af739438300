"""A text box's character counter: the characters used out of a limit, in the error colour
over it (the text is kept, never cut)."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel

from assistant.ui import theme


def counter_text(length: int, limit: int) -> str:
    """The characters used out of the limit, and by how many a text is over it."""
    text = f"{length:,} / {limit:,}"
    over = length - limit
    return f"{text} — {over:,} over the limit" if over > 0 else text


def show_count(counter: QLabel, length: int, limit: int) -> None:
    """Show `length` of `limit` on `counter`; over the limit in the error colour."""
    counter.setText(counter_text(length, limit))
    palette = counter.palette()
    colour = theme.danger(palette) if length > limit else theme.muted(palette)
    palette.setColor(QPalette.ColorRole.WindowText, colour)
    counter.setPalette(palette)
