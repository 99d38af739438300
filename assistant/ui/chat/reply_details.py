"""A reply's details in the chat: the model that wrote it, its tokens and its speed."""

from __future__ import annotations

from assistant.memory import ReplyStats

MODEL_CHARS = 32  # a longer model name (a path to a file) is shortened in the line


def stats_line(stats: ReplyStats) -> str:
    """The short line under a reply: model, reply tokens, tokens per second."""
    model = stats.model.replace("\\", "/").rsplit("/", 1)[-1]
    if len(model) > MODEL_CHARS:
        model = model[: MODEL_CHARS - 1] + "…"
    approx = "≈" if stats.estimated else ""
    parts = [model, f"{approx}{stats.reply_tokens:,} tokens"]
    speed = stats.tokens_per_second
    if speed is not None:
        parts.append(f"{approx}{speed:.1f} tok/s")
    return " · ".join(parts)


def stats_details(stats: ReplyStats) -> str:
    """Every figure, for the line's tooltip."""
    lines = [
        f"Model: {stats.model}",
        f"Prompt: {stats.prompt_tokens:,} tokens",
        f"Reply: {stats.reply_tokens:,} tokens",
        f"First token after {stats.first_token_seconds:.2f} s",
    ]
    speed = stats.tokens_per_second
    writing = f"Writing took {stats.writing_seconds:.2f} s"
    lines.append(f"{writing} ({speed:.1f} tokens/s)" if speed is not None else writing)
    if stats.estimated:
        lines.append(
            "Estimated: the server did not send token counts (about 4 characters a token)."
        )
    return "\n".join(lines)
