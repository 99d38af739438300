"""Memories in words: where one came from, why it has no source, and what happened to it (its
history). Why a search found one is `assistant.memory.why` (the MCP server says it too)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from assistant.memory import MemoryItem
from assistant.memory.items import MemoryEvent, Origin
from assistant.memory.tombstones import REJECTED_PROPOSAL
from assistant.ui.times import day_text
from assistant.ui.wording import count, shorten

TitleOf = Callable[[str], str | None]  # a conversation's title, None if it is gone

ORIGIN_ICONS: dict[str, str] = {
    "user": "✎",
    "tool": "↳",
    "curator": "⚙",
    "import": "⇩",
    "reflection": "✦",
    "mcp": "⇄",
}
_BY: dict[str, str] = {
    "user": "you",
    "tool": "the assistant",
    "curator": "the curator",
    "import": "an import",
    "reflection": "a reflection",
    "mcp": "an MCP client",
}
# MCP clients as they name themselves (`clientInfo.name`, what their memories keep), by the
# name their users know them by.
KNOWN_CLIENTS: dict[str, str] = {"claude-ai": "Claude Desktop"}


def imported_from(item: MemoryItem) -> str | None:
    """ "ChatGPT" for a memory tagged "Imported from ChatGPT", else None."""
    for tag in item.tags:
        if tag.lower().startswith("imported from "):
            return tag[len("imported from ") :]
    return None


def origin_short(item: MemoryItem) -> str:
    """Where a memory came from, in a few words: "You added", "Extracted by the curator"."""
    if item.origin == "user":
        return "You added"
    if item.origin == "tool":
        return "Remembered by the assistant"
    if item.origin == "curator":
        return "Extracted by the curator"
    if item.origin == "import":
        source = imported_from(item)
        return f"Imported from {source}" if source else "Imported"
    if item.origin == "mcp":
        return f"Remembered by {client_text(item.client)}"
    return f"Insight from {count(len(item.rests_on), 'memory', 'memories')}"


def origin_text(item: MemoryItem, title_of: TitleOf) -> str:
    """Where a memory came from: "Remembered in 'Lisbon trip' on 3 March"."""
    when = f"on {day_text(item.created_at)}"
    title = title_of(item.source.conversation_id) if item.source is not None else None
    where = f"in '{title}' " if title else ""
    if item.origin == "user":
        return f"You added {when}"
    if item.origin == "tool":
        return f"Remembered {where}{when}"
    if item.origin == "curator":
        return f"Extracted by the curator {where.replace('in ', 'from ', 1)}{when}"
    if item.origin in ("import", "mcp"):
        return f"{origin_short(item)} {when}"
    return f"{origin_short(item)}, {when}"


def no_source_reason(item: MemoryItem, conversation_exists: bool) -> str:
    """Why "Show Source" cannot open the message a memory came from."""
    if item.source is not None and not conversation_exists:
        return "Its conversation was deleted"
    if item.origin == "user":
        return "No source: you added it yourself"
    if item.origin == "import":
        return "No source: it was imported without its conversation"
    if item.origin == "reflection":
        return "No single source: drawn from other memories"
    if item.origin == "mcp":
        return f"No source: {client_text(item.client)} sent it (through MCP)"
    return "No source: the message was not recorded"


def client_text(client: str | None) -> str:
    """An MCP client as the user knows it: "Claude Desktop" for `claude-ai`."""
    return KNOWN_CLIENTS.get(client, client) if client else _BY["mcp"]


def by_text(by: Origin | None, client: str | None = None) -> str:
    """Who did something, after "by": "you", "the curator", "Claude Desktop" (`client`)."""
    if by == "mcp" and client:
        return client_text(client)
    return _BY.get(by or "", "")


def scope_text(project: str | None, projects: Mapping[str, str] | None = None) -> str:
    """A memory's scope in words: "global", "project 'Novel'" ("a project" if unknown)."""
    if project is None:
        return "global"
    name = (projects or {}).get(project)
    return f"project {_quote(name)}" if name else "a project"


def _quote(text: str | None, limit: int = 80) -> str:
    return f"'{shorten(text or '', limit)}'"


def event_text(
    event: MemoryEvent, item: MemoryItem | None = None, projects: Mapping[str, str] | None = None
) -> str:
    """One event of a memory's history in words: "Importance 0.8 → 0.6, not used for 90 days".

    `item`, the memory, if known, names the source of an import ("Imported from ChatGPT");
    `projects`, the projects' names by id, where a move went."""
    who = f" by {by_text(event.by, event.client)}" if event.by else ""
    kind = event.type
    if kind == "created" and event.by == "import" and item is not None:
        return origin_short(item)
    if kind == "created":
        made = {
            "user": "Added by you",
            "tool": "Remembered by the assistant",
            "curator": "Extracted by the curator",
            "import": "Imported",
            "reflection": "Written by a reflection",
            "mcp": f"Remembered by {by_text('mcp', event.client)}",
        }.get(event.by or "", "Added")
        return f"{made}, {event.reason}" if event.reason else made
    if kind == "edited":
        return f"Edited{who}: {_quote(event.text_before)} → {_quote(event.text_after)}"
    if kind == "merged":
        return f"Refined{who}: was {_quote(event.text_before)}"
    if kind == "superseded":
        reason = f": {event.reason}" if event.reason else ""
        return f"Replaced by a newer memory{reason}"
    if kind == "decayed":
        before, after = event.importance_before, event.importance_after
        change = (
            f"Importance {before:.1f} → {after:.1f}"
            if before is not None and after is not None
            else "Importance lowered"
        )
        return f"{change}, {event.reason}" if event.reason else change
    if kind == "used":
        return "Used in a reply"
    if kind == "moved":
        return f"Moved{who}: {scope_text(event.project_before, projects)} → " + scope_text(
            event.project_after, projects
        )
    if kind == "forgotten" and event.reason == REJECTED_PROPOSAL:
        return "Rejected by you on the Review tab"
    if kind == "archived":
        return f"Archived{who}" + (f": {event.reason}" if event.reason else "")
    return f"{kind.capitalize()}{who}"  # pinned, unpinned, forgotten, restored
