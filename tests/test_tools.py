"""Tools: schema derived from signature and docstring, validation, registry calls."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

import pytest

from assistant.agent.cancel import OperationCancelledError
from assistant.agent.tools import CONTEXT_NAMES, Tool, ToolRegistry, tool
from assistant.errors import ToolError

if TYPE_CHECKING:
    from assistant.memory.semantic import SemanticMemory

Kind = Literal["fact", "preference"]


@tool
def sample(
    *,
    text: str,
    count: int,
    ratio: float,
    flag: bool,
    kind: Kind,
    level: Literal[1, 2, 3],
    tags: list[str],
    ids: list[int],
    note: str | None,
    limit: Optional[int] = 5,  # noqa: UP045 - Optional is supported too
    mode: Literal["fast", "slow"] = "fast",
    scores: list[float] | None = None,
    memory: SemanticMemory,
) -> dict[str, Any]:
    """Exercise every supported type.

    Second paragraph   of the summary.

    Args:
        text: The text.
        count (int): How many,
            continued on a second line
              and a third.
        ratio: A ratio.
        flag: A flag.
        kind: The kind.
        level: The level.
        tags: The tags.
        ids: The ids.
        note: An optional note.
        limit: The limit.
        mode: The mode.
        scores: Some scores.
        memory: Injected; not in the schema.

    Returns:
        Everything it got.
    """
    return {"text": text, "memory": memory}


EXPECTED_PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The text."},
        "count": {
            "type": "integer",
            "description": "How many, continued on a second line and a third.",
        },
        "ratio": {"type": "number", "description": "A ratio."},
        "flag": {"type": "boolean", "description": "A flag."},
        "kind": {"type": "string", "enum": ["fact", "preference"], "description": "The kind."},
        "level": {"type": "integer", "enum": [1, 2, 3], "description": "The level."},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "The tags."},
        "ids": {"type": "array", "items": {"type": "integer"}, "description": "The ids."},
        "note": {"type": ["string", "null"], "description": "An optional note."},
        "limit": {"type": ["integer", "null"], "description": "The limit.", "default": 5},
        "mode": {
            "type": "string",
            "enum": ["fast", "slow"],
            "description": "The mode.",
            "default": "fast",
        },
        "scores": {
            "type": ["array", "null"],
            "items": {"type": "number"},
            "description": "Some scores.",
        },
    },
    "required": ["text", "count", "ratio", "flag", "kind", "level", "tags", "ids"],
    "additionalProperties": False,
}

GOOD = {
    "text": "hi",
    "count": 2,
    "ratio": 1,
    "flag": False,
    "kind": "fact",
    "level": 3,
    "tags": ["a"],
    "ids": [1, 2],
}


def test_schema_for_every_supported_type() -> None:
    assert isinstance(sample, Tool)
    assert sample.name == "sample"
    assert sample.description == "Exercise every supported type. Second paragraph of the summary."
    assert sample.injected == frozenset({"memory"})
    assert sample.parameters == EXPECTED_PARAMETERS
    assert sample.schema() == {
        "type": "function",
        "function": {
            "name": "sample",
            "description": "Exercise every supported type. Second paragraph of the summary.",
            "parameters": EXPECTED_PARAMETERS,
        },
    }
    json.dumps(sample.schema())  # serializable as is


def test_schema_is_a_copy() -> None:
    sample.schema()["function"]["parameters"]["properties"].clear()
    assert sample.parameters == EXPECTED_PARAMETERS


def test_context_names() -> None:
    assert (
        frozenset({"memory", "working", "conversations", "knowledge", "context"}) == CONTEXT_NAMES
    )


def test_minimal_tool_without_parameters() -> None:
    @tool
    def now() -> str:
        """The current date and time."""
        return "2024-01-01"

    assert now.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }
    assert now.description == "The current date and time."


def test_summary_stops_at_other_sections_and_defaults_that_are_not_json() -> None:
    marker = object()

    @tool
    def f(x: int = marker, context: object = None) -> None:  # type: ignore[assignment]
        """Do it.

        Returns:
            Nothing.

        Args:
            x: An x.
        """

    assert f.description == "Do it."
    assert f.parameters["properties"] == {"x": {"type": "integer", "description": "An x."}}
    assert f.parameters["required"] == []
    assert f.injected == frozenset({"context"})


def _unsupported_annotations() -> list[Any]:
    return [
        dict[str, int],
        list[list[str]],
        list,
        int | str,
        Literal["a", 1],
        Literal[True],
        Annotated[int, "metadata"],
        bytes,
        Any,
    ]


@pytest.mark.parametrize("annotation", _unsupported_annotations())
def test_unsupported_annotation_raises_at_decoration(annotation: Any) -> None:
    def f(bad: int) -> None:
        """Do it.

        Args:
            bad: Bad.
        """

    f.__annotations__["bad"] = annotation
    with pytest.raises(TypeError, match="parameter 'bad'"):
        tool(f)


def test_decoration_errors() -> None:
    def no_doc(x: int) -> None:
        pass

    def undocumented(x: int) -> None:
        """Do it."""

    def stray(x: int) -> None:
        """Do it.

        Args:
            x: An x.
            y: No such parameter.
        """

    def untyped(x) -> None:  # type: ignore[no-untyped-def]
        """Do it.

        Args:
            x: An x.
        """

    def variadic(*x: int) -> None:
        """Do it.

        Args:
            x: Some x.
        """

    def garbled(x: int) -> None:
        """Do it.

        Args:
            not an entry
        """

    cases = [
        (no_doc, "summary"),
        (undocumented, "parameter 'x' is not described"),
        (stray, "unknown parameter.*'y'"),
        (untyped, "parameter 'x' has no type annotation"),
        (variadic, "only named parameters"),
        (garbled, "cannot read the Args line"),
    ]
    for func, message in cases:
        with pytest.raises(TypeError, match=message):
            tool(func)


def test_validate_accepts_and_converts() -> None:
    checked = sample.validate({**GOOD, "scores": [1, 2.5], "ids": [1.0, 2], "limit": None})
    expected = {**GOOD, "ratio": 1.0, "scores": [1.0, 2.5], "ids": [1, 2], "limit": None}
    assert checked == {**expected, "note": None}
    assert type(checked["ratio"]) is float
    assert type(checked["scores"][0]) is float
    assert type(checked["ids"][0]) is int
    # An omitted `X | None` without a Python default gets None; other defaults are Python's.
    assert sample.validate(GOOD)["note"] is None
    assert "limit" not in sample.validate(GOOD)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"extra": 1}, "sample: unknown argument(s) 'extra'. Valid arguments: text, count,"),
        ({"text": None}, "sample: 'text' must be a string, got null."),
        ({"count": True}, "sample: 'count' must be an integer, got true."),
        ({"count": 1.5}, "sample: 'count' must be an integer, got 1.5."),
        ({"count": "2"}, "sample: 'count' must be an integer, got '2'."),
        ({"ratio": "high"}, "sample: 'ratio' must be a number, got 'high'."),
        ({"ratio": False}, "sample: 'ratio' must be a number, got false."),
        ({"ratio": 10**400}, "sample: 'ratio' must be a number"),
        ({"flag": 1}, "sample: 'flag' must be true or false, got 1."),
        ({"kind": "plan"}, "sample: 'kind' must be one of 'fact', 'preference', got 'plan'."),
        ({"level": 4}, "sample: 'level' must be one of 1, 2, 3, got 4."),
        ({"level": True}, "sample: 'level' must be an integer, got true."),
        ({"tags": "a"}, "sample: 'tags' must be a list, got 'a'."),
        ({"tags": ["a", 3]}, "sample: 'tags[1]' must be a string, got 3."),
        ({"note": 3}, "sample: 'note' must be a string or null, got 3."),
        ({"mode": None}, "sample: 'mode' must be a string, got null."),
        ({"scores": [1, "x"]}, "sample: 'scores[1]' must be a number, got 'x'."),
    ],
)
def test_validation_errors(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as info:
        sample.validate({**GOOD, **change})
    assert str(info.value).startswith(message)


def test_missing_required_arguments() -> None:
    arguments = {k: v for k, v in GOOD.items() if k not in ("text", "tags")}
    with pytest.raises(ToolError) as info:
        sample.validate(arguments)
    assert str(info.value) == "sample: missing required argument(s) 'text', 'tags'."


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(ToolError) as info:
        sample.validate({**GOOD, "count": "x" * 1000})
    assert len(str(info.value)) < 120


@tool
def remember(text: str, importance: float = 0.5, memory: list[str] | None = None) -> dict[str, Any]:
    """Store a memory.

    Args:
        text: What to remember.
        importance: From 0 to 1.
    """
    assert memory is not None
    memory.append(text)
    return {"stored": text, "importance": importance, "note": "café"}


@tool
def fail(kind: Literal["tool", "value", "cancel", "empty"]) -> str:
    """Fail on purpose.

    Args:
        kind: How to fail.
    """
    if kind == "tool":
        raise ToolError("fail: nothing to fail on.")
    if kind == "cancel":
        raise OperationCancelledError
    if kind == "empty":
        raise KeyError
    raise ValueError("disk on fire")


@tool
def echo(value: Literal["none", "text", "list", "number", "object"]) -> object:
    """Return values of several kinds.

    Args:
        value: Which kind.
    """
    return {
        "none": None,
        "text": "plain text",
        "list": ["ü", 1],
        "number": 2.5,
        "object": Tool,
    }[value]


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry([remember, fail, echo])


def test_registry_lookup(registry: ToolRegistry) -> None:
    assert registry.names() == ["remember", "fail", "echo"]
    assert registry.get("remember") is remember
    assert registry.get("nope") is None
    assert registry.schemas() == [remember.schema(), fail.schema(), echo.schema()]
    with pytest.raises(ValueError, match="already registered"):
        registry.register(remember)


def test_call_injects_context(registry: ToolRegistry) -> None:
    store: list[str] = []
    result = registry.call("remember", '{"text": "tea", "importance": 1}', {"memory": store})
    assert json.loads(result) == {"stored": "tea", "importance": 1.0, "note": "café"}
    assert "café" in result  # ensure_ascii=False
    assert store == ["tea"]
    assert "memory" not in json.dumps(remember.parameters)


def test_call_without_needed_context(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match="remember cannot run here: no memory available"):
        registry.call("remember", '{"text": "tea"}', {})


def test_call_unknown_tool(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError) as info:
        registry.call("forget", "{}", {})
    assert str(info.value) == "Unknown tool 'forget'. Available tools: remember, fail, echo."


@pytest.mark.parametrize("raw", ['{"text": ', "{'text': 'x'}", "[" * 100_000])
def test_call_invalid_json(registry: ToolRegistry, raw: str) -> None:
    with pytest.raises(ToolError, match=r"^Arguments for 'remember' are not valid JSON: "):
        registry.call("remember", raw, {"memory": []})


@pytest.mark.parametrize(("raw", "shown"), [('["tea"]', '["tea"]'), ('"tea"', "'tea'"), ("3", "3")])
def test_call_non_object_json(registry: ToolRegistry, raw: str, shown: str) -> None:
    with pytest.raises(ToolError) as info:
        registry.call("remember", raw, {"memory": []})
    assert str(info.value) == f"Arguments for 'remember' must be a JSON object, got {shown}."


def test_call_validates(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match=r"^remember: 'importance' must be a number, got 'high'\.$"):
        registry.call("remember", '{"text": "x", "importance": "high"}', {"memory": []})


def test_empty_arguments_mean_no_arguments(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match="missing required argument"):
        registry.call("remember", "  ", {"memory": []})
    assert registry.call("echo", '{"value": "none"}', {}) == "OK"


def test_errors_inside_tools(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match=r"^fail: nothing to fail on\.$"):
        registry.call("fail", '{"kind": "tool"}', {})
    with pytest.raises(ToolError, match=r"^fail failed: disk on fire$") as info:
        registry.call("fail", '{"kind": "value"}', {})
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(ToolError, match=r"^fail failed: KeyError$"):
        registry.call("fail", '{"kind": "empty"}', {})
    with pytest.raises(OperationCancelledError):
        registry.call("fail", '{"kind": "cancel"}', {})


def test_base_exceptions_propagate() -> None:
    @tool
    def interrupted() -> None:
        """Be interrupted."""
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ToolRegistry([interrupted]).call("interrupted", "", {})


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("none", "OK"),
        ("text", "plain text"),
        ("list", '["ü", 1]'),
        ("number", "2.5"),
        ("object", str(Tool)),
    ],
)
def test_result_conversion(registry: ToolRegistry, value: str, text: str) -> None:
    assert registry.call("echo", json.dumps({"value": value}), {}) == text


def test_context_passes_through_unchanged() -> None:
    seen: list[Mapping[str, Any]] = []

    @tool
    def look(context: Mapping[str, Any], working: object) -> str:
        """Look at the context.

        Args:
            context: Injected.
        """
        seen.append(context)
        return str(working)

    assert look.parameters["properties"] == {}
    assert look.injected == frozenset({"context", "working"})
    ctx = {"context": {"a": 1}, "working": "w", "memory": None}
    assert ToolRegistry([look]).call("look", "{}", ctx) == "w"
    assert seen == [{"a": 1}]
