"""Field checks shared by the import readers: each names the bad field with its JSON path."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from assistant.timestamps import stamp


class InvalidError(Exception):
    """A field is bad; carries `path: problem` and becomes an InvalidImportError at the top."""


def fail(path: str, problem: str) -> InvalidError:
    """The error for the field at `path`."""
    return InvalidError(f"{path}: {problem}" if path else problem)


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


def string(raw: Mapping[str, Any], key: str, path: str, *, nullable: bool = False) -> Any:
    """`raw[key]`, which must be present and a string (or null when `nullable`)."""
    where = join(path, key)
    if key not in raw:
        raise fail(where, "missing")
    value = raw[key]
    if not isinstance(value, str) and not (nullable and value is None):
        expected = "a string or null" if nullable else "a string"
        raise fail(where, f"must be {expected}, not {kind(value)}")
    return value


def optional_str(raw: Mapping[str, Any], key: str, path: str) -> str | None:
    """`raw[key]` if present and not null, which must then be a string."""
    if raw.get(key) is None:
        return None
    value: str = string(raw, key, path)
    return value


def nonempty_str(raw: Mapping[str, Any], key: str, path: str) -> str:
    """`raw[key]`, a string with more than white space."""
    value: str = string(raw, key, path)
    if not value.strip():
        raise fail(join(path, key), "must not be empty")
    return value


def timestamp(raw: Mapping[str, Any], key: str, path: str) -> str:
    """`raw[key]`, an ISO 8601 timestamp."""
    value: str = string(raw, key, path)
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise fail(join(path, key), f"{value!r} is not an ISO 8601 timestamp") from None
    return value


def join(path: str, key: str) -> str:
    """The path of `key` inside `path`."""
    return f"{path}.{key}" if path else key


def undated(order: int) -> str:
    """The time given to a conversation that has none: 1970, in file order ("date unknown")."""
    return stamp(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=order))


def unique_id(candidate: str, taken: set[str]) -> str:
    """`candidate`, or `candidate-2`, `-3`, … if an earlier message has it; added to `taken`."""
    unique, n = candidate, 1
    while unique in taken:
        n += 1
        unique = f"{candidate}-{n}"
    taken.add(unique)
    return unique
