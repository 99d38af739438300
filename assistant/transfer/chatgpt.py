"""Reading ChatGPT's `conversations.json`: the branch the user last saw, as text messages."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from assistant.errors import ImportError_
from assistant.memory.conversations import Message, is_valid_id
from assistant.transfer.checks import InvalidError, as_list, as_object, fail, iso, kind
from assistant.transfer.plan import ImportedConversation, ImportPlan, counted

CHATGPT_TITLE = "ChatGPT conversation"


def parse_chatgpt(doc: list[Any]) -> ImportPlan:
    """Validate a ChatGPT `conversations.json` document; ImportError_ names the bad field."""
    conversations: list[ImportedConversation] = []
    empty = 0
    seen: dict[str, int] = {}
    try:
        for i, raw in enumerate(doc):
            path = f"[{i}]"
            conversation = _chatgpt_conversation(as_object(raw, path), path)
            if conversation is None:
                empty += 1
                continue
            if conversation.id in seen:
                raise fail(
                    f"{path}.id", f"{conversation.id!r} is also the id of [{seen[conversation.id]}]"
                )
            seen[conversation.id] = i
            conversations.append(conversation)
    except InvalidError as exc:
        raise ImportError_(f"ChatGPT conversations.json: {exc}") from None
    notes: tuple[str, ...] = ()
    if empty:
        notes = (f"{counted(empty, 'conversation')} without text messages will be left out.",)
    return ImportPlan("chatgpt", tuple(conversations), (), notes)


def _chatgpt_conversation(raw: dict[str, Any], path: str) -> ImportedConversation | None:
    """One ChatGPT conversation: the branch ending at `current_node`, or None if it has no text."""
    if "mapping" not in raw:
        raise fail(f"{path}.mapping", "missing: this is not a ChatGPT conversations.json")
    mapping = as_object(raw["mapping"], f"{path}.mapping")
    title = raw.get("title")
    if title is not None and not isinstance(title, str):
        raise fail(f"{path}.title", f"must be a string or null, not {kind(title)}")
    created = _epoch(raw.get("create_time"), f"{path}.create_time")
    updated = _epoch(raw.get("update_time"), f"{path}.update_time")
    current = raw.get("current_node")
    if current is not None and not isinstance(current, str):
        raise fail(f"{path}.current_node", f"must be a string or null, not {kind(current)}")
    if current is None:
        current = _latest_leaf(mapping, path)
        if current is None:
            return None
    elif current not in mapping:
        raise fail(f"{path}.current_node", f"{current!r} is not a node of the mapping")
    messages: list[Message] = []
    taken: set[str] = set()
    fallback = created or updated or iso(datetime.now(UTC))
    for node_id in _branch(mapping, current, path):
        node_path = f"{path}.mapping.{node_id}"
        message = _chatgpt_message(as_object(mapping[node_id], node_path), node_id, node_path)
        if message is None:
            continue
        role, text, at, message_id = message
        at = at or (messages[-1].created_at if messages else fallback)
        message_id = _unique(message_id, taken)
        taken.add(message_id)
        parent = messages[-1].id if messages else None
        messages.append(Message(message_id, parent, role, text, at))
    if not messages:
        return None
    created_at = created or messages[0].created_at
    cid = _chatgpt_id(raw)
    clean_title = " ".join((title or "").split()) or CHATGPT_TITLE
    return ImportedConversation(
        cid, clean_title, created_at, updated or messages[-1].created_at, "", tuple(messages)
    )


def _branch(mapping: dict[str, Any], leaf: str, path: str) -> Iterator[str]:
    """Node ids from the root down to `leaf`, following `parent` links up from it."""
    chain: list[str] = []
    seen: set[str] = set()
    node_id: str | None = leaf
    while node_id is not None:
        if node_id in seen:
            raise fail(f"{path}.mapping.{node_id}.parent", "the parent links form a cycle")
        seen.add(node_id)
        chain.append(node_id)
        node = as_object(mapping[node_id], f"{path}.mapping.{node_id}")
        parent = node.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise fail(
                f"{path}.mapping.{node_id}.parent", f"must be a string or null, not {kind(parent)}"
            )
        if parent is not None and parent not in mapping:
            raise fail(
                f"{path}.mapping.{node_id}.parent", f"{parent!r} is not a node of the mapping"
            )
        node_id = parent
    return reversed(chain)


def _latest_leaf(mapping: dict[str, Any], path: str) -> str | None:
    """Without a `current_node`: the childless node with the newest message."""
    best: tuple[float, str] | None = None
    for node_id, raw in mapping.items():
        node = as_object(raw, f"{path}.mapping.{node_id}")
        if node.get("children"):
            continue
        message = node.get("message")
        when = message.get("create_time") if isinstance(message, dict) else None
        key = (float(when) if isinstance(when, int | float) else -math.inf, node_id)
        if best is None or key > best:
            best = key
    return None if best is None else best[1]


def _chatgpt_message(
    node: dict[str, Any], node_id: str, path: str
) -> tuple[Literal["user", "assistant"], str, str | None, str] | None:
    """(role, text, time, id) of a node's message, or None if it is not a visible text message."""
    raw = node.get("message")
    if raw is None:
        return None
    message = as_object(raw, f"{path}.message")
    author = as_object(message.get("author"), f"{path}.message.author")
    role = author.get("role")
    if not isinstance(role, str):
        raise fail(f"{path}.message.author.role", f"must be a string, not {kind(role)}")
    if role not in ("user", "assistant"):
        return None  # system prompts, tool output
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    recipient = message.get("recipient", "all")
    if recipient not in ("all", None):
        return None  # the assistant calling a tool
    content = as_object(message.get("content"), f"{path}.message.content")
    parts = content.get("parts")
    if parts is None:
        return None  # code, thoughts and other non-text content
    parts = as_list(parts, f"{path}.message.content.parts")
    text = "\n".join(p for p in parts if isinstance(p, str) and p.strip())
    if not text.strip():
        return None
    at = _epoch(message.get("create_time"), f"{path}.message.create_time")
    message_id = message.get("id")
    if not isinstance(message_id, str) or not message_id:
        message_id = node_id
    return ("user" if role == "user" else "assistant"), text, at, message_id


def _epoch(value: object, path: str) -> str | None:
    """A POSIX time (float seconds, or null) as ISO 8601 UTC."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(path, f"must be a number of seconds or null, not {kind(value)}")
    try:
        return iso(datetime.fromtimestamp(value, UTC))
    except (OverflowError, OSError, ValueError):
        raise fail(path, f"{value} is not a usable time") from None


def _chatgpt_id(raw: dict[str, Any]) -> str:
    """ChatGPT's own id when it can name a file, else one derived from the content.

    A stable id makes importing the same file twice find the conversations already there.
    """
    for key in ("conversation_id", "id"):
        value = raw.get(key)
        if isinstance(value, str) and is_valid_id(value):
            return value
    canonical = json.dumps(raw, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return "chatgpt-" + hashlib.sha256(canonical).hexdigest()[:32]


def _unique(candidate: str, taken: set[str]) -> str:
    if candidate not in taken:
        return candidate
    n = 2
    while f"{candidate}-{n}" in taken:
        n += 1
    return f"{candidate}-{n}"
