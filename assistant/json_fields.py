"""Checks of JSON fields: each returns the field's value or raises FieldError naming its path.

Paths read like the JSON they point into (`conversations[1].messages[0].tool_calls[0].id`);
a reader checks a nested object with the path so far, or checks it alone and puts the error
`inside` the path of where it sits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assistant.timestamps import is_timestamp


class FieldError(ValueError):
    """A field is bad; the message is `path: problem`."""


def fail(path: str, problem: str) -> FieldError:
    """The error for the field at `path`."""
    return FieldError(f"{path}: {problem}" if path else problem)


def inside(path: str, error: ValueError) -> FieldError:
    """`error` (`field: problem`, from a check of a part alone) with the part's path before it."""
    return FieldError(join(path, str(error)))


def kind(value: object) -> str:
    """A JSON value's type in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def as_object(value: object, path: str) -> dict[str, Any]:
    """`value`, which must be a JSON object."""
    if not isinstance(value, dict):
        raise fail(path, f"must be an object, not {kind(value)}")
    return value


def as_list(value: object, path: str) -> list[Any]:
    """`value`, which must be a JSON list."""
    if not isinstance(value, list):
        raise fail(path, f"must be a list, not {kind(value)}")
    return value


def optional_list(raw: Mapping[str, Any], key: str, path: str = "") -> list[Any]:
    """`raw[key]`, a list, or an empty one when missing or null."""
    value = raw.get(key)
    return [] if value is None else as_list(value, join(path, key))


def string(raw: Mapping[str, Any], key: str, path: str = "", *, nullable: bool = False) -> Any:
    """`raw[key]`, which must be present and a string (or null when `nullable`)."""
    where = join(path, key)
    if key not in raw:
        raise fail(where, "missing")
    value = raw[key]
    if not isinstance(value, str) and not (nullable and value is None):
        expected = "a string or null" if nullable else "a string"
        raise fail(where, f"must be {expected}, not {kind(value)}")
    return value


def optional_str(raw: Mapping[str, Any], key: str, path: str = "") -> str | None:
    """`raw[key]` if present and not null, which must then be a string."""
    if raw.get(key) is None:
        return None
    value: str = string(raw, key, path)
    return value


def nonempty_str(raw: Mapping[str, Any], key: str, path: str = "") -> str:
    """`raw[key]`, a string with more than white space."""
    value: str = string(raw, key, path)
    if not value.strip():
        raise fail(join(path, key), "must not be empty")
    return value


def timestamp(raw: Mapping[str, Any], key: str, path: str = "") -> str:
    """`raw[key]`, an ISO 8601 timestamp."""
    value: str = string(raw, key, path)
    if not is_timestamp(value):
        raise fail(join(path, key), f"{value!r} is not an ISO 8601 timestamp")
    return value


def flag(raw: Mapping[str, Any], key: str, path: str = "", *, default: bool = False) -> bool:
    """`raw[key]`, true or false, or `default` when missing."""
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise fail(join(path, key), f"must be true or false, not {kind(value)}")
    return value


def join(path: str, key: str) -> str:
    """The path of `key` inside `path`."""
    return f"{path}.{key}" if path else key


# What no stored text may hold: a lone surrogate (not encodable as UTF-8, so a write would fail
# half-way) and control characters other than tab, line feed and carriage return.
_BAD_CHARACTER = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_texts(value: object, path: str = "") -> None:
    """Raise FieldError for the first string in `value` (keys included, at any depth) that holds
    a lone surrogate or a control character."""
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            _check_text(node, where)
        elif isinstance(node, dict):
            for key in reversed(list(node)):
                _check_text(key, where)
                stack.append((node[key], join(where, key)))
        elif isinstance(node, list):
            stack.extend((item, f"{where}[{i}]") for i, item in reversed(list(enumerate(node))))


def _check_text(text: str, path: str) -> None:
    found = _BAD_CHARACTER.search(text)
    if found is None:
        return
    char = found.group()
    what = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
    raise fail(path, f"holds {what} (U+{ord(char):04X}) at character {found.start() + 1}")
