"""MCP tools as the agent's tools: namespaced names, schema checks, fenced results, selection.

The model sees a tool as `SERVER__TOOL` (letters, digits, `_` and `-` only, at most 64: what
the OpenAI API accepts), so that the server's tool name is in it and no server tool can take a
built-in tool's name. A result is quoted data, fenced like memories, never instructions. With
more than `SELECT_ABOVE` enabled tools, a turn is offered the `SELECTED` most relevant to the
user's message and `find_tools`, which searches the others and offers those it finds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jsonschema import ValidationError
from jsonschema.validators import validator_for

from assistant.agent.builtin_tools import ToolContext
from assistant.agent.prompt import fence
from assistant.agent.tool_images import IMAGES_LINE, ToolImage
from assistant.agent.tools import External, Tool, ToolOutput
from assistant.errors import ToolError
from assistant.mcp_client.manager import McpManager
from assistant.mcp_client.selection import ToolIndex
from assistant.mcp_client.status import McpTool

log = logging.getLogger(__name__)

ImageSaver = Callable[[str, ToolImage], str]  # (conversation id, image) -> its file name
SELECT_ABOVE = 20  # enabled tools; above, each turn is offered a selection
SELECTED = 8  # tools offered per turn when selecting (and found per search)
DESCRIPTION_CHARS = 600  # a server's long description is cut: every turn pays for it
FIND_TOOLS = "find_tools"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
MAX_NAME = 64


def model_name(server: str, tool: str, *, distinct: bool = False) -> str:
    """The name the model calls a server's tool by: `server__tool`, made safe and short.

    `distinct`: with a digest of the real names after the server's, for a name that another
    tool has already (server names that differ only in characters made safe: "my files" and
    "my_files").
    """
    safe_server, safe_tool = _UNSAFE.sub("_", server), _UNSAFE.sub("_", tool)
    name = f"{safe_server}__{safe_tool}"
    if len(name) <= MAX_NAME and not distinct:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:6]
    room = MAX_NAME - len(safe_tool) - len(digest) - 3
    if room >= 1:
        return f"{safe_server[:room]}{digest}__{safe_tool}"
    return f"{digest}__{safe_tool[: MAX_NAME - len(digest) - 2]}"


def unique_names(tools: Iterable[McpTool]) -> dict[str, str]:
    """The model's name of each tool (by `server/tool` key), no two the same."""
    names: dict[str, str] = {}
    for tool in tools:
        name = model_name(tool.server, tool.name)
        if name in names.values():
            name = model_name(tool.server, tool.name, distinct=True)
            log.warning("MCP tool %s is offered as %s: its usual name is taken", tool.key, name)
        names[tool.key] = name
    return names


def split_name(name: str) -> tuple[str, str] | None:
    """(server, tool) of a name made by `model_name`, as safe names; None for a built-in."""
    server, sep, tool = name.partition("__")
    return (server, tool) if sep and server and tool else None


