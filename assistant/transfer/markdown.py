"""A conversation as a Markdown document to read or share: the branch on screen, its tool
calls as one line each, no ids."""

from __future__ import annotations

import json
from datetime import datetime

from assistant.memory import Conversation, Message

SPEAKERS = {"user": "You", "assistant": "Assistant", "system": "Note"}
ARGUMENT_CHARS = 80


def conversation_markdown(conversation: Conversation) -> str:
    """The conversation's chosen branch as Markdown, headed by its title and date."""
    parts = [f"# {_one_line(conversation.title) or 'Conversation'}"]
    if day := _day(conversation.created_at):
        parts.append(f"*{day}*")
    for message in conversation.branch():
        if message.role == "tool":
            parts.append(_tool_result(message))
            continue
        if message.content.strip():
            parts.append(f"**{SPEAKERS[message.role]}**\n\n{message.content.strip()}")
        parts.extend(_tool_call(call) for call in message.tool_calls)
        if message.stop_reason == "stopped":
            parts.append("*(stopped)*")
        elif message.stop_reason is not None:
            parts.append("*(the reply broke off)*")
        elif message.cut_off:
            parts.append("*(cut off at the length limit)*")
    return "\n\n".join(parts) + "\n"


def _tool_call(call: dict[str, object]) -> str:
    function = call.get("function")
    name = str(function.get("name", "tool")) if isinstance(function, dict) else "tool"
    raw = str(function.get("arguments", "")) if isinstance(function, dict) else ""
    try:
        arguments = json.dumps(json.loads(raw), ensure_ascii=False) if raw else ""
    except ValueError:
        arguments = raw
    shown = arguments if len(arguments) <= ARGUMENT_CHARS else arguments[:ARGUMENT_CHARS] + "…"
    return f"> ▸ `{name}` {shown}".rstrip()


def _tool_result(message: Message) -> str:
    first = _one_line(message.content)
    shown = first if len(first) <= ARGUMENT_CHARS else first[:ARGUMENT_CHARS] + "…"
    return f"> {'→' if message.ok else '⚠'} {shown}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _day(timestamp: str) -> str:
    try:
        moment = datetime.fromisoformat(timestamp).astimezone()
    except ValueError:
        return ""
    return f"{moment.day} {moment:%B %Y}"
