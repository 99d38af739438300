"""Tools declared once: a typed function with a Google docstring becomes a schema'd `Tool`."""

from __future__ import annotations

import copy
import inspect
import json
import logging
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args, get_origin, get_type_hints

from assistant.agent.cancel import OperationCancelledError
from assistant.agent.tool_images import ToolImage
from assistant.errors import ToolError

log = logging.getLogger(__name__)

CONTEXT_NAMES = frozenset({"memory", "working", "conversations", "knowledge", "context"})

_SCALARS: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_EXPECTED = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
}
_SECTION = re.compile(r"(Args|Arguments|Returns?|Raises|Yields?|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)")


@dataclass(frozen=True)
class External:
    """Where a tool from outside the app comes from (an MCP server), and if it asks first."""

    server: str
    name: str  # the server's own name of the tool
    asks: bool  # it may change things: the user allows it in the chat before it runs


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns when it has images besides its text (an MCP tool's result)."""

    text: str
    images: tuple[ToolImage, ...] = ()


@dataclass(frozen=True)
class Tool:
    """A function the model may call, with the JSON schema derived from its signature.

    A tool with `check` is described by a schema of its own (an MCP tool's): `check` validates
    the model's arguments (ToolError if they do not fit), and `func(arguments, context)` is
    called with them and the turn's ToolContext.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any]
    injected: frozenset[str]
    check: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    external: External | None = None

    def schema(self) -> dict[str, Any]:
        """The entry for the `tools` list of an OpenAI chat request."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(self.parameters),
            },
        }

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments checked against the schema and converted (int to float); or ToolError."""
        if self.check is not None:
            return self.check(arguments)
        properties: dict[str, Any] = self.parameters["properties"]
        unknown = [key for key in arguments if key not in properties]
        if unknown:
            valid = ", ".join(properties) or "none"
            raise ToolError(
                f"{self.name}: unknown argument(s) {_quoted(unknown)}. Valid arguments: {valid}."
            )
        missing = [key for key in self.parameters["required"] if key not in arguments]
        if missing:
            raise ToolError(f"{self.name}: missing required argument(s) {_quoted(missing)}.")
        checked: dict[str, Any] = {}
        for key, prop in properties.items():
            if key in arguments:
                checked[key] = _check(self.name, key, prop, arguments[key])
            elif _nullable(prop) and "default" not in prop:
                checked[key] = None  # `x: T | None` without a Python default
        return checked


class ToolSource(Protocol):
    """Tools from outside the app (MCP servers) for a turn."""

    def tools_for(self, query: str) -> tuple[list[Tool], frozenset[str]]:
        """The tools for a turn on the user's `query`, and those to hide until searched for."""
        ...

    def trust(self, tool: Tool) -> None:
        """The user allowed `tool` always: it no longer asks first."""
        ...


def tool(func: Callable[..., Any]) -> Tool:
    """Turn a typed function with a Google-style docstring into a Tool; TypeError if unsupported."""
    name = func.__name__
    description, docs = _parse_docstring(name, func.__doc__ or "")
    signature = inspect.signature(func)
    injected = frozenset(signature.parameters) & CONTEXT_NAMES
    for key in injected:
        docs.pop(key, None)
    hints = _type_hints(func, set(signature.parameters) - injected)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in signature.parameters.values():
        if param.name in injected:
            continue
        where = f"tool {name}: parameter '{param.name}'"
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            raise TypeError(f"{where}: only named parameters are supported")
        if param.name not in hints:
            raise TypeError(f"{where} has no type annotation")
        if param.name not in docs:
            raise TypeError(f"{where} is not described in the docstring's Args section")
        try:
            prop = _schema_for(hints[param.name])
        except TypeError as exc:
            raise TypeError(f"{where}: {exc}") from None
        prop["description"] = docs.pop(param.name)
        if param.default is not param.empty:
            if param.default is not None and _is_json(param.default):
                prop["default"] = param.default
        elif not _nullable(prop):
            required.append(param.name)
        properties[param.name] = prop
    if docs:
        raise TypeError(f"tool {name}: Args describes unknown parameter(s) {_quoted(list(docs))}")
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return Tool(name, description, parameters, func, injected)


