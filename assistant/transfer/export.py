"""Export: the app's own JSON document of conversations (and memories, projects, custom
instructions and the memory policy), written atomically."""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant import APP_NAME, __version__
from assistant.agent.tool_images import saved_names
from assistant.errors import StorageError
from assistant.fileio import atomic_write_json, reason
from assistant.memory_policy import AUTOMATIC
from assistant.timestamps import stamp
from assistant.transfer.plan import Stores, counted

if TYPE_CHECKING:
    from assistant.instructions import Instructions
    from assistant.knowledge import AttachmentStore
    from assistant.memory import MemoryItem, SemanticMemory
    from assistant.memory_policy import MemoryPolicy

log = logging.getLogger(__name__)

FORMAT = "assistant.export"
# 2: projects, a conversation's project, a memory's scope, instructions, the memory policy.
# A file is written as version 2 only when it holds one of them (as the memory log does), so
# that an export without them is the version 1 file that older versions and readers expect.
FORMAT_VERSION = 2
_SINCE_VERSION_2 = frozenset({"projects", "instructions", "memory_policy"})
EXPORTED_STATES = ("active", "archived")


def export_data(
    stores: Stores,
    conversation_ids: Sequence[str] | None = None,
    include_memories: bool = False,
    attachments: AttachmentStore | None = None,
    instructions: Instructions | None = None,
    *,
    memory_policy: MemoryPolicy | None = None,
) -> dict[str, Any]:
    """The export document of the given conversations (all but temporary ones with None).

    With `include_memories`, active and archived long-term memories are added with their
    links, scopes and histories (no vectors, no tombstones). The projects go with it: all of
    them when every conversation is exported, else those the exported conversations and
    memories are in; the global custom `instructions`, if given and not empty; and the global
    `memory_policy`, if given and not the default (keep what it finds, no never-topics). With
    `attachments` (the store of the files attached to messages), each attachment goes in the
    file too, as base64 `data`, and a tool result's images as `images`: `[{name, data}]`.
    The file is format version 1 unless it holds projects, instructions or a policy (version
    2).
    Raises ConversationNotFoundError (a StorageError) for an unknown id.
    """
    store = stores.conversations
    if conversation_ids is None:
        infos = sorted(
            (c for c in store.all() if not c.temporary), key=lambda c: (c.created_at, c.id)
        )
        ids = [c.id for c in infos]
    else:
        ids = list(dict.fromkeys(conversation_ids))
    conversations = []
    for cid in ids:
        conversation = store.load(cid)
        entry: dict[str, Any] = {
            "id": conversation.id,
            "title": conversation.title,
            "created_at": conversation.created_at,
            "updated_at": conversation.updated_at,
            "summary": conversation.summary,
            "messages": [m.to_json() for m in conversation.messages],
        }
        if attachments is not None:
            _add_files(attachments, cid, entry["messages"])
        for flag in ("do_not_remember", "pinned", "archived"):
            if getattr(conversation, flag):
                entry[flag] = True
        if conversation.project is not None:
            entry["project"] = conversation.project
        conversations.append(entry)
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": 1,
        "exported_at": stamp(datetime.now(UTC)),
        "app": {"name": APP_NAME, "version": __version__},
        "conversations": conversations,
    }
    used = {c["project"] for c in conversations if "project" in c}
    if include_memories:
        items = [i for i in stores.memory.all(None) if i.state in EXPORTED_STATES]
        items.sort(key=lambda i: (i.created_at, i.id))
        data["memories"] = [_memory(stores.memory, i) for i in items]
        used |= {i.project for i in items if i.project is not None}
    if stores.projects is not None:
        every = conversation_ids is None
        projects = [p for p in stores.projects.all() if every or p.id in used]
        if projects:
            data["projects"] = [p.to_json() for p in projects]
    if instructions is not None and not instructions.empty:
        data["instructions"] = {"about": instructions.about, "answer": instructions.answer}
    if memory_policy is not None and memory_policy != AUTOMATIC:
        data["memory_policy"] = memory_policy.to_json()
    if used or not _SINCE_VERSION_2.isdisjoint(data):
        data["version"] = FORMAT_VERSION
    return data


def _add_files(store: AttachmentStore, cid: str, messages: list[dict[str, Any]]) -> None:
    """Put each attachment's bytes in its message's entry (one whose copy is gone stays
    named, without `data`), and the images a tool result kept in its entry's `images`."""
    for message in messages:
        for entry in message.get("attachments", ()):
            data = _read(store.directory / cid / entry["id"] / entry["name"], cid)
            if data is not None:
                entry["data"] = data
        names = saved_names(message["content"] or "") if message["role"] == "tool" else []
        for name in names:
            path = store.tool_image(cid, name)
            data = None if path is None else _read(path, cid)
            if data is not None:
                message.setdefault("images", []).append({"name": name, "data": data})


def _read(path: Path, cid: str) -> str | None:
    """A file's bytes in base64; None if it is gone (it stays named)."""
    try:
        return base64.b64encode(path.read_bytes()).decode("ascii")
    except FileNotFoundError:
        log.warning("%s of conversation %s is gone", path.name, cid)
        return None
    except OSError as exc:
        raise StorageError(f"Could not read the file {path}: {reason(exc)}") from exc


def _memory(memory: SemanticMemory, item: MemoryItem) -> dict[str, Any]:
    """A memory as exported: the item and its history (each event without the memory's id)."""
    history = [
        {k: v for k, v in e.to_json().items() if k != "memory_id"} for e in memory.history(item.id)
    ]
    return {**item.to_json(), "history": history}


def write_export(path: Path, data: Mapping[str, Any]) -> None:
    """Write an export document atomically (a crash leaves the old file or the new one)."""
    try:
        atomic_write_json(path, data)
    except OSError as exc:
        raise StorageError(f"Could not write {path}: {exc.strerror or exc}") from exc


def export_summary(data: Mapping[str, Any], path: Path | str | None = None) -> str:
    """One line saying what an export document holds, e.g. for the command line."""
    parts = [counted(len(data["conversations"]), "conversation")]
    if "memories" in data:
        parts.append(counted(len(data["memories"]), "memory", "memories"))
    if data.get("projects"):
        parts.append(counted(len(data["projects"]), "project"))
    text = "Exported " + (", ".join(parts[:-1]) + " and " if len(parts) > 1 else "") + parts[-1]
    return text + (f" to {path}" if path is not None else "")
