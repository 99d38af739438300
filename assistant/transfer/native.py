"""Reading the app's own export format: every field is validated before anything is written."""

from __future__ import annotations

from typing import Any

from assistant import APP_NAME
from assistant.errors import InvalidImportError
from assistant.memory import ROLES, MemoryItem, Message, check_messages, is_valid_id
from assistant.transfer.checks import (
    InvalidError,
    as_list,
    as_object,
    fail,
    kind,
    nonempty_str,
    optional_str,
    string,
    timestamp,
)
from assistant.transfer.export import EXPORTED_STATES, FORMAT, FORMAT_VERSION
from assistant.transfer.plan import ImportedConversation


def read_assistant(
    doc: dict[str, Any],
) -> tuple[list[ImportedConversation], list[MemoryItem]]:
    """Validate an Assistant export document; InvalidImportError names the bad field."""
    try:
        return _assistant_document(doc)
    except InvalidError as exc:
        raise InvalidImportError(str(exc)) from None


def _assistant_document(
    doc: dict[str, Any],
) -> tuple[list[ImportedConversation], list[MemoryItem]]:
    if "format" not in doc:
        raise fail(
            "format",
            f"missing: this is not an Assistant export (expected {FORMAT!r}) "
            "or a ChatGPT or Claude export",
        )
    if doc["format"] != FORMAT:
        raise fail("format", f"must be {FORMAT!r}, not {doc['format']!r}")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise fail("version", f"must be a whole number, not {kind(version)}")
    if version > FORMAT_VERSION:
        raise fail(
            "version",
            f"this file is format version {version}, made by a newer {APP_NAME}; this version "
            f"reads version {FORMAT_VERSION}. Update {APP_NAME} to import it",
        )
    if version < 1:
        raise fail("version", f"{version} is not a format version")
    if "exported_at" in doc:
        timestamp(doc, "exported_at", "")
    if "app" in doc:
        as_object(doc["app"], "app")
    if "conversations" not in doc:
        raise fail("conversations", "missing")
    conversations = []
    first_index: dict[str, int] = {}
    for i, raw in enumerate(as_list(doc["conversations"], "conversations")):
        path = f"conversations[{i}]"
        conversation = _conversation(as_object(raw, path), path)
        if conversation.id in first_index:
            other = first_index[conversation.id]
            raise fail(
                f"{path}.id", f"{conversation.id!r} is also the id of conversations[{other}]"
            )
        first_index[conversation.id] = i
        conversations.append(conversation)
    memories: list[MemoryItem] = []
    if doc.get("memories") is not None:
        seen: set[str] = set()
        for i, raw in enumerate(as_list(doc["memories"], "memories")):
            path = f"memories[{i}]"
            item = _memory(as_object(raw, path), path)
            if item.id in seen:
                raise fail(f"{path}.id", f"{item.id!r} is the id of an earlier memory too")
            seen.add(item.id)
            memories.append(item)
    return conversations, memories


def _conversation(raw: dict[str, Any], path: str) -> ImportedConversation:
    cid: str = string(raw, "id", path)
    if not is_valid_id(cid):
        raise fail(
            f"{path}.id",
            f"{cid!r} is not a valid id (1 to 128 letters, digits, '-' or '_', "
            "starting with a letter or digit)",
        )
    title = nonempty_str(raw, "title", path)
    created_at = timestamp(raw, "created_at", path)
    updated_at = timestamp(raw, "updated_at", path)
    summary: str = string(raw, "summary", path)
    if "messages" not in raw:
        raise fail(f"{path}.messages", "missing")
    messages = tuple(
        _message(as_object(m, f"{path}.messages[{j}]"), f"{path}.messages[{j}]")
        for j, m in enumerate(as_list(raw["messages"], f"{path}.messages"))
    )
    try:
        check_messages(messages)
    except ValueError as exc:  # "messages[i].field: problem"
        raise InvalidError(f"{path}.{exc}") from None
    do_not_remember = raw.get("do_not_remember", False)
    if not isinstance(do_not_remember, bool):
        raise fail(f"{path}.do_not_remember", f"must be true or false, not {kind(do_not_remember)}")
    return ImportedConversation(
        cid, title, created_at, updated_at, summary, messages, do_not_remember
    )


def _message(raw: dict[str, Any], path: str) -> Message:
    message_id = nonempty_str(raw, "id", path)
    string(raw, "parent_id", path, nullable=True)
    role = raw.get("role")
    if role not in ROLES:
        got = f"not {role!r}" if isinstance(role, str) else f"not {kind(role)}"
        raise fail(f"{path}.role", f"must be one of {', '.join(ROLES)}, {got}")
    string(raw, "content", path, nullable=True)
    timestamp(raw, "created_at", path)
    if raw.get("tool_calls") is not None:
        for k, call in enumerate(as_list(raw["tool_calls"], f"{path}.tool_calls")):
            _tool_call(as_object(call, f"{path}.tool_calls[{k}]"), f"{path}.tool_calls[{k}]")
    optional_str(raw, "tool_call_id", path)
    optional_str(raw, "name", path)
    if raw.get("memory_ids") is not None:
        for k, memory_id in enumerate(as_list(raw["memory_ids"], f"{path}.memory_ids")):
            if not isinstance(memory_id, str):
                raise fail(f"{path}.memory_ids[{k}]", f"must be a string, not {kind(memory_id)}")
    try:
        return Message.from_json(raw)
    except ValueError as exc:  # a rule of the store's own that the checks above missed
        raise fail(f"{path} ({message_id!r})", str(exc)) from None


def _tool_call(raw: dict[str, Any], path: str) -> None:
    nonempty_str(raw, "id", path)
    if raw.get("type", "function") != "function":
        raise fail(f"{path}.type", f"must be 'function', not {raw['type']!r}")
    if "function" not in raw:
        raise fail(f"{path}.function", "missing")
    function = as_object(raw["function"], f"{path}.function")
    string(function, "name", f"{path}.function")
    string(function, "arguments", f"{path}.function")


def _memory(raw: dict[str, Any], path: str) -> MemoryItem:
    nonempty_str(raw, "id", path)
    nonempty_str(raw, "text", path)
    if "pinned" in raw and not isinstance(raw["pinned"], bool):
        raise fail(f"{path}.pinned", f"must be true or false, not {kind(raw['pinned'])}")
    importance = raw.get("importance", 0.5)
    if isinstance(importance, int | float) and not 0 <= importance <= 1:
        raise fail(f"{path}.importance", f"must be between 0 and 1, not {importance}")
    try:
        item = MemoryItem.from_json(raw)
    except ValueError as exc:  # "field: problem"
        raise InvalidError(f"{path}.{exc}") from None
    if item.state not in EXPORTED_STATES:
        raise fail(f"{path}.state", f"must be one of {', '.join(EXPORTED_STATES)}")
    return item
