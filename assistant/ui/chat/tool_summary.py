"""Tool calls in words a user reads: "Remembered · …", "Searched memory for 'x' · 3 found"."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assistant.knowledge import citations_in
from assistant.memory.text import identifier_words
from assistant.ui.wording import shorten

MemoryLookup = Callable[[str], str | None]  # memory id -> its text, None if gone
QUOTE_CHARS = 40
NOT_RUN = "Not run:"  # how the agent's result starts when the user stopped or denied a tool
# How the remember tool's result starts when the memory waits for the user's review (the user
# chose "ask me first", or it resembles something they had forgotten).
WAITING = ("Proposed, not saved yet", "Already waiting for the user's review", "Not saved yet:")
_MEMORY_ID = re.compile(r"\b([0-9a-f]{32})\b")
# How a server tool's first word reads once it ran: "lookup_order" is "Looked up order".
_PAST = {
    "add": "Added",
    "check": "Checked",
    "create": "Created",
    "delete": "Deleted",
    "fetch": "Fetched",
    "find": "Found",
    "get": "Got",
    "list": "Listed",
    "lookup": "Looked up",
    "move": "Moved",
    "open": "Opened",
    "query": "Queried",
    "read": "Read",
    "refund": "Refunded",
    "remove": "Removed",
    "run": "Ran",
    "search": "Searched",
    "send": "Sent",
    "set": "Set",
    "update": "Updated",
    "write": "Wrote",
}
# A recalled memory is one line that starts with its id: "- [id] (kind) ..." (prompt.memory_line).
_RECALLED = re.compile(r"^\W*\[([0-9a-f]{32})\]", re.MULTILINE)


@dataclass(frozen=True)
class ToolSummary:
    """One collapsed tool line: what was done, and a memory it is about (shown as a chip)."""

    action: str  # "Remembered", "Searched memory for 'sister' · 3 found"
    memory_id: str | None = None
    memory_text: str | None = None  # the chip's label
    proposed: bool = False  # the memory waits for the user's review: not saved yet


def summarize(
    name: str, arguments: str, result: str | None, ok: bool, memory_text: MemoryLookup
) -> ToolSummary:
    """The line for a tool call; `result` None while it runs. Never shows a bare id."""
    args = _arguments(arguments)
    if not ok and result is not None and result.startswith(NOT_RUN):
        return ToolSummary(f"{_doing(name, args)} · not run")
    if not ok:
        return ToolSummary(f"{_doing(name, args)} failed")
    if name == "remember":
        if (result or "").startswith(WAITING):
            return ToolSummary("Proposed for review", None, _quote(str(args.get("text", ""))), True)
        return _about_memory("Remembered" if result else "Remembering", result, args, memory_text)
    if name in ("forget", "pin"):
        verb = {"forget": "Forgot", "pin": "Pinned" if args.get("pinned", True) else "Unpinned"}
        memory_id = str(args.get("memory_id", ""))
        text = memory_text(memory_id) if memory_id else None
        return ToolSummary(verb[name], memory_id or None, _quote(text) if text else "a memory")
    if name in ("recall", "search_conversations", "search_files"):
        where = _WHERE[name]
        line = f"Searched {where} for '{_quote(str(args.get('query', '')))}'"
        if result is not None:
            line += f" · {_found(name, result)}"
        return ToolSummary(line)
    if name == "update_working_memory":
        return ToolSummary("Updated the plan" if result is not None else "Updating the plan")
    if name == "calculator":
        line = f"Calculated {_quote(str(args.get('expression', '')))}"
        return ToolSummary(line + (f" = {_quote(result)}" if result is not None else ""))
    if name == "current_datetime":
        return ToolSummary("Checked the date and time")
    server, sep, tool = name.partition("__")
    if sep and server and tool:  # an MCP server's tool (assistant.mcp_client names them so)
        return ToolSummary(_server_tool(server, tool, args, done=result is not None))
    return ToolSummary(f"Used {name}")


def _server_tool(server: str, tool: str, args: dict[str, Any], *, done: bool) -> str:
    """'shop · Looked up order 'A-17'': the server, the tool's name in words, its first short
    text argument."""
    words = identifier_words(tool)
    if not words:
        return f"{server} · {tool}"
    first = words[0].lower()
    if done and first in _PAST:
        words[0] = _PAST[first]
    action = " ".join(words)
    action = action[0].upper() + action[1:]
    value = next((v for v in args.values() if isinstance(v, str) and v.strip()), None)
    if value is not None:
        action += f" '{_quote(value)}'"
    return f"{server} · {action}"


_WHERE = {"recall": "memory", "search_conversations": "past conversations",
          "search_files": "your files"}  # fmt: skip


def _about_memory(
    verb: str, result: str | None, args: dict[str, Any], memory_text: MemoryLookup
) -> ToolSummary:
    found = _MEMORY_ID.search(result or "")
    memory_id = found.group(1) if found else None
    text = (memory_text(memory_id) if memory_id else None) or str(args.get("text", ""))
    return ToolSummary(verb, memory_id, _quote(text))


def _doing(name: str, args: dict[str, Any]) -> str:
    server, sep, tool = name.partition("__")
    if sep and server and tool:
        return _server_tool(server, tool, args, done=False)
    labels = {
        "remember": "Remembering",
        "recall": "Searching memory",
        "forget": "Forgetting",
        "pin": "Pinning",
        "update_working_memory": "Updating the plan",
        "search_conversations": "Searching past conversations",
        "search_files": "Searching your files",
        "calculator": "Calculating",
        "current_datetime": "Checking the date and time",
    }
    return labels.get(name, f"Using {name}")


def _found(name: str, result: str) -> str:
    if name == "recall":
        count = len(set(_RECALLED.findall(result)))
    elif name == "search_files":
        count = len(citations_in(result))
    else:
        try:
            parsed = json.loads(result)
            count = len(parsed) if isinstance(parsed, list) else 0
        except ValueError:
            count = 0
    return "nothing found" if count == 0 else f"{count} found"


def _arguments(arguments: str) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _quote(text: str) -> str:
    return shorten(text, QUOTE_CHARS)
