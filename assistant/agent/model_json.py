"""Reading the JSON a model was asked for, defensively: small models wrap it in a code fence,
put a sentence before it, or answer one object where a list was asked for."""

from __future__ import annotations

import json
import logging
from typing import Any


def listed(answer: str, key: str, log: logging.Logger) -> list[Any]:
    """The entries listed under `key` in the model's JSON `answer` (or the answer's own list; one
    object under `key` is one entry); none, with a line in the caller's `log`, if there are none."""
    data = json_value(answer)
    if data is None:
        log.info("The model did not answer with JSON: %.200r", answer)
        return []
    if isinstance(data, dict):
        data = data.get(key)
    if isinstance(data, dict):  # a single entry, not in a list
        data = [data]
    if not isinstance(data, list):
        log.info("No list of %s in the model's answer: %.200r", key, answer)
        return []
    return data


def json_value(answer: str) -> Any:
    """The JSON value in `answer`, also inside a code fence or after a sentence; else None."""
    text = strip_fences(answer)
    try:
        return json.loads(text)
    except ValueError:
        pass
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    end = max(text.rfind("}"), text.rfind("]"))
    if start < 0 or end <= start:
        return None
    try:
        return json.loads(text[start : end + 1])
    except ValueError:
        return None


def strip_fences(text: str) -> str:
    """The text inside a Markdown code fence, if the answer is wrapped in one."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
