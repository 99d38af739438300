"""What a reply cost and how fast it came: the model, its token counts and its speed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assistant.json_fields import as_object, fail, flag, join, kind, nonempty_str

SPEED_MIN_TOKENS = 10  # a speed is given for at least this many tokens after the first
SPEED_MIN_SECONDS = 0.5  # written over at least this long


@dataclass(frozen=True)
class ReplyStats:
    """The model that wrote a reply, its prompt and reply tokens (as the server counted them,
    or `estimated`), the seconds before its first token and the seconds it took to write."""

    model: str
    prompt_tokens: int
    reply_tokens: int
    first_token_seconds: float
    writing_seconds: float
    estimated: bool = False  # the server did not tell the counts

    @property
    def tokens_per_second(self) -> float | None:
        """The writing speed, if it is measurable: a few tokens in a few milliseconds (a
        server that sends the reply in one piece) would give a meaningless figure."""
        if self.writing_seconds < SPEED_MIN_SECONDS or self.reply_tokens - 1 < SPEED_MIN_TOKENS:
            return None
        # The first token came at the start of the writing: the speed is of the ones after it.
        return (self.reply_tokens - 1) / self.writing_seconds

    def to_json(self) -> dict[str, Any]:
        """The stats as a JSON object."""
        out: dict[str, Any] = {
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "reply_tokens": self.reply_tokens,
            "first_token_seconds": round(self.first_token_seconds, 3),
            "writing_seconds": round(self.writing_seconds, 3),
        }
        if self.estimated:
            out["estimated"] = True
        return out

    @classmethod
    def from_json(cls, raw: object, path: str = "stats") -> ReplyStats:
        """Parse stats; FieldError names a bad field by its path."""
        fields = as_object(raw, path)
        return cls(
            model=nonempty_str(fields, "model", path),
            prompt_tokens=int(_number(fields, "prompt_tokens", path)),
            reply_tokens=int(_number(fields, "reply_tokens", path)),
            first_token_seconds=_number(fields, "first_token_seconds", path),
            writing_seconds=_number(fields, "writing_seconds", path),
            estimated=flag(fields, "estimated", path),
        )


def _number(raw: Mapping[str, Any], key: str, path: str) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise fail(join(path, key), f"must be a number of at least 0, not {kind(value)}")
    return float(value)
