"""Messages: the fields of one message, its rules, and its JSON and OpenAI forms.

The one place that says what a valid message is: `Message.from_json` (its fields, a bad one
named by its JSON path), `Message.check` (each message) and `check_messages` (messages that form
one conversation), used by the store and by imports.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from assistant.json_fields import (
    as_object,
    fail,
    flag,
    kind,
    nonempty_str,
    optional_list,
    optional_str,
    string,
    timestamp,
)
from assistant.memory.reply_stats import ReplyStats
from assistant.timestamps import is_timestamp

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4

Role = Literal["user", "assistant", "tool", "system"]
ROLES: tuple[str, ...] = get_args(Role)
_UNSAFE_NAME = re.compile(r"[/\\\x00]|^\.\.?$")  # a name must not leave its folder


@dataclass(frozen=True)
class AttachedFile:
    """A file a user message carries; its copy is `attachments/<conversation>/<id>/<name>` in the
    data dir. `pages` for a PDF; `data` (base64) only in an export that includes the files."""

    id: str
    name: str
    size: int
    kind: str
    pages: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The attachment as stored and exported (without its bytes)."""
        out: dict[str, Any] = {"id": self.id, "name": self.name, "size": self.size}
        out["kind"] = self.kind
        if self.pages is not None:
            out["pages"] = self.pages
        return out

    @classmethod
    def from_json(cls, raw: object, path: str = "attachment") -> AttachedFile:
        """Parse an attachment; FieldError names the bad field (a name or id that would leave
        its folder is one)."""
        item = as_object(raw, path)
        for key in ("id", "name"):
            if _UNSAFE_NAME.search(nonempty_str(item, key, path)):
                raise fail(f"{path}.{key}", "must be a plain file name")
        size, pages = item.get("size"), item.get("pages")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise fail(f"{path}.size", f"must be a whole number of bytes, not {kind(size)}")
        if pages is not None and (not isinstance(pages, int) or isinstance(pages, bool)):
            raise fail(f"{path}.pages", f"must be a whole number, not {kind(pages)}")
        return cls(item["id"], item["name"], size, nonempty_str(item, "kind", path), pages)


