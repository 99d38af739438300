"""How a model is asked: its sampling values, reply and context sizes, and whether it may use
tools; set per model in the settings, and per conversation over them.

A value left out (None) is the next level's: a conversation's over its model's, a model's over
the server's own default (nothing is sent) or the app's setting (reply length, context window).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, get_args

from assistant.json_fields import fail, join, kind

ToolUse = Literal["on", "off", "auto"]
TOOL_USES: tuple[str, ...] = get_args(ToolUse)

MIN_CONTEXT = 256  # the smallest context window a model may be said to have, in tokens
# The bounds of each value, as the OpenAI API takes them.
_RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "max_tokens": (1, 1_000_000),
    "context_tokens": (MIN_CONTEXT, 10_000_000),
}
_INTEGERS = frozenset({"max_tokens", "context_tokens"})


@dataclass(frozen=True)
class ModelOptions:
    """The options of a model or a conversation; None: not set here."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None  # the reply's length limit
    context_tokens: int | None = None  # the model's context window, when the server does not say
    tools: ToolUse | None = None  # "auto": on until the model loops on tools, then off for it
    tools_learned_off: bool = False  # "auto" turned them off: the model looped on tools

    def over(self, base: ModelOptions) -> ModelOptions:
        """These options, with `base`'s where these are not set."""
        chosen = {}
        for f in fields(self):
            if f.name != "tools_learned_off":
                mine = getattr(self, f.name)
                chosen[f.name] = getattr(base, f.name) if mine is None else mine
        return ModelOptions(**chosen, tools_learned_off=base.tools_learned_off)

    @property
    def uses_tools(self) -> bool:
        """Whether tools are offered to the model."""
        if self.tools == "off":
            return False
        return not (self.tools == "auto" and self.tools_learned_off)

    def request_params(self) -> dict[str, Any]:
        """What goes into the request body as it is (the sampling values set)."""
        return {
            name: value
            for name, value in (("temperature", self.temperature), ("top_p", self.top_p))
            if value is not None
        }

    def learned_off(self, off: bool = True) -> ModelOptions:
        """These options once "auto" has turned tools off (or back on)."""
        return replace(self, tools_learned_off=off)

    def to_json(self) -> dict[str, Any]:
        """The values set, as a JSON object."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return {k: v for k, v in out.items() if v is not None and v is not False}

    @classmethod
    def from_json(cls, raw: object, path: str = "") -> ModelOptions:
        """Parse options; FieldError names a bad value by its path."""
        if not isinstance(raw, Mapping):
            raise fail(path, f"must be an object, not {kind(raw)}")
        values: dict[str, Any] = {}
        for name, (low, high) in _RANGES.items():
            value = raw.get(name)
            if value is None:
                continue
            integer = name in _INTEGERS
            if isinstance(value, bool) or not isinstance(value, int if integer else int | float):
                raise fail(join(path, name), f"must be a number, not {kind(value)}")
            if not low <= value <= high:
                raise fail(join(path, name), f"must be between {low:g} and {high:g}")
            values[name] = value
        tools = raw.get("tools")
        if tools is not None and tools not in TOOL_USES:
            raise fail(join(path, "tools"), f"must be one of {', '.join(TOOL_USES)}")
        learned = raw.get("tools_learned_off", False)
        if not isinstance(learned, bool):
            raise fail(join(path, "tools_learned_off"), "must be true or false")
        return cls(**values, tools=tools, tools_learned_off=learned)


def usable_options(raw: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The settings' `model_options` (model name -> options as JSON) without the values that
    cannot be used, and what was wrong with each left out: one bad value never costs the
    model's other values or the other models' options."""
    kept: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for model, values in raw.items():
        if not isinstance(values, Mapping):
            problems.append(f"{model}: must be an object, not {kind(values)}")
            continue
        entry: dict[str, Any] = {}
        for name, value in values.items():
            try:
                ModelOptions.from_json({name: value}, str(model))
            except ValueError as exc:
                problems.append(str(exc))
            else:
                entry[str(name)] = value
        if entry:
            kept[str(model)] = entry
    return kept, problems
