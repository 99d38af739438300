"""Syntax highlighting of code blocks with Pygments, as Qt character formats."""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor, QFont, QTextCharFormat

LIGHT_STYLE = "default"
DARK_STYLE = "monokai"
COMMON_LANGUAGES = ("python", "bash", "javascript", "json")  # loaded ahead by `warm_up`


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=2)
def _formats(dark: bool) -> dict[_TokenType, QTextCharFormat]:
    style = get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE)
    formats: dict[_TokenType, QTextCharFormat] = {}
    for token, spec in style:
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor(f"#{spec['color']}"))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        formats[token] = fmt
    return formats


def highlight(code: str, language: str, *, dark: bool) -> list[tuple[int, int, QTextCharFormat]]:
    """(start, length, format) runs for `code`; empty for an unknown or missing language."""
    lexer = _lexer(language.strip().lower()) if language.strip() else None
    if lexer is None:
        return []
    formats = _formats(dark)
    runs = []
    position = 0
    for token, value in lexer.get_tokens(code):
        kind: _TokenType | None = token
        while kind is not None and kind not in formats:
            kind = kind.parent
        fmt = formats.get(kind) if kind is not None else None
        if fmt is not None and fmt.foreground().style().value and value.strip():
            runs.append((position, len(value), fmt))
        position += len(value)
    return runs


def warm_up() -> None:
    """Load the common lexers and both styles (50 ms and more the first time), so that the
    first code block of a reply does not stall the GUI; meant for a background thread."""
    for language in COMMON_LANGUAGES:
        _lexer(language)
    _formats(True)
    _formats(False)
