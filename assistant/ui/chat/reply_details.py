"""A reply's details in the chat: the model that wrote it, its tokens and its speed."""

from __future__ import annotations

from assistant.memory import ReplyStats
from assistant.ui.wording import decimal, number

MODEL_CHARS = 32  # a longer model name (a path to a file) is shortened in the line
SPEED_DECIMALS_BELOW = 10.0  # a slower speed gets one decimal


def stats_line(stats: ReplyStats) -> str:
    """The short line under a reply: model, reply tokens, tokens per second."""
    model = stats.model.replace("\\", "/").rsplit("/", 1)[-1]
    if len(model) > MODEL_CHARS:
        model = model[: MODEL_CHARS - 1] + "…"
    approx = "≈" if stats.estimated else ""
    parts = [model, f"{approx}{number(stats.reply_tokens)} tokens"]
    speed = stats.tokens_per_second
    if speed is not None:
        parts.append(f"{approx}{speed_text(speed)} tok/s")
    return " · ".join(parts)


def speed_text(speed: float) -> str:
    """Tokens per second with the precision it has: "8.5", "42", "1,250"."""
    return decimal(speed, 1 if speed < SPEED_DECIMALS_BELOW else 0)


def stats_details(stats: ReplyStats) -> str:
    """Every figure, for the line's tooltip."""
    lines = [
        f"Model: {stats.model}",
        f"Prompt: {number(stats.prompt_tokens)} tokens",
        f"Reply: {number(stats.reply_tokens)} tokens",
        f"First token after {stats.first_token_seconds:.2f} s",
    ]
    speed = stats.tokens_per_second
    writing = f"Writing took {stats.writing_seconds:.2f} s"
    lines.append(f"{writing} ({speed_text(speed)} tokens/s)" if speed is not None else writing)
    if stats.estimated:
        lines.append(
            "Estimated: the server did not send token counts (about 4 characters a token)."
        )
    return "\n".join(lines)
