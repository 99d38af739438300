"""Export and import: the app's own JSON format and ChatGPT's `conversations.json` (no Qt).

An import is parsed and validated completely into an `ImportPlan` before anything is written;
an error names the bad field with its path ("conversations[2].messages[5].role: ...") and
changes nothing. Applying a plan never overwrites: a conversation or memory whose id exists is
skipped or added as a copy with a new id, as the caller chooses.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

from assistant import APP_NAME, __version__
from assistant.errors import ImportError_, StorageError
from assistant.fileio import atomic_write_json
from assistant.memory.conversations import (
    ROLES,
    ConversationExistsError,
    ConversationStore,
    Message,
    check_messages,
    is_valid_id,
)
from assistant.memory.items import MemoryItem
from assistant.memory.semantic import SemanticMemory

FORMAT = "assistant.export"
FORMAT_VERSION = 1
COPY_SUFFIX = " (imported)"
CHATGPT_TITLE = "ChatGPT conversation"
EXPORTED_STATES = ("active", "archived")
_MEMORY_BATCH = 64

ImportFormat = Literal["assistant", "chatgpt"]
ConflictPolicy = Literal["skip", "copy"]
POLICIES: tuple[str, ...] = get_args(ConflictPolicy)
Progress = Callable[[int, int], None]

FORMAT_NAMES: dict[str, str] = {
    "assistant": "Assistant export",
    "chatgpt": "ChatGPT conversations.json",
}


class Stores(Protocol):
    """What export and import need of a workspace: its conversation and memory stores."""

    @property
    def conversations(self) -> ConversationStore: ...

    @property
    def memory(self) -> SemanticMemory: ...


@dataclass(frozen=True)
class StoreSet:
    """The two stores without a whole workspace (tests, tools)."""

    conversations: ConversationStore
    memory: SemanticMemory


# -- export ------------------------------------------------------------------------------------


def export_data(
    stores: Stores,
    conversation_ids: Sequence[str] | None = None,
    include_memories: bool = False,
) -> dict[str, Any]:
    """The export document of the given conversations (all but temporary ones with None).

    With `include_memories`, active and archived long-term memories are added (no vectors).
    Raises ConversationNotFoundError (a StorageError) for an unknown id.
    """
    store = stores.conversations
    if conversation_ids is None:
        infos = sorted(
            (c for c in store.list() if not c.temporary), key=lambda c: (c.created_at, c.id)
        )
        ids = [c.id for c in infos]
    else:
        ids = list(dict.fromkeys(conversation_ids))
    conversations = []
    for cid in ids:
        conversation = store.load(cid)
        conversations.append(
            {
                "id": conversation.id,
                "title": conversation.title,
                "created_at": conversation.created_at,
                "updated_at": conversation.updated_at,
                "summary": conversation.summary,
                "messages": [m.to_json() for m in conversation.messages],
            }
        )
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": _iso(datetime.now(UTC)),
        "app": {"name": APP_NAME, "version": __version__},
        "conversations": conversations,
    }
    if include_memories:
        items = [i for i in stores.memory.items(None) if i.state in EXPORTED_STATES]
        items.sort(key=lambda i: (i.created_at, i.id))
        data["memories"] = [i.to_json() for i in items]
    return data


def write_export(path: Path, data: Mapping[str, Any]) -> None:
    """Write an export document atomically (a crash leaves the old file or the new one)."""
    try:
        atomic_write_json(path, data)
    except OSError as exc:
        raise StorageError(f"Could not write {path}: {exc.strerror or exc}") from exc


def export_summary(data: Mapping[str, Any], path: Path | str | None = None) -> str:
    """One line saying what an export document holds, e.g. for the command line."""
    text = f"Exported {counted(len(data['conversations']), 'conversation')}"
    if "memories" in data:
        text += f" and {counted(len(data['memories']), 'memory', 'memories')}"
    return text + (f" to {path}" if path is not None else "")


# -- the import plan -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportedConversation:
    """A validated conversation of an import file."""

    id: str
    title: str
    created_at: str
    updated_at: str
    summary: str
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class ImportPlan:
    """Everything an import file holds, validated; applying it is `apply_import`."""

    format: ImportFormat
    conversations: tuple[ImportedConversation, ...]
    memories: tuple[MemoryItem, ...] = ()
    notes: tuple[str, ...] = ()  # what was left out, for the preview

    @property
    def format_name(self) -> str:
        """The detected format in words."""
        return FORMAT_NAMES[self.format]

    @property
    def message_count(self) -> int:
        """Messages in all conversations."""
        return sum(len(c.messages) for c in self.conversations)

    @property
    def total(self) -> int:
        """Conversations plus memories: the steps of `apply_import`'s progress."""
        return len(self.conversations) + len(self.memories)

    def conflicts(self, target: Stores | ConversationStore) -> list[str]:
        """Ids of the plan's conversations that already exist in the store."""
        store = target if isinstance(target, ConversationStore) else target.conversations
        existing = {c.id for c in store.list()}
        return [c.id for c in self.conversations if c.id in existing]

    def memory_conflicts(self, target: Stores | SemanticMemory) -> list[str]:
        """Ids of the plan's memories that already exist in the store (in any state)."""
        memory = target if isinstance(target, SemanticMemory) else target.memory
        return [m.id for m in self.memories if memory.get(m.id) is not None]