@dataclass(frozen=True)
class Message:
    """One message, with the fields of the export format."""

    id: str
    parent_id: str | None
    role: Role
    content: str
    created_at: str
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    memory_ids: tuple[str, ...] = ()
    cut_off: bool = False  # the reply stopped at the length limit
    stop_reason: str | None = None  # why a reply ended early: "stopped" (by the user), "failed"
    ok: bool = True  # a tool message: whether the tool succeeded (its content is then the error)
    attachments: tuple[AttachedFile, ...] = ()  # files a user message carries
    stats: ReplyStats | None = None  # a reply: its model, token counts and speed

    def check(self) -> None:
        """The rules every stored message keeps; ValueError `field: problem`."""
        if not self.id.strip():
            raise ValueError("id: must not be empty")
        if self.role not in ROLES:
            raise ValueError(f"role: must be one of {', '.join(ROLES)}, not {self.role!r}")
        if not is_timestamp(self.created_at):
            raise ValueError("created_at: not an ISO 8601 timestamp")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("tool_calls: only assistant messages can have tool calls")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("tool_call_id: a tool message needs the call it answers")
        if not self.ok and self.role != "tool":
            raise ValueError("ok: only a tool message can fail")
        if self.attachments and self.role != "user":
            raise ValueError("attachments: only a user message can carry files")

    def estimated_tokens(self) -> int:
        """Estimated prompt tokens of the message, tool-call arguments included."""
        calls = "".join(c["function"]["name"] + c["function"]["arguments"] for c in self.tool_calls)
        return estimate_tokens(self.content + calls) + MESSAGE_OVERHEAD_TOKENS

    def to_openai(self) -> dict[str, Any]:
        """The message as an OpenAI chat completions message."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [tool_call(c) for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    def to_json(self) -> dict[str, Any]:
        """The message in the export format (optional fields only when set)."""
        out: dict[str, Any] = {
            "id": self.id,
            "parent_id": self.parent_id,
            **self.to_openai(),
            "created_at": self.created_at,
        }
        if self.memory_ids:
            out["memory_ids"] = list(self.memory_ids)
        if self.cut_off:
            out["cut_off"] = True
        if self.stop_reason is not None:
            out["stop_reason"] = self.stop_reason
        if self.role == "tool":
            out["ok"] = self.ok
        if self.attachments:
            out["attachments"] = [a.to_json() for a in self.attachments]
        if self.stats is not None:
            out["stats"] = self.stats.to_json()
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Message:
        """Parse a message in the export format; FieldError names the bad field by its path."""
        role = raw.get("role")
        if role not in ROLES:
            got = f"not {role!r}" if isinstance(role, str) else f"not {kind(role)}"
            raise fail("role", f"must be one of {', '.join(ROLES)}, {got}")
        calls = optional_list(raw, "tool_calls")
        memory_ids = optional_list(raw, "memory_ids")
        attached = optional_list(raw, "attachments")
        for k, memory_id in enumerate(memory_ids):
            if not isinstance(memory_id, str):
                raise fail(f"memory_ids[{k}]", f"must be a string, not {kind(memory_id)}")
        return cls(
            id=string(raw, "id"),
            parent_id=string(raw, "parent_id", nullable=True),
            role=role,
            content=string(raw, "content", nullable=True) or "",
            created_at=timestamp(raw, "created_at"),
            tool_calls=tuple(tool_call(c, f"tool_calls[{k}]") for k, c in enumerate(calls)),
            tool_call_id=optional_str(raw, "tool_call_id"),
            name=optional_str(raw, "name"),
            memory_ids=tuple(memory_ids),
            cut_off=flag(raw, "cut_off"),
            stop_reason=optional_str(raw, "stop_reason"),
            ok=flag(raw, "ok", default=not _failed_before_ok(role, raw)),
            attachments=tuple(
                AttachedFile.from_json(a, f"attachments[{k}]") for k, a in enumerate(attached)
            ),
            stats=None if raw.get("stats") is None else ReplyStats.from_json(raw["stats"]),
        )


def check_messages(messages: Sequence[Message], summary_upto: str | None = None) -> None:
    """Check that messages can form one conversation; ValueError `messages[i].field: problem`.

    Ids must be non-empty and unique, a parent must be an earlier message, timestamps ISO 8601,
    tool calls only on assistant messages and a tool message must name the call it answers.
    """
    seen: set[str] = set()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        try:
            message.check()
        except ValueError as exc:
            raise ValueError(f"{where}.{exc}") from None
        if message.id in seen:
            raise ValueError(f"{where}.id: {message.id!r} is used by an earlier message too")
        if message.parent_id is not None and message.parent_id not in seen:
            raise ValueError(f"{where}.parent_id: {message.parent_id!r} is not an earlier message")
        seen.add(message.id)
    if summary_upto is not None and summary_upto not in seen:
        raise ValueError(f"summary_upto: {summary_upto!r} is not a message of the conversation")


def _failed_before_ok(role: str, raw: Mapping[str, Any]) -> bool:
    """Whether a tool message from before the `ok` field failed (its text began "Error:")."""
    return role == "tool" and str(raw.get("content") or "").startswith("Error:")


def estimate_tokens(text: str) -> int:
    """A rough token count: about four characters a token."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def call_key(name: str, arguments: str) -> tuple[str, str]:
    """What makes two tool calls the same call: the name and the arguments, whatever their
    order and spacing."""
    try:
        return name, json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except ValueError:
        return name, arguments


def tool_call(raw: object, path: str = "tool_call") -> dict[str, Any]:
    """A checked copy of an OpenAI tool call: id, type "function", function name, arguments."""
    call = as_object(raw, path)
    call_id = nonempty_str(call, "id", path)
    if call.get("type", "function") != "function":
        raise fail(f"{path}.type", f"must be 'function', not {call['type']!r}")
    if "function" not in call:
        raise fail(f"{path}.function", "missing")
    function = as_object(call["function"], f"{path}.function")
    return {
        "id": call_id,
        "type": "function",
        "function": {
            "name": string(function, "name", f"{path}.function"),
            "arguments": string(function, "arguments", f"{path}.function"),
        },
    }
