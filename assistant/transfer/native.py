"""Reading the app's own export format: every field is validated before anything is written.

Version 1 has conversations and memories (and, in an export with them, the bytes of the files
attached to messages: see `transfer.files`); version 2 adds projects (a conversation's and a
memory's `project` must name one of them), the global custom instructions and the global memory
policy (optional: a version 2 file without it reads as before).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from assistant import APP_NAME
from assistant.instructions import Instructions
from assistant.json_fields import (
    FieldError,
    as_list,
    as_object,
    check_texts,
    fail,
    flag,
    inside,
    kind,
    nonempty_str,
    string,
    timestamp,
)
from assistant.memory import MemoryEvent, MemoryItem, Message, check_messages, is_valid_id
from assistant.memory_policy import (
    NEVER_TOPICS,
    POLICY_MODES,
    MemoryPolicy,
    PolicyMode,
    clean_own_topics,
)
from assistant.projects import Project
from assistant.transfer.export import EXPORTED_STATES, FORMAT, FORMAT_VERSION
from assistant.transfer.files import read_files, read_images
from assistant.transfer.plan import ImportedConversation
from assistant.transfer.wording import CHOOSE, REDO, FileProblemError, clip, field_problem

LABEL_CHARS = 40  # of a conversation's title or a memory's text, naming it in an error


@dataclass(frozen=True)
class NativeDocument:
    """What an Assistant export holds, validated."""

    conversations: list[ImportedConversation]
    memories: list[MemoryItem]
    events: list[MemoryEvent]  # the memories' histories
    projects: list[Project]
    instructions: Instructions | None
    memory_policy: MemoryPolicy | None = None


def read_assistant(doc: dict[str, Any]) -> NativeDocument:
    """Validate an Assistant export document: its conversations, memories and their histories,
    projects, instructions and memory policy; InvalidImportError names the bad field."""
    try:
        read = _assistant_document(doc)
        check_texts(doc)  # every text, before anything is written
    except FieldError as exc:
        problem = field_problem(str(exc), lambda name, i: _label(doc, name, i))
        raise FileProblemError(f"can't be imported: {problem}. {REDO}") from None
    return read


def _label(doc: dict[str, Any], name: str, index: int) -> str | None:
    """The title of a conversation, the name of a project or the start of a memory's text."""
    items = doc.get(name)
    if not isinstance(items, list) or index >= len(items) or not isinstance(items[index], dict):
        return None
    key = {"conversations": "title", "projects": "name", "memories": "text"}.get(name)
    value = items[index].get(key) if key else None
    if not isinstance(value, str) or not value.strip():
        return None
    return clip(value, LABEL_CHARS)


def _assistant_document(doc: dict[str, Any]) -> NativeDocument:
    if "format" not in doc:
        raise FileProblemError(
            f"is not an export from {APP_NAME}, ChatGPT or Claude: it holds a JSON object "
            f'without the "format": "{FORMAT}" line that {APP_NAME}\'s exports have. {CHOOSE}'
        )
    if doc["format"] != FORMAT:
        found = clip(str(doc["format"]), LABEL_CHARS)
        raise FileProblemError(
            f'is not an {APP_NAME} export: its "format" is "{found}", where {APP_NAME}\'s '
            f'exports have "{FORMAT}". {CHOOSE}'
        )
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise fail("version", f"must be a whole number, not {kind(version)}")
    if version > FORMAT_VERSION:
        raise FileProblemError(
            f"was exported by a newer version of {APP_NAME} (its format is version {version}; "
            f"this version reads up to {FORMAT_VERSION}). Update {APP_NAME}, then import it again."
        )
    if version < 1:
        raise fail("version", f"{version} is not a format version")
    if "exported_at" in doc:
        timestamp(doc, "exported_at", "")
    if "app" in doc:
        as_object(doc["app"], "app")
    if "conversations" not in doc:
        raise fail("conversations", "missing")
    projects = _projects(doc)
    known = {p.id for p in projects}
    conversations = []
    first_index: dict[str, int] = {}
    for i, raw in enumerate(as_list(doc["conversations"], "conversations")):
        path = f"conversations[{i}]"
        conversation = _conversation(as_object(raw, path), path)
        if conversation.id in first_index:
            other = first_index[conversation.id]
            raise fail(
                f"{path}.id", f"{conversation.id!r} is also the id of conversation {other + 1}"
            )
        first_index[conversation.id] = i
        if conversation.project is not None and conversation.project not in known:
            raise fail(f"{path}.project", f"{conversation.project!r} is not a project of the file")
        conversations.append(conversation)
    memories: list[MemoryItem] = []
    events: list[MemoryEvent] = []
    if doc.get("memories") is not None:
        seen: set[str] = set()
        for i, raw in enumerate(as_list(doc["memories"], "memories")):
            path = f"memories[{i}]"
            item = _memory(as_object(raw, path), path)
            if item.id in seen:
                raise fail(f"{path}.id", f"{item.id!r} is the id of an earlier memory too")
            seen.add(item.id)
            if item.project is not None and item.project not in known:
                raise fail(f"{path}.project", f"{item.project!r} is not a project of the file")
            memories.append(item)
            events.extend(_history(raw, item.id, path))
    return NativeDocument(
        conversations, memories, events, projects, _instructions(doc), _policy(doc)
    )


