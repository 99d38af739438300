"""What the app knows of each MCP server: its state, its tools, and why it failed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


class ServerFailedError(Exception):
    """A server could not be started, or a call to it failed; the message is for the user."""


State = Literal["disabled", "starting", "ready", "failed", "stopped"]


@dataclass(frozen=True)
class McpTool:
    """One tool a server offers, as it listed it."""

    server: str
    name: str
    description: str
    input_schema: Mapping[str, Any]
    title: str = ""
    read_only: bool = False  # `readOnlyHint`
    destructive: bool = False  # `destructiveHint` given as true

    @property
    def key(self) -> str:
        """`server/tool`: how settings name the tool (switches, trust)."""
        return f"{self.server}/{self.name}"

    @property
    def may_change_things(self) -> bool:
        """Whether the tool asks before it runs: not read-only, or destructive."""
        return not self.read_only or self.destructive


@dataclass(frozen=True)
class ServerStatus:
    """One server's state for the UI: starting, ready with its tools, failed with its words."""

    name: str
    state: State
    tools: tuple[McpTool, ...] = ()
    error: str = ""  # the server's own error text, or ours
    stderr_tail: str = ""  # the last lines the server wrote to stderr
    refused: tuple[str, ...] = field(default=())  # tools left out, each with why

    def describe(self) -> str:
        """One line: 'ready · 3 tools', 'failed: ...'."""
        if self.state == "ready":
            count = len(self.tools)
            return f"ready · {count} tool{'s' if count != 1 else ''}"
        if self.state == "failed":
            return f"failed: {self.error}"
        return self.state
