"""Reading an import file: detect its format and hand it to that format's reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assistant.errors import ImportError_
from assistant.transfer.chatgpt import parse_chatgpt
from assistant.transfer.checks import kind
from assistant.transfer.native import parse_assistant
from assistant.transfer.plan import ImportPlan


def load_import(path: Path) -> ImportPlan:
    """Read and parse an import file; ImportError_ if it cannot be read or is malformed."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportError_(f"Could not read {path}: {exc.strerror or exc}") from exc
    return parse_import(raw)


def parse_import(raw: bytes | str) -> ImportPlan:
    """Validate an Assistant export or a ChatGPT `conversations.json` completely.

    Raises ImportError_ naming the first bad field with its path; nothing is changed.
    """
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportError_(
                f"The file is not UTF-8 text (bad byte at offset {exc.start}); "
                "expected an Assistant export or a ChatGPT conversations.json."
            ) from None
    try:
        doc = json.loads(raw, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ImportError_(
            f"The file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from None
    except ValueError as exc:
        raise ImportError_(f"The file is not valid JSON: {exc}.") from None
    except RecursionError:
        raise ImportError_("The file is not valid JSON: it is nested too deeply.") from None
    if isinstance(doc, dict):
        return parse_assistant(doc)
    if isinstance(doc, list):
        return parse_chatgpt(doc)
    raise ImportError_(
        "This is not an Assistant export or a ChatGPT conversations.json: the file holds "
        f"{kind(doc)}, not an object or a list."
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
