"""The memory operations `assistant mcp` offers, run on an open Workspace.

They run where the data is open: in the `assistant mcp` process when it holds the data dir's
lock, or in the app when it is running (a request through its local socket). Each answers in
text for the client's model, with the memories fenced as quoted data as in the app's prompts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from assistant.agent.builtin_tools import held
from assistant.agent.curator import Curator, Taken
from assistant.agent.prompt import fence, memory_line
from assistant.errors import AssistantError
from assistant.memory import EVERYWHERE, KINDS, MAX_TEXT_CHARS, MemoryItem, Proposal
from assistant.memory.resembling import screen
from assistant.memory.why import why_text
from assistant.workspace import Workspace

MAX_K: Final = 20
MAX_RECENT: Final = 50
MAX_QUERY_CHARS: Final = 1000
MAX_CLIENT_CHARS: Final = 100
IMPORTANCE: Final = 0.5  # of a memory another app sends: the curator's middle
GLOBAL_ONLY: Final = EVERYWHERE.visible  # the memories another app sees: the global ones


class RequestError(AssistantError):
    """A request the operations refuse (unknown, or bad arguments); the message says why."""


def answer(workspace: Workspace, request: Mapping[str, Any]) -> str:
    """Run one request `{"op": NAME, "args": {...}, "client": NAME}`; its answer in text.

    Raises RequestError for a bad request, AssistantError for what the stores refuse.
    """
    op = request.get("op")
    args = request.get("args", {})
    client = request.get("client")
    if not isinstance(op, str) or op not in OPERATIONS:
        raise RequestError(f"Unknown operation {op!r}; expected one of {', '.join(OPERATIONS)}.")
    if not isinstance(args, dict):
        raise RequestError("The arguments must be a JSON object.")
    if not isinstance(client, str) or not client.strip() or len(client) > MAX_CLIENT_CHARS:
        raise RequestError("The request must name its client (at most 100 characters).")
    return OPERATIONS[op](workspace, args, client.strip())


def search_memory(workspace: Workspace, args: dict[str, Any], _client: str) -> str:
    """The memories that match a query (hybrid search), each with why it matched."""
    query = _text(args, "query", MAX_QUERY_CHARS)
    k = _count(args, "k", 5, MAX_K)
    history = args.get("include_history", False)
    if not isinstance(history, bool):
        raise RequestError("'include_history' must be true or false.")
    # Another app is outside every project: it sees the global memories, as such a chat does.
    hits = workspace.memory.search(query, k=k, include_history=history, scopes=GLOBAL_ONLY)
    if not hits:
        return f"No memory matches {query!r}."
    lines = [f"{memory_line(h.item)}{held(h.item)}; why: {why_text(h)}" for h in hits]
    return fence("memories", "\n".join(lines))


def remember(workspace: Workspace, args: dict[str, Any], client: str) -> str:
    """Remember a statement by the curator's rules (see `Curator.take`), as the user's memory
    policy allows: never a never-topic, and with "ask first" only proposed for review."""
    text = _text(args, "text", MAX_TEXT_CHARS)
    kind = args.get("kind", "fact")
    if kind not in KINDS or kind == "insight":
        kinds = ", ".join(k for k in KINDS if k != "insight")
        raise RequestError(f"Unknown kind {kind!r}; expected one of {kinds}.")
    policy = workspace.settings.policy()
    topic = policy.blocked_by(text)
    if topic is not None:
        return f"Not remembered: the user asked Assistant never to remember anything about {topic}."
    if policy.mode == "ask":
        proposed = Proposal(" ".join(text.split()), kind, IMPORTANCE, by="mcp", client=client)
        screened = screen(workspace.memory, workspace.inbox, proposed)
        if screened != "clear":
            return _taken_text(Taken(screened, None))
        if not workspace.inbox.propose([proposed]):
            return "Already waiting for the user's review in Assistant."
        return (
            "Proposed, not remembered yet: the user reviews new memories in Assistant first (their "
            "setting)."
        )
    provider = workspace.provider() if workspace.is_configured() else None
    curator = Curator(provider, workspace.memory, workspace.topics, workspace.inbox)
    try:
        taken = curator.take(text, kind, IMPORTANCE, origin="mcp", client=client)
    except ValueError as exc:  # the store's own checks
        raise RequestError(str(exc)) from None
    said = _taken_text(taken)
    if provider is None and taken.action not in ("forgotten", "known"):
        said += (
            " (No model is set up in Assistant, so the curator's fallback decided: it compares "
            "the statement with the memories by wording and meaning, and adds it unless one "
            "says nearly the same.)"
        )
    elif provider is None and taken.action == "known":
        said += " (No model is set up in Assistant: the curator's fallback found a near-duplicate.)"
    return said


def _taken_text(taken: Taken) -> str:
    item, before = taken.item, taken.before
    if taken.action == "forgotten":
        return (
            "Not remembered: the user made Assistant forget this. Only they can add it again, "
            "in the Assistant app."
        )
    if taken.action == "held":
        return (
            "Not remembered yet: it resembles something the user asked Assistant to forget, so "
            "it waits for their yes in Assistant's Review tab."
        )
    if item is None:  # "known" whose memory is gone meanwhile
        return "Already remembered."
    if taken.action == "added":
        return f"Remembered as [{item.id}]."
    if taken.action == "known":
        return f"Already remembered as [{item.id}]: {_quoted(item)}."
    if taken.action == "pinned":
        return (
            f"Not changed: this would change the pinned memory [{item.id}] ({_quoted(item)}). "
            "Pinned memories change only when the user does it in the Assistant app."
        )
    was = f"; it said {_quoted(before)}" if before is not None else ""
    if taken.action == "updated":
        return f"Refined the memory [{item.id}] that says the same{was}."
    old = f"[{before.id}]" if before is not None else "an older memory"
    reason = f" ({taken.reason})" if taken.reason else ""
    return (
        f"Remembered as [{item.id}]. It replaces {old}, which no longer holds{reason}{was}; "
        "the old memory is kept in its history."
    )


def recent_memories(workspace: Workspace, args: dict[str, Any], _client: str) -> str:
    """The memories learned last, newest first."""
    limit = _count(args, "limit", 10, MAX_RECENT)
    scoped = [i for i in workspace.memory.all() if i.project is None]  # as search_memory
    items = sorted(scoped, key=lambda i: i.created_at, reverse=True)[:limit]
    if not items:
        return "No memories yet."
    return fence("memories", "\n".join(memory_line(i) + held(i) for i in items))


def search_conversations(workspace: Workspace, args: dict[str, Any], _client: str) -> str:
    """The messages of past conversations that match a query (hybrid search)."""
    query = _text(args, "query", MAX_QUERY_CHARS)
    k = _count(args, "k", 5, MAX_K)
    walled = {p.id for p in workspace.projects.all() if p.isolated}
    hits = workspace.conversations.search(query, k=k * 4 if walled else k)
    if walled:  # an isolated project's chats stay in it
        project_of = {c.id: c.project for c in workspace.conversations.all()}
        hits = [h for h in hits if project_of.get(h.conversation_id) not in walled][:k]
    if not hits:
        return f"No message matches {query!r}."
    found = [{"conversation": h.title, "time": h.created_at, "snippet": h.snippet} for h in hits]
    return fence("conversations", json.dumps(found, ensure_ascii=False, indent=1))


def pinned_memories(workspace: Workspace, _args: dict[str, Any], _client: str) -> str:
    """The pinned memories (in every prompt of the app)."""
    items = workspace.memory.pinned(GLOBAL_ONLY)
    if not items:
        return "No pinned memories."
    return fence("pinned memories", "\n".join(memory_line(i) for i in items))


def working_memory(workspace: Workspace, _args: dict[str, Any], _client: str) -> str:
    """The working memory of the conversation the user worked in last (if it has one)."""
    listing = sorted(workspace.conversations.all(), key=lambda c: c.updated_at, reverse=True)
    for info in listing:
        project = workspace.projects.get(info.project)
        if info.temporary or (project is not None and project.isolated):
            continue
        memory = workspace.working.get(info.id)
        if not memory.is_empty():
            return fence(f"working memory of '{info.title}'", memory.to_prompt())
    return "The working memory is empty."


def _text(args: dict[str, Any], name: str, limit: int) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise RequestError(f"'{name}' must be a non-empty text.")
    if len(value) > limit:
        raise RequestError(
            f"'{name}' can be at most {limit:,} characters; this one has {len(value):,}."
        )
    return value


def _count(args: dict[str, Any], name: str, default: int, limit: int) -> int:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise RequestError(f"'{name}' must be a whole number from 1 to {limit}.")
    return value


def _quoted(item: MemoryItem) -> str:
    return json.dumps(item.text, ensure_ascii=False)


Operation = Callable[[Workspace, dict[str, Any], str], str]
OPERATIONS: Final[dict[str, Operation]] = {
    "search_memory": search_memory,
    "remember": remember,
    "recent_memories": recent_memories,
    "search_conversations": search_conversations,
    "pinned_memories": pinned_memories,
    "working_memory": working_memory,
}
