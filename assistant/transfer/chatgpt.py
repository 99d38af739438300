"""Reading one conversation of a ChatGPT export: the branch the user last saw, as messages."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from assistant.json_fields import as_object, fail, kind
from assistant.memory import is_valid_id
from assistant.timestamps import stamp
from assistant.transfer.chatgpt_content import message_text
from assistant.transfer.plan import ImportedConversation, Turn
from assistant.transfer.tally import Tally

CHATGPT_TITLE = "ChatGPT conversation"


def is_chatgpt(raw: object) -> bool:
    """Whether a list item looks like a ChatGPT conversation."""
    return isinstance(raw, dict) and "mapping" in raw


def read_chatgpt(raw: dict[str, Any], order: int, tally: Tally) -> ImportedConversation | None:
    """One ChatGPT conversation: the branch ending at `current_node`, or None if it shows nothing.

    FieldError names what makes it unreadable. `order` is its place in the export, the date of
    a conversation that has no time at all.
    """
    if "mapping" not in raw:
        raise fail("mapping", "missing")
    mapping = as_object(raw["mapping"], "mapping")
    title = raw.get("title")
    if title is not None and not isinstance(title, str):
        raise fail("title", f"must be a string or null, not {kind(title)}")
    created = _epoch(raw.get("create_time"), "create_time")
    updated = _epoch(raw.get("update_time"), "update_time")
    current = raw.get("current_node")
    if current is not None and not isinstance(current, str):
        raise fail("current_node", f"must be a string or null, not {kind(current)}")
    if current is None:
        current = _latest_leaf(mapping)
        if current is None:
            tally.empty += 1
            return None
    elif current not in mapping:
        raise fail("current_node", f"{current!r} is not a message of this conversation")
    visible: list[Turn] = []
    for node_id in _branch(mapping, current):
        node_path = f"mapping.{node_id}"
        message = _chatgpt_message(
            as_object(mapping[node_id], node_path), node_id, node_path, tally
        )
        if message is not None:
            visible.append(message)
    if not visible:
        tally.empty += 1
        return None
    return ImportedConversation.of_turns(
        _chatgpt_id(raw),
        " ".join((title or "").split()) or CHATGPT_TITLE,
        visible,
        created=created,
        updated=updated,
        order=order,
        do_not_remember=raw.get("is_do_not_remember") is True,
    )


def _branch(mapping: dict[str, Any], leaf: str) -> Iterator[str]:
    """Node ids from the root down to `leaf`, following `parent` links up from it."""
    chain: list[str] = []
    seen: set[str] = set()
    node_id: str | None = leaf
    while node_id is not None:
        if node_id in seen:
            raise fail(f"mapping.{node_id}.parent", "the parent links form a cycle")
        seen.add(node_id)
        chain.append(node_id)
        node = as_object(mapping[node_id], f"mapping.{node_id}")
        parent = node.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise fail(f"mapping.{node_id}.parent", f"must be a string or null, not {kind(parent)}")
        if parent is not None and parent not in mapping:
            raise fail(
                f"mapping.{node_id}.parent", f"{parent!r} is not a message of this conversation"
            )
        node_id = parent
    return reversed(chain)


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    """Without a `current_node`: the childless node with the newest message."""
    best: tuple[float, str] | None = None
    for node_id, raw in mapping.items():
        node = as_object(raw, f"mapping.{node_id}")
        if node.get("children"):
            continue
        message = node.get("message")
        when = message.get("create_time") if isinstance(message, dict) else None
        key = (float(when) if isinstance(when, int | float) else -math.inf, node_id)
        if best is None or key > best:
            best = key
    return None if best is None else best[1]


def _chatgpt_message(node: dict[str, Any], node_id: str, path: str, tally: Tally) -> Turn | None:
    """(role, text, time, id) of a node's message, or None if the user did not see it."""
    raw = node.get("message")
    if raw is None:
        return None
    message = as_object(raw, f"{path}.message")
    author = as_object(message.get("author"), f"{path}.message.author")
    role = author.get("role")
    if not isinstance(role, str):
        raise fail(f"{path}.message.author.role", f"must be a string, not {kind(role)}")
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        content = message.get("content")
        if isinstance(content, dict) and content.get("content_type") == "user_editable_context":
            message_text(message, tally)  # custom instructions: offered as memories
        return None
    if role == "tool" and not _shows_image(message):
        return None  # tool output; a generated image is what the user saw of it
    if role not in ("user", "assistant", "tool"):
        return None  # system prompts
    text = message_text(message, tally)
    if text is None:
        return None
    at = _epoch(message.get("create_time"), f"{path}.message.create_time")
    message_id = message.get("id")
    if not isinstance(message_id, str) or not message_id:
        message_id = node_id
    return ("user" if role == "user" else "assistant"), text, at, message_id


def _shows_image(message: dict[str, Any]) -> bool:
    content = message.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return isinstance(parts, list) and any(
        isinstance(p, dict) and p.get("content_type") == "image_asset_pointer" for p in parts
    )


def _epoch(value: object, path: str) -> str | None:
    """A POSIX time (float seconds, or null) as ISO 8601 UTC."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(path, f"must be a number of seconds or null, not {kind(value)}")
    try:
        return stamp(datetime.fromtimestamp(value, UTC))
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