class ToolRegistry:
    """The tools offered to the model, called by name with the model's JSON arguments."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._hidden: set[str] = set()  # callable, but not offered to the model (yet)
        self._extra: set[str] = set()  # the tools from outside the app (`add_extra`)
        for item in tools:
            self.register(item)

    def register(self, tool: Tool, *, hidden: bool = False) -> None:
        """Add a tool (not offered while `hidden`); ValueError if its name is taken."""
        if tool.name in self._tools:
            raise ValueError(f"A tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        if hidden:
            self._hidden.add(tool.name)

    def add_extra(self, tools: Iterable[Tool], hidden: frozenset[str]) -> None:
        """Add tools from outside the app; a name taken (a built-in's) stays the first's."""
        for item in tools:
            if item.name in self._tools:
                log.warning("Tool %s is not offered: a tool of that name exists", item.name)
            else:
                self.register(item, hidden=item.name in hidden)
                self._extra.add(item.name)

    def drop_extra(self) -> bool:
        """Take out the tools from outside the app; whether there were any."""
        for name in self._extra:
            self._tools.pop(name, None)
            self._hidden.discard(name)
        dropped, self._extra = bool(self._extra), set()
        return dropped

    def reveal(self, names: Iterable[str]) -> None:
        """Offer these hidden tools to the model from now on."""
        self._hidden.difference_update(names)

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, if any."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """The tool names, in registration order."""
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The `tools` list of an OpenAI chat request (the tools not hidden)."""
        return [item.schema() for item in self._tools.values() if item.name not in self._hidden]

    def call(self, name: str, raw_arguments: str, context: Mapping[str, Any]) -> str:
        """Run a tool call from the model and return its result as text; ToolError on failure."""
        return self.run(name, raw_arguments, context).text

    def run(self, name: str, raw_arguments: str, context: Mapping[str, Any]) -> ToolOutput:
        """Run a tool call from the model: its text and images; ToolError on failure."""
        found = self._tools.get(name)
        if found is None:
            available = ", ".join(self._tools) or "none"
            raise ToolError(f"Unknown tool '{name}'. Available tools: {available}.")
        kwargs = found.validate(_parse_arguments(name, raw_arguments))
        absent = sorted(key for key in found.injected if key not in context)
        if absent:
            raise ToolError(f"{name} cannot run here: no {', '.join(absent)} available.")
        injected = {key: context[key] for key in found.injected}
        try:
            if found.check is not None:  # its arguments may have any names: passed as one dict
                result = found.func(kwargs, **injected)
            else:
                result = found.func(**kwargs, **injected)
        except (ToolError, OperationCancelledError):
            raise
        except Exception as exc:
            log.warning("Tool %s failed", name, exc_info=True)
            raise ToolError(f"{name} failed: {str(exc) or type(exc).__name__}") from exc
        return result if isinstance(result, ToolOutput) else ToolOutput(_to_text(result))


def _parse_docstring(name: str, doc: str) -> tuple[str, dict[str, str]]:
    """The whitespace-normalized summary and the Args descriptions of a Google docstring."""
    summary: list[str] = []
    args: dict[str, list[str]] = {}
    section: str | None = None
    entry_indent: int | None = None
    current: list[str] = []
    for line in inspect.cleandoc(doc).splitlines():
        header = _SECTION.match(line)
        if header:
            section, entry_indent = header.group(1), None
            continue
        if section is None:
            summary.append(line)
            continue
        text = line.strip()
        if section not in ("Args", "Arguments") or not text:
            continue
        indent = len(line) - len(line.lstrip())
        if entry_indent is None:
            entry_indent = indent
        if indent > entry_indent:
            current.append(text)
            continue
        match = _ARG_LINE.fullmatch(text)
        if match is None:
            raise TypeError(f"tool {name}: cannot read the Args line {text!r}")
        current = args.setdefault(match.group(1), [])
        current.append(match.group(2))
    description = " ".join(" ".join(summary).split())
    if not description:
        raise TypeError(f"tool {name}: the docstring needs a summary for the model")
    return description, {key: " ".join(" ".join(parts).split()) for key, parts in args.items()}


def _type_hints(func: Callable[..., Any], names: set[str]) -> dict[str, Any]:
    """Resolve only these parameters' annotations, so injected ones may be TYPE_CHECKING names."""
    raw = {key: value for key, value in inspect.get_annotations(func).items() if key in names}
    holder = types.SimpleNamespace(__annotations__=raw)
    # include_extras: Annotated[...] metadata is refused as unsupported, never silently dropped.
    return get_type_hints(holder, getattr(func, "__globals__", None), include_extras=True)


def _schema_for(hint: Any) -> dict[str, Any]:
    """The JSON schema of a supported annotation; TypeError otherwise."""
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in get_args(hint) if arg is not type(None)]
        if len(options) != 1 or len(options) == len(get_args(hint)):
            raise TypeError(f"unsupported union {hint!r} (only X | None)")
        prop = _schema_for(options[0])
        prop["type"] = [prop["type"], "null"]
        if "enum" in prop:
            prop["enum"].append(None)
        return prop
    if origin is list and len(get_args(hint)) == 1:
        return {"type": "array", "items": _scalar_schema(get_args(hint)[0])}
    return _scalar_schema(hint)


