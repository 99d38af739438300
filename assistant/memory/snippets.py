"""Snippets: a hit's text shortened to one line around the words that were searched."""

from __future__ import annotations

import re
from collections.abc import Sequence

SNIPPET_CHARS = 160


def make_snippet(text: str, words: Sequence[str], chars: int = SNIPPET_CHARS) -> str:
    """About `chars` of `text` on one line, around the first of `words` in it."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    match = re.search(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", flat.lower())
    pos = match.start() if match else 0
    start = max(0, min(pos - chars // 3, len(flat) - chars))
    end = start + chars
    return ("…" if start else "") + flat[start:end] + ("…" if end < len(flat) else "")