@dataclass(frozen=True)
class ImportResult:
    """What `apply_import` did. `*_imported` counts copies too; `*_copied` only the copies."""

    conversations_imported: int = 0
    conversations_copied: int = 0
    conversations_skipped: int = 0
    memories_imported: int = 0
    memories_copied: int = 0
    memories_skipped: int = 0
    messages_imported: int = 0

    def summary(self) -> str:
        """One line for the user, e.g. "Imported 2 conversations (1 skipped as already present)"."""
        conversations = counted(self.conversations_imported, "conversation") + _detail(
            self.conversations_copied, self.conversations_skipped
        )
        memories = counted(self.memories_imported, "memory", "memories") + _detail(
            self.memories_copied, self.memories_skipped
        )
        return f"Imported {conversations} and {memories}"


def _detail(copied: int, skipped: int) -> str:
    parts = []
    if copied:
        parts.append(f"{copied} as {'a copy' if copied == 1 else 'copies'}")
    if skipped:
        parts.append(f"{skipped} skipped as already present")
    return f" ({', '.join(parts)})" if parts else ""


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """`n` and the noun in the right number: "1 memory", "2 memories"."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


# -- parsing -------------------------------------------------------------------------------------


def load_import(path: Path) -> ImportPlan:
    """Read and parse an import file; ImportError_ if it cannot be read or is malformed."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportError_(f"Could not read {path}: {exc.strerror or exc}") from exc
    return parse_import(raw)