def _scalar_schema(hint: Any) -> dict[str, Any]:
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if get_origin(hint) is Literal:
        values = list(get_args(hint))
        for kind in (str, int):
            if all(type(value) is kind for value in values):
                return {"type": _SCALARS[kind], "enum": values}
    raise TypeError(f"unsupported type {hint!r}")


def _check(tool_name: str, label: str, prop: Mapping[str, Any], value: Any) -> Any:
    """The value if it matches the property's schema (int converted to float); or ToolError."""
    kind = prop["type"][0] if _nullable(prop) else prop["type"]
    if value is None and _nullable(prop):
        return None
    if kind == "array" and isinstance(value, list):
        return [_check(tool_name, f"{label}[{i}]", prop["items"], v) for i, v in enumerate(value)]
    checked = _scalar(kind, value)
    if checked is None:
        expected = _EXPECTED[kind] + (" or null" if _nullable(prop) else "")
    elif "enum" in prop and checked not in prop["enum"]:
        expected = "one of " + ", ".join(_show(option) for option in prop["enum"])
    else:
        return checked
    raise ToolError(f"{tool_name}: '{label}' must be {expected}, got {_show(value)}.")


def _nullable(prop: Mapping[str, Any]) -> bool:
    return isinstance(prop["type"], list)


def _scalar(kind: str, value: Any) -> Any:
    """The value as a JSON `kind` (3.0 is an integer, 3 a number), or None if it is not one."""
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "integer":
        if type(value) is int:
            return value
        if type(value) is float and value.is_integer():
            return int(value)
    if kind == "number" and type(value) in (int, float):
        try:
            return float(value)
        except OverflowError:
            return None
    return None


def _parse_arguments(name: str, raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        arguments = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ToolError(f"Arguments for '{name}' are not valid JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise ToolError(f"Arguments for '{name}' must be a JSON object, got {_show(arguments)}.")
    return arguments


def _to_text(result: object) -> str:
    if result is None:
        return "OK"
    if isinstance(result, str):
        return result
    if isinstance(result, dict | list | tuple | int | float):
        return json.dumps(result, ensure_ascii=False, default=str)
    return str(result)


def _is_json(value: object) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


def _show(value: object, limit: int = 60) -> str:
    """A short rendering of a value for an error message."""
    if isinstance(value, str):
        text = repr(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"
