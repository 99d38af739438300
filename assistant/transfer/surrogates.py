"""Unpaired UTF-16 surrogate escapes in a JSON byte stream, kept for validation.

A JSON string may escape a surrogate that has no partner (`"\\ud800"`). Python's `json` reads it
as a lone surrogate, which `check_texts` reports; the C parser of `ijson` does not: it turns a
lone high surrogate into "?", a lone low one into a decoding error of the whole file, and two
high ones into another character. So the stream reader rewrites each unpaired surrogate escape,
before the parser sees it, as a NUL followed by its four hex digits (`\\u0000D800`), and
`restore` turns those back into the surrogate once an item is parsed: validation then names the
bad text as it does in any other file, before anything is written. A NUL is itself refused in
every text, so a text that held one already is refused either way.
"""

from __future__ import annotations

import re
from typing import Any

# An escaped backslash (skipped whole, so "\\\\ud800" stays text), a high surrogate with its low
# partner if it has one, or a low surrogate alone.
_ESCAPES = re.compile(
    rb"\\\\"
    rb"|\\u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    rb"|\\u([dD][c-fC-F][0-9a-fA-F]{2})"
)
_HIGH = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_ESCAPE_BYTES = 6  # one \uXXXX
_PAIR_BYTES = 2 * _ESCAPE_BYTES  # a high and a low escape: what a chunk boundary may cut
_BACKSLASH = 0x5C
_STAND_IN = re.compile("\x00(D[89A-F][0-9A-F]{2})")


class SurrogateGuard:
    """Rewrites the unpaired surrogate escapes of a byte stream fed in chunks."""

    def __init__(self) -> None:
        self._carry = b""
        self.found = 0  # unpaired surrogates rewritten so far

    def feed(self, data: bytes, *, final: bool = False) -> bytes:
        """The bytes of `data` (after those held back from the last chunk) that can be passed
        on, rewritten; an escape that the chunk boundary may have cut is held back."""
        text = self._carry + data
        if final:
            self._carry = b""
        else:
            cut = _cut(text)
            text, self._carry = text[:cut], text[cut:]
        if b"\\" not in text:
            return text
        return _ESCAPES.sub(self._rewrite, text)

    def _rewrite(self, match: re.Match[bytes]) -> bytes:
        lone = match.group(3) if match.group(1) is None else match.group(1)
        if lone is None or match.group(2) is not None:  # an escaped backslash, or a pair
            return match.group(0)
        self.found += 1
        return b"\\u0000" + lone.upper()


def restore(value: Any) -> Any:
    """`value` (parsed JSON) with the stand-ins made lone surrogates again."""
    if isinstance(value, str):
        return _STAND_IN.sub(_surrogate, value) if "\x00" in value else value
    if isinstance(value, dict):
        return {restore(k): restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [restore(v) for v in value]
    return value


def _surrogate(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 16))


def _cut(text: bytes) -> int:
    """Where to hold `text` back from: the escape (or run of backslashes) that begins in its
    last bytes, which the next chunk may complete, with a high surrogate escape just before it
    (its partner may be that escape); the end of `text` if there is none."""
    at = text.find(b"\\", max(0, len(text) - _PAIR_BYTES))
    if at < 0:
        return len(text)
    if _HIGH.fullmatch(text, max(0, at - _ESCAPE_BYTES), at):
        at -= _ESCAPE_BYTES
    while at > 0 and text[at - 1] == _BACKSLASH:
        at -= 1
    return at
