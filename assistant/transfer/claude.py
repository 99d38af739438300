"""Reading one conversation of Claude's data export (`conversations.json` with `chat_messages`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from assistant.json_fields import as_list, as_object, fail, kind
from assistant.memory import is_valid_id
from assistant.timestamps import stamp
from assistant.transfer.plan import ImportedConversation, Turn
from assistant.transfer.tally import Tally

CLAUDE_TITLE = "Claude conversation"
SENDERS: dict[str, Literal["user", "assistant"]] = {"human": "user", "assistant": "assistant"}
_SILENT_TYPES = frozenset({"thinking", "redacted_thinking", "tool_result"})


def is_claude(raw: object) -> bool:
    """Whether a list item looks like a Claude conversation."""
    return isinstance(raw, dict) and "chat_messages" in raw


def read_claude(raw: dict[str, Any], order: int, tally: Tally) -> ImportedConversation | None:
    """One Claude conversation, or None if it shows nothing; FieldError if it is unreadable."""
    cid = raw.get("uuid")
    if not isinstance(cid, str) or not is_valid_id(cid):
        raise fail("uuid", f"must be an id, not {cid!r}" if isinstance(cid, str) else "missing")
    title = raw.get("name")
    if title is not None and not isinstance(title, str):
        raise fail("name", f"must be a string or null, not {kind(title)}")
    created = _time(raw, "created_at", "")
    updated = _time(raw, "updated_at", "")
    chat = _branch(
        [
            as_object(m, f"chat_messages[{i}]")
            for i, m in enumerate(as_list(raw.get("chat_messages"), "chat_messages"))
        ]
    )
    visible: list[Turn] = []
    for i, message in enumerate(chat):
        path = f"chat_messages[{i}]"
        sender = message.get("sender")
        if sender not in SENDERS:
            raise fail(f"{path}.sender", f"must be human or assistant, not {sender!r}")
        text = _text(message, path, tally)
        if not text:
            continue
        message_id = message.get("uuid")
        if not isinstance(message_id, str) or not message_id:
            message_id = f"{cid}-{i}"
        visible.append((SENDERS[sender], text, _time(message, "created_at", path), message_id))
    if not visible:
        tally.empty += 1
        return None
    return ImportedConversation.of_turns(
        cid,
        " ".join((title or "").split()) or CLAUDE_TITLE,
        visible,
        created=created,
        updated=updated,
        order=order,
    )


def _branch(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages in order; with parent links, the branch that ends at the last message."""
    by_id = {m.get("uuid"): m for m in chat}
    if not chat or not all("parent_message_uuid" in m for m in chat):
        return chat
    branch: list[dict[str, Any]] = []
    seen: set[object] = set()
    node: dict[str, Any] | None = chat[-1]
    while node is not None and node.get("uuid") not in seen:
        seen.add(node.get("uuid"))
        branch.append(node)
        node = by_id.get(node.get("parent_message_uuid"))
    return branch[::-1]


def _text(message: dict[str, Any], path: str, tally: Tally) -> str:
    """The message's text parts, artifacts and attachments' extracted text, in order."""
    pieces: list[str] = []
    content = message.get("content")
    if isinstance(content, list) and content:
        for j, part in enumerate(content):
            pieces.extend(_part(as_object(part, f"{path}.content[{j}]"), tally))
    elif isinstance(message.get("text"), str):
        pieces.append(message["text"])
    for key in ("attachments", "files"):
        items = message.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                pieces.append(_attachment(item))
    return "\n\n".join(p.strip("\n") for p in pieces if p.strip())


def _part(part: dict[str, Any], tally: Tally) -> list[str]:
    kind_ = part.get("type")
    if kind_ == "text" and isinstance(part.get("text"), str):
        return [part["text"]]
    if kind_ in _SILENT_TYPES:
        return []
    if kind_ == "tool_use":
        tool_input = part.get("input")
        if part.get("name") == "artifacts" and isinstance(tool_input, dict):
            body = tool_input.get("content")
            name = tool_input.get("title")
            if isinstance(body, str) and body.strip():
                return [f"[artifact: {name}]\n\n{body}" if isinstance(name, str) else body]
        return []  # a tool call: its result shows in the answer
    tally.leave_out(f"{kind_} parts")
    return []


def _attachment(item: dict[str, Any]) -> str:
    name = item.get("file_name")
    label = f"[attachment: {name}]" if isinstance(name, str) and name else "[attachment]"
    extracted = item.get("extracted_content")
    if isinstance(extracted, str) and extracted.strip():
        return f"{label}\n{extracted.strip()}"
    return label


def _time(raw: dict[str, Any], key: str, path: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    where = f"{path}.{key}" if path else key
    if not isinstance(value, str):
        raise fail(where, f"must be a timestamp, not {kind(value)}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise fail(where, f"{value!r} is not an ISO 8601 timestamp") from None
    return stamp(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