def parse_import(raw: bytes | str) -> ImportPlan:
    """Validate an Assistant export or a ChatGPT `conversations.json` completely.

    Raises ImportError_ naming the first bad field with its path; nothing is changed.
    """
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportError_(
                f"The file is not UTF-8 text (bad byte at offset {exc.start}); "
                "expected an Assistant export or a ChatGPT conversations.json."
            ) from None
    try:
        doc = json.loads(raw, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ImportError_(
            f"The file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from None
    except ValueError as exc:
        raise ImportError_(f"The file is not valid JSON: {exc}.") from None
    except RecursionError:
        raise ImportError_("The file is not valid JSON: it is nested too deeply.") from None
    if isinstance(doc, dict):
        return _parse_assistant(doc)
    if isinstance(doc, list):
        return _parse_chatgpt(doc)
    raise ImportError_(
        "This is not an Assistant export or a ChatGPT conversations.json: the file holds "
        f"{_kind(doc)}, not an object or a list."
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _InvalidError(Exception):
    """A field is bad; carries `path: problem` and becomes an ImportError_ at the top."""


def _fail(path: str, problem: str) -> _InvalidError:
    return _InvalidError(f"{path}: {problem}" if path else problem)


def _kind(value: object) -> str:
    """A JSON value's type in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _obj(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"must be an object, not {_kind(value)}")
    return value


def _list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, f"must be a list, not {_kind(value)}")
    return value


def _str(raw: Mapping[str, Any], key: str, path: str, *, nullable: bool = False) -> Any:
    """`raw[key]`, which must be present and a string (or null when `nullable`)."""
    where = _join(path, key)
    if key not in raw:
        raise _fail(where, "missing")
    value = raw[key]
    if not isinstance(value, str) and not (nullable and value is None):
        expected = "a string or null" if nullable else "a string"
        raise _fail(where, f"must be {expected}, not {_kind(value)}")
    return value


def _optional_str(raw: Mapping[str, Any], key: str, path: str) -> str | None:
    if raw.get(key) is None:
        return None
    value: str = _str(raw, key, path)
    return value


def _nonempty_str(raw: Mapping[str, Any], key: str, path: str) -> str:
    value: str = _str(raw, key, path)
    if not value.strip():
        raise _fail(_join(path, key), "must not be empty")
    return value


def _timestamp(raw: Mapping[str, Any], key: str, path: str) -> str:
    value: str = _str(raw, key, path)
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise _fail(_join(path, key), f"{value!r} is not an ISO 8601 timestamp") from None
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# -- our format ----------------------------------------------------------------------------------


def _parse_assistant(doc: dict[str, Any]) -> ImportPlan:
    try:
        return _assistant_plan(doc)
    except _InvalidError as exc:
        raise ImportError_(str(exc)) from None


def _assistant_plan(doc: dict[str, Any]) -> ImportPlan:
    if "format" not in doc:
        raise _fail(
            "format",
            f"missing: this is not an Assistant export (expected {FORMAT!r}) "
            "or a ChatGPT conversations.json",
        )
    if doc["format"] != FORMAT:
        raise _fail("format", f"must be {FORMAT!r}, not {doc['format']!r}")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _fail("version", f"must be a whole number, not {_kind(version)}")
    if version > FORMAT_VERSION:
        raise _fail(
            "version",
            f"this file is format version {version}, made by a newer {APP_NAME}; this version "
            f"reads version {FORMAT_VERSION}. Update {APP_NAME} to import it",
        )
    if version < 1:
        raise _fail("version", f"{version} is not a format version")
    if "exported_at" in doc:
        _timestamp(doc, "exported_at", "")
    if "app" in doc:
        _obj(doc["app"], "app")
    if "conversations" not in doc:
        raise _fail("conversations", "missing")
    conversations = []
    first_index: dict[str, int] = {}
    for i, raw in enumerate(_list(doc["conversations"], "conversations")):
        path = f"conversations[{i}]"
        conversation = _conversation(_obj(raw, path), path)
        if conversation.id in first_index:
            other = first_index[conversation.id]
            raise _fail(
                f"{path}.id", f"{conversation.id!r} is also the id of conversations[{other}]"
            )
        first_index[conversation.id] = i
        conversations.append(conversation)
    memories: list[MemoryItem] = []
    if doc.get("memories") is not None:
        seen: set[str] = set()
        for i, raw in enumerate(_list(doc["memories"], "memories")):
            path = f"memories[{i}]"
            item = _memory(_obj(raw, path), path)
            if item.id in seen:
                raise _fail(f"{path}.id", f"{item.id!r} is the id of an earlier memory too")
            seen.add(item.id)
            memories.append(item)
    return ImportPlan("assistant", tuple(conversations), tuple(memories))


def _conversation(raw: dict[str, Any], path: str) -> ImportedConversation:
    cid: str = _str(raw, "id", path)
    if not is_valid_id(cid):
        raise _fail(
            f"{path}.id",
            f"{cid!r} is not a valid id (1 to 128 letters, digits, '-' or '_', "
            "starting with a letter or digit)",
        )
    title = _nonempty_str(raw, "title", path)
    created_at = _timestamp(raw, "created_at", path)
    updated_at = _timestamp(raw, "updated_at", path)
    summary: str = _str(raw, "summary", path)
    if "messages" not in raw:
        raise _fail(f"{path}.messages", "missing")
    messages = tuple(
        _message(_obj(m, f"{path}.messages[{j}]"), f"{path}.messages[{j}]")
        for j, m in enumerate(_list(raw["messages"], f"{path}.messages"))
    )
    try:
        check_messages(messages)
    except ValueError as exc:  # "messages[i].field: problem"
        raise _InvalidError(f"{path}.{exc}") from None
    return ImportedConversation(cid, title, created_at, updated_at, summary, messages)


def _message(raw: dict[str, Any], path: str) -> Message:
    message_id = _nonempty_str(raw, "id", path)
    _str(raw, "parent_id", path, nullable=True)
    role = raw.get("role")
    if role not in ROLES:
        got = f"not {role!r}" if isinstance(role, str) else f"not {_kind(role)}"
        raise _fail(f"{path}.role", f"must be one of {', '.join(ROLES)}, {got}")
    _str(raw, "content", path, nullable=True)
    _timestamp(raw, "created_at", path)
    if raw.get("tool_calls") is not None:
        for k, call in enumerate(_list(raw["tool_calls"], f"{path}.tool_calls")):
            _tool_call(_obj(call, f"{path}.tool_calls[{k}]"), f"{path}.tool_calls[{k}]")
    _optional_str(raw, "tool_call_id", path)
    _optional_str(raw, "name", path)
    if raw.get("memory_ids") is not None:
        for k, memory_id in enumerate(_list(raw["memory_ids"], f"{path}.memory_ids")):
            if not isinstance(memory_id, str):
                raise _fail(f"{path}.memory_ids[{k}]", f"must be a string, not {_kind(memory_id)}")
    try:
        return Message.from_json(raw)
    except ValueError as exc:  # a rule of the store's own that the checks above missed
        raise _fail(f"{path} ({message_id!r})", str(exc)) from None


def _tool_call(raw: dict[str, Any], path: str) -> None:
    _nonempty_str(raw, "id", path)
    if raw.get("type", "function") != "function":
        raise _fail(f"{path}.type", f"must be 'function', not {raw['type']!r}")
    if "function" not in raw:
        raise _fail(f"{path}.function", "missing")
    function = _obj(raw["function"], f"{path}.function")
    _str(function, "name", f"{path}.function")
    _str(function, "arguments", f"{path}.function")


def _memory(raw: dict[str, Any], path: str) -> MemoryItem:
    _nonempty_str(raw, "id", path)
    _nonempty_str(raw, "text", path)
    if "pinned" in raw and not isinstance(raw["pinned"], bool):
        raise _fail(f"{path}.pinned", f"must be true or false, not {_kind(raw['pinned'])}")
    importance = raw.get("importance", 0.5)
    if isinstance(importance, int | float) and not 0 <= importance <= 1:
        raise _fail(f"{path}.importance", f"must be between 0 and 1, not {importance}")
    try:
        item = MemoryItem.from_json(raw)
    except ValueError as exc:  # "field: problem"
        raise _InvalidError(f"{path}.{exc}") from None
    if item.state not in EXPORTED_STATES:
        raise _fail(f"{path}.state", f"must be one of {', '.join(EXPORTED_STATES)}")
    return item


# -- ChatGPT's conversations.json --------------------------------------------------------------


def _parse_chatgpt(doc: list[Any]) -> ImportPlan:
    conversations: list[ImportedConversation] = []
    empty = 0
    seen: dict[str, int] = {}
    try:
        for i, raw in enumerate(doc):
            path = f"[{i}]"
            conversation = _chatgpt_conversation(_obj(raw, path), path)
            if conversation is None:
                empty += 1
                continue
            if conversation.id in seen:
                raise _fail(
                    f"{path}.id", f"{conversation.id!r} is also the id of [{seen[conversation.id]}]"
                )
            seen[conversation.id] = i
            conversations.append(conversation)
    except _InvalidError as exc:
        raise ImportError_(f"ChatGPT conversations.json: {exc}") from None
    notes: tuple[str, ...] = ()
    if empty:
        notes = (f"{counted(empty, 'conversation')} without text messages will be left out.",)
    return ImportPlan("chatgpt", tuple(conversations), (), notes)


def _chatgpt_conversation(raw: dict[str, Any], path: str) -> ImportedConversation | None:
    """One ChatGPT conversation: the branch ending at `current_node`, or None if it has no text."""
    if "mapping" not in raw:
        raise _fail(f"{path}.mapping", "missing: this is not a ChatGPT conversations.json")
    mapping = _obj(raw["mapping"], f"{path}.mapping")
    title = raw.get("title")
    if title is not None and not isinstance(title, str):
        raise _fail(f"{path}.title", f"must be a string or null, not {_kind(title)}")
    created = _epoch(raw.get("create_time"), f"{path}.create_time")
    updated = _epoch(raw.get("update_time"), f"{path}.update_time")
    current = raw.get("current_node")
    if current is not None and not isinstance(current, str):
        raise _fail(f"{path}.current_node", f"must be a string or null, not {_kind(current)}")
    if current is None:
        current = _latest_leaf(mapping, path)
        if current is None:
            return None
    elif current not in mapping:
        raise _fail(f"{path}.current_node", f"{current!r} is not a node of the mapping")
    messages: list[Message] = []
    taken: set[str] = set()
    fallback = created or updated or _iso(datetime.now(UTC))
    for node_id in _branch(mapping, current, path):
        node_path = f"{path}.mapping.{node_id}"
        message = _chatgpt_message(_obj(mapping[node_id], node_path), node_id, node_path)
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
            raise _fail(f"{path}.mapping.{node_id}.parent", "the parent links form a cycle")
        seen.add(node_id)
        chain.append(node_id)
        node = _obj(mapping[node_id], f"{path}.mapping.{node_id}")
        parent = node.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise _fail(
                f"{path}.mapping.{node_id}.parent", f"must be a string or null, not {_kind(parent)}"
            )
        if parent is not None and parent not in mapping:
            raise _fail(
                f"{path}.mapping.{node_id}.parent", f"{parent!r} is not a node of the mapping"
            )
        node_id = parent
    return reversed(chain)


def _latest_leaf(mapping: dict[str, Any], path: str) -> str | None:
    """Without a `current_node`: the childless node with the newest message."""
    best: tuple[float, str] | None = None
    for node_id, raw in mapping.items():
        node = _obj(raw, f"{path}.mapping.{node_id}")
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
    message = _obj(raw, f"{path}.message")
    author = _obj(message.get("author"), f"{path}.message.author")
    role = author.get("role")
    if not isinstance(role, str):
        raise _fail(f"{path}.message.author.role", f"must be a string, not {_kind(role)}")
    if role not in ("user", "assistant"):
        return None  # system prompts, tool output
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    recipient = message.get("recipient", "all")
    if recipient not in ("all", None):
        return None  # the assistant calling a tool
    content = _obj(message.get("content"), f"{path}.message.content")
    parts = content.get("parts")
    if parts is None:
        return None  # code, thoughts and other non-text content
    parts = _list(parts, f"{path}.message.content.parts")
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
        raise _fail(path, f"must be a number of seconds or null, not {_kind(value)}")
    try:
        return _iso(datetime.fromtimestamp(value, UTC))
    except (OverflowError, OSError, ValueError):
        raise _fail(path, f"{value} is not a usable time") from None


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


def _iso(moment: datetime) -> str:
    """An aware datetime as ISO 8601 UTC with microseconds and a Z, as the stores write it."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


# -- applying a plan -----------------------------------------------------------------------------


def apply_import(
    plan: ImportPlan,
    stores: Stores,
    policy: ConflictPolicy,
    progress: Progress | None = None,
) -> ImportResult:
    """Add the plan's conversations and memories; never overwrites anything.

    An item whose id exists is skipped (`"skip"`) or added with a new id (`"copy"`; a copied
    conversation's title gets " (imported)"). Each conversation file is written atomically.
    `progress(done, total)` is called after each conversation and each batch of memories.
    Memories may be embedded over the network: call this off the GUI thread.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    total = plan.total
    done = 0
    if progress is not None:
        progress(done, total)
    counts = dict.fromkeys(
        ("imported", "copied", "skipped", "messages", "m_imported", "m_copied", "m_skipped"), 0
    )
    store = stores.conversations
    for conversation in plan.conversations:
        outcome = _import_conversation(store, conversation, policy)
        if outcome != "skipped":
            counts["imported"] += 1
            counts["messages"] += len(conversation.messages)
        if outcome != "imported":
            counts[outcome] += 1
        done += 1
        if progress is not None:
            progress(done, total)
    for start in range(0, len(plan.memories), _MEMORY_BATCH):
        batch = plan.memories[start : start + _MEMORY_BATCH]
        added, copied = _insert_memories(stores.memory, batch, policy)
        counts["m_imported"] += added
        counts["m_copied"] += copied
        counts["m_skipped"] += len(batch) - added
        done += len(batch)
        if progress is not None:
            progress(done, total)
    return ImportResult(
        conversations_imported=counts["imported"],
        conversations_copied=counts["copied"],
        conversations_skipped=counts["skipped"],
        memories_imported=counts["m_imported"],
        memories_copied=counts["m_copied"],
        memories_skipped=counts["m_skipped"],
        messages_imported=counts["messages"],
    )


def _import_conversation(
    store: ConversationStore, conversation: ImportedConversation, policy: ConflictPolicy
) -> Literal["imported", "copied", "skipped"]:
    cid, title = conversation.id, conversation.title
    outcome: Literal["imported", "copied"] = "imported"
    while True:
        try:
            store.import_conversation(
                cid,
                title,
                conversation.created_at,
                conversation.messages,
                summary=conversation.summary,
            )
        except ConversationExistsError:
            if policy == "skip":
                return "skipped"
            cid, title, outcome = uuid.uuid4().hex, conversation.title + COPY_SUFFIX, "copied"
            continue
        except ValueError as exc:  # validated already; only a changed store rule gets here
            raise ImportError_(f"conversation {conversation.id!r}: {exc}") from exc
        return outcome


def _insert_memories(
    memory: SemanticMemory, items: Sequence[MemoryItem], policy: ConflictPolicy
) -> tuple[int, int]:
    """Store items as they are; returns (stored, of them copies)."""
    stored = memory.insert(items, on_conflict=policy)
    original = {i.id for i in items}
    return len(stored), sum(1 for i in stored if i.id not in original)