class McpToolSource:
    """The enabled tools of the ready servers, for one turn (the agent's `ToolSource`)."""

    def __init__(
        self,
        manager: McpManager,
        index: ToolIndex,
        *,
        disabled: Iterable[str] = (),
        trusted: Iterable[str] = (),
        on_trust: Callable[[str], None] = lambda key: None,
        save_image: ImageSaver | None = None,
    ) -> None:
        self._manager = manager
        self._save_image = save_image  # keeps a result's images for the chat
        self._index = index
        self._disabled = frozenset(disabled)  # `server/tool` keys switched off
        self._trusted = set(trusted)  # `server/tool` keys always allowed
        self._on_trust = on_trust

    def enabled(self) -> list[McpTool]:
        """The tools the model may use: of ready servers, not switched off."""
        return [tool for tool in self._manager.tools() if tool.key not in self._disabled]

    def tools_for(self, query: str) -> tuple[list[Tool], frozenset[str]]:
        """Every enabled tool; beyond SELECT_ABOVE all but the relevant ones hidden, and the
        `find_tools` search offered."""
        enabled = self.enabled()
        names = unique_names(enabled)
        tools = [self._tool(item, names[item.key]) for item in enabled]
        if len(enabled) <= SELECT_ABOVE:
            return tools, frozenset()
        chosen = {names[t.key] for t in self._index.rank(query, enabled, SELECTED)}
        hidden = frozenset(t.name for t in tools) - chosen
        return [*tools, self._finder(enabled, names)], hidden

    def trust(self, tool: Tool) -> None:
        """Remember that the user always allows this tool."""
        if tool.external is not None:
            key = f"{tool.external.server}/{tool.external.name}"
            self._trusted.add(key)
            self._on_trust(key)

    def _tool(self, item: McpTool, full_name: str) -> Tool:
        manager, server, name = self._manager, item.server, item.name
        validator = validator_for(item.input_schema)(item.input_schema)

        def check(arguments: Mapping[str, Any]) -> dict[str, Any]:
            errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: e.path)
            if errors:
                raise ToolError(f"{full_name}: {_problem(errors[0])}")
            return dict(arguments)

        def call(arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
            result = manager.call(server, name, arguments, context.cancel)
            text = fence(f"MCP server {server}", result.text)
            if result.is_error:
                raise ToolError(f"{server} · {name} returned an error:\n{text}")
            saved = self._saved(context.conversation_id, result.images)
            if saved:  # after the fence: a server cannot write this line
                text += f"\n{IMAGES_LINE}{', '.join(saved)}"
            return ToolOutput(text, result.images)

        description = item.description or item.title or name
        if len(description) > DESCRIPTION_CHARS:
            description = description[: DESCRIPTION_CHARS - 1] + "…"
        return Tool(
            name=full_name,
            description=f"{description} (from the MCP server '{server}')",
            parameters=_parameters(item.input_schema),
            func=call,
            injected=frozenset({"context"}),
            check=check,
            external=External(server, name, asks=self._asks(item)),
        )

    def _saved(self, conversation_id: str, images: tuple[ToolImage, ...]) -> list[str]:
        """Keep the images in the conversation; their file names (none if they cannot be)."""
        if self._save_image is None or not images:
            return []
        try:
            return [self._save_image(conversation_id, image) for image in images]
        except OSError as exc:  # the model still sees them; only the chat's copy is missing
            log.warning("Could not keep a tool's images: %s", exc)
            return []

    def _asks(self, item: McpTool) -> bool:
        return item.may_change_things and item.key not in self._trusted

    def _finder(self, enabled: list[McpTool], names: Mapping[str, str]) -> Tool:
        index = self._index

        def find(arguments: dict[str, Any], context: ToolContext) -> str:
            found = index.rank(str(arguments["query"]), enabled, SELECTED)
            if not found:
                return "No tool matches; try other words."
            context.revealed.update(names[t.key] for t in found)
            lines = [f"- {names[t.key]}: {t.description or t.title or t.name}" for t in found]
            return "These tools can be called now:\n" + fence("tool search", "\n".join(lines))

        schema = {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What the tool should do."}},
            "required": ["query"],
            "additionalProperties": False,
        }
        checker = validator_for(schema)(schema)

        def check(arguments: Mapping[str, Any]) -> dict[str, Any]:
            errors = list(checker.iter_errors(dict(arguments)))
            if errors:
                raise ToolError(f"{FIND_TOOLS}: {_problem(errors[0])}")
            return dict(arguments)

        return Tool(
            name=FIND_TOOLS,
            description=(
                "Search the other tools available from MCP servers by what you need them to "
                "do; the tools found can be called next."
            ),
            parameters=schema,
            func=find,
            injected=frozenset({"context"}),
            check=check,
        )


def _parameters(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as the model gets it (an object schema always has `properties`)."""
    parameters = json.loads(json.dumps(schema))
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    return dict(parameters)


def _problem(error: ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    return f"'{where}': {error.message}" if where else error.message
