"""Chat provider, tools, tool-dispatch loop and curator (no Qt here).

The names below are the package's face; each loads its module on first use (PEP 562), so
that importing one light module (the events, say) does not load the openai client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assistant.lazy import lazy_getattr

if TYPE_CHECKING:
    from assistant.agent.builtin_tools import MEMORY_TOOLS, OTHER_TOOLS, builtin_registry
    from assistant.agent.cancel import CancelToken, OperationCancelledError
    from assistant.agent.events import (
        AgentEvent,
        Cancelled,
        ConfirmationRequested,
        Failed,
        Finished,
        MemoryEdited,
        Notice,
        TextDelta,
        ToolCallFinished,
        ToolCallStarted,
        ToolsTurnedOff,
        Waiting,
    )
    from assistant.agent.loop import Agent, AgentConfig
    from assistant.agent.tools import Tool, ToolRegistry, tool

_MODULES = {
    "builtin_tools": ("MEMORY_TOOLS", "OTHER_TOOLS", "builtin_registry"),
    "cancel": ("CancelToken", "OperationCancelledError"),
    "events": (
        "AgentEvent",
        "Cancelled",
        "ConfirmationRequested",
        "Failed",
        "Finished",
        "MemoryEdited",
        "Notice",
        "TextDelta",
        "ToolCallFinished",
        "ToolCallStarted",
        "ToolsTurnedOff",
        "Waiting",
    ),
    "loop": ("Agent", "AgentConfig"),
    "tools": ("Tool", "ToolRegistry", "tool"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "MEMORY_TOOLS",
    "OTHER_TOOLS",
    "Agent",
    "AgentConfig",
    "AgentEvent",
    "CancelToken",
    "Cancelled",
    "ConfirmationRequested",
    "Failed",
    "Finished",
    "MemoryEdited",
    "Notice",
    "OperationCancelledError",
    "TextDelta",
    "Tool",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolRegistry",
    "ToolsTurnedOff",
    "Waiting",
    "builtin_registry",
    "tool",
]


__getattr__ = lazy_getattr(__name__, _HOME)