def _projects(doc: dict[str, Any]) -> list[Project]:
    """The file's projects (none before version 2); names and ids each once."""
    projects: list[Project] = []
    for i, raw in enumerate(as_list(doc.get("projects") or [], "projects")):
        path = f"projects[{i}]"
        try:
            project = Project.from_json(as_object(raw, path))
        except ValueError as exc:  # "field: problem"
            raise inside(path, exc) from None
        for j, other in enumerate(projects):
            if other.id == project.id:
                raise fail(f"{path}.id", f"{project.id!r} is also the id of project {j + 1}")
        projects.append(project)
    return projects


def _instructions(doc: dict[str, Any]) -> Instructions | None:
    if doc.get("instructions") is None:
        return None
    raw = as_object(doc["instructions"], "instructions")
    return Instructions(string(raw, "about", "instructions"), string(raw, "answer", "instructions"))


def _policy(doc: dict[str, Any]) -> MemoryPolicy | None:
    """The global memory policy of the file, if it has one."""
    if doc.get("memory_policy") is None:
        return None
    raw = as_object(doc["memory_policy"], "memory_policy")
    mode = string(raw, "mode", "memory_policy")
    if mode not in POLICY_MODES:
        raise fail("memory_policy.mode", f"must be one of {', '.join(POLICY_MODES)}, not {mode!r}")
    never = as_list(raw.get("never", []), "memory_policy.never")
    for i, key in enumerate(never):
        if key not in NEVER_TOPICS:
            raise fail(
                f"memory_policy.never[{i}]",
                f"must be one of {', '.join(NEVER_TOPICS)}, not {key!r}",
            )
    own = as_list(raw.get("own", []), "memory_policy.own")
    for i, topic in enumerate(own):
        if not isinstance(topic, str):
            raise fail(f"memory_policy.own[{i}]", f"must be a string, not {kind(topic)}")
    try:
        topics = clean_own_topics(own)
    except ValueError as exc:
        raise fail("memory_policy.own", str(exc)) from None
    return MemoryPolicy(cast(PolicyMode, mode), tuple(dict.fromkeys(never)), tuple(topics))


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
        _message(m, f"{path}.messages[{j}]")
        for j, m in enumerate(as_list(raw["messages"], f"{path}.messages"))
    )
    try:
        check_messages(messages)
    except ValueError as exc:  # "messages[i].field: problem"
        raise inside(path, exc) from None
    files = read_files(raw["messages"], messages, path)
    images = read_images(raw["messages"], messages, path)
    return ImportedConversation(
        cid,
        title,
        created_at,
        updated_at,
        summary,
        messages,
        flag(raw, "do_not_remember", path),
        flag(raw, "pinned", path),
        flag(raw, "archived", path),
        _project_of(raw, path),
        files,
        images,
    )


def _project_of(raw: dict[str, Any], path: str) -> str | None:
    project = raw.get("project")
    if project is not None and not isinstance(project, str):
        raise fail(f"{path}.project", f"must be a project id, not {kind(project)}")
    return project


def _message(raw: object, path: str) -> Message:
    message = as_object(raw, path)
    try:
        return Message.from_json(message)
    except FieldError as exc:  # "field: problem"
        raise inside(path, exc) from None


def _memory(raw: dict[str, Any], path: str) -> MemoryItem:
    nonempty_str(raw, "id", path)
    nonempty_str(raw, "text", path)
    flag(raw, "pinned", path)
    importance = raw.get("importance", 0.5)
    if isinstance(importance, int | float) and not 0 <= importance <= 1:
        raise fail(f"{path}.importance", f"must be between 0 and 1, not {importance}")
    try:
        item = MemoryItem.from_json(raw)
    except ValueError as exc:  # "field: problem"
        raise inside(path, exc) from None
    if item.state not in EXPORTED_STATES:
        raise fail(f"{path}.state", f"must be one of {', '.join(EXPORTED_STATES)}")
    # A memory of an export from before origins were kept came from an import, as far as
    # this data dir knows.
    return item if "origin" in raw else item._replace(origin="import")


def _history(raw: dict[str, Any], memory_id: str, path: str) -> list[MemoryEvent]:
    """The events of a memory's "history" (each without its memory's id), if any."""
    if raw.get("history") is None:
        return []
    events = []
    for k, event in enumerate(as_list(raw["history"], f"{path}.history")):
        where = f"{path}.history[{k}]"
        try:
            events.append(
                MemoryEvent.from_json({**as_object(event, where), "memory_id": memory_id})
            )
        except ValueError as exc:  # "field: problem"
            raise inside(where, exc) from None
    return events
