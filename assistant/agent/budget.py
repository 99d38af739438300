"""How many tokens a prompt and a reply may use, given what is known of the model's context window.

All numbers are in estimated tokens (`estimate_tokens`); the provider states the window in the same
unit, having learned how the server's tokens compare.
"""

from __future__ import annotations

from assistant.settings import DEFAULT_PROMPT_BUDGET, PROMPT_SHARE

MIN_PROMPT_BUDGET = 256
MIN_REPLY_TOKENS = 64


def prompt_budget(setting: int, window: int | None) -> int:
    """The prompt budget: the setting (0: automatic), never more than a safe share of `window`."""
    if window is None:
        return setting or DEFAULT_PROMPT_BUDGET
    safe = max(MIN_PROMPT_BUDGET, int(window * PROMPT_SHARE))
    return min(setting, safe) if setting else safe


def reply_limit(setting: int, window: int | None, prompt_tokens: int) -> int:
    """`max_tokens` for a reply: the setting, within what the window leaves after the prompt."""
    if window is None:
        return setting
    return max(MIN_REPLY_TOKENS, min(setting, window - prompt_tokens))
