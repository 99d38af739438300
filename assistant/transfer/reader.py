"""Reading an import: find its conversation files, read each in its format, and build the plan.

An import is read twice, one conversation at a time: `load_import` validates everything and
builds the `ImportPlan` (what the preview shows) without writing anything, and
`read_conversations` reads the same files again for `apply_import`. A file-level problem (not
JSON, cut short, not an export) is an InvalidImportError from the first read, so it changes nothing
even when it is found at the end of a 2 GB export; a conversation that cannot be read is
skipped and named, and the rest import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.errors import InvalidImportError
from assistant.instructions import Instructions
from assistant.json_fields import FieldError, check_texts, kind
from assistant.memory import MemoryEvent, MemoryItem, check_messages
from assistant.memory_policy import MemoryPolicy
from assistant.projects import Project
from assistant.transfer.chatgpt import is_chatgpt, read_chatgpt
from assistant.transfer.claude import is_claude, read_claude
from assistant.transfer.native import read_assistant
from assistant.transfer.plan import (
    ImportedConversation,
    ImportFormat,
    ImportPlan,
    PlannedConversation,
    Progress,
    Unreadable,
)
from assistant.transfer.sources import ImportSource, Member, find_source
from assistant.transfer.stream import Cancel, Reader, list_items, read_document
from assistant.transfer.tally import Tally
from assistant.transfer.wording import CHOOSE, FileProblemError, field_problem

NOT_AN_EXPORT = "is not an export from Assistant, ChatGPT or Claude"  # said of a file
_PEEK_BYTES = 1 << 20
EMPTY = "Its list of conversations is empty: choose another export, or export again."


def load_import(
    path: Path, progress: Progress | None = None, cancel: Cancel | None = None
) -> ImportPlan:
    """Read and validate what `path` holds (a file, an export folder or zip) into a plan.

    `progress(bytes_read, bytes_total)` is called as the files are read; `cancel()` returning
    True stops the read with ImportCancelledError. InvalidImportError if nothing can be imported.
    """
    return scan(find_source(path), progress, cancel)


def parse_import(raw: bytes | str) -> ImportPlan:
    """Validate an export held in memory (as `load_import` does a file)."""
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    return scan(ImportSource.of_data(data))


def scan(
    source: ImportSource, progress: Progress | None = None, cancel: Cancel | None = None
) -> ImportPlan:
    """The plan of a source, read once from start to end; nothing is kept but the plan."""
    state = _State()
    planned: list[PlannedConversation] = []
    unreadable: list[Unreadable] = []
    not_remembered = 0
    for entry in _entries(source, state, progress, cancel):
        if isinstance(entry, Unreadable):
            unreadable.append(entry)
            continue
        planned.append(PlannedConversation.of(entry))
        not_remembered += entry.do_not_remember
    if state.items and not state.recognized:
        first = unreadable[0]
        raise InvalidImportError(
            f"{_shown_name(source)} {NOT_AN_EXPORT}: its first entry, “{first.name}”, "
            f"{first.reason}. {CHOOSE}"
        )
    notes = list(state.tally.notes())
    if not_remembered:
        notes.append(
            f"{_were(not_remembered)} marked in ChatGPT not to be remembered: "
            f"{'it imports' if not_remembered == 1 else 'they import'} so marked, and the "
            "assistant will not learn from "
            f"{'it' if not_remembered == 1 else 'them'}."
        )
    plan = ImportPlan(
        state.format or "chatgpt",
        tuple(planned),
        tuple(state.memories),
        tuple(notes),
        tuple(unreadable),
        tuple(state.tally.suggestions),
        source,
        tuple(state.events),
        tuple(state.projects),
        state.instructions,
        state.memory_policy,
    )
    if not plan.total:
        found = plan.unreadable_note() or " ".join(plan.notes) or EMPTY
        raise InvalidImportError(f"{_shown_name(source)} holds no conversations to import. {found}")
    return plan


def read_conversations(
    plan: ImportPlan, cancel: Cancel | None = None, *, ids: Collection[str] | None = None
) -> Iterator[ImportedConversation]:
    """The plan's conversations (or those of them in `ids`) with their messages, read again
    one at a time; nothing is read when none is wanted."""
    wanted = {c.id for c in plan.conversations}
    if ids is not None:
        wanted &= set(ids)
    if plan.source is None or not wanted:
        return
    for entry in _entries(plan.source, _State(), None, cancel):
        if isinstance(entry, ImportedConversation) and entry.id in wanted:
            wanted.discard(entry.id)
            yield entry
            if not wanted:
                return


@dataclass
class _State:
    """What one read found besides conversations."""

    format: ImportFormat | None = None
    memories: list[MemoryItem] = field(default_factory=list)
    events: list[MemoryEvent] = field(default_factory=list)  # the memories' histories
    projects: list[Project] = field(default_factory=list)
    instructions: Instructions | None = None
    memory_policy: MemoryPolicy | None = None
    tally: Tally = field(default_factory=Tally)
    items: int = 0  # list items seen
    recognized: int = 0  # of them, ChatGPT or Claude conversations
    seen: set[str] = field(default_factory=set)


def _entries(
    source: ImportSource, state: _State, progress: Progress | None, cancel: Cancel | None
) -> Iterator[ImportedConversation | Unreadable]:
    total = source.size
    before = 0
    for member in source.members:
        report: Callable[[int], None] | None = None
        if progress is not None:
            report = _reporter(progress, before, total)
        with source.open(member) as stream:
            reader = Reader(stream, report, cancel)
            yield from _member_entries(source, member, reader, state)
        before += member.size


def _reporter(progress: Progress, before: int, total: int) -> Callable[[int], None]:
    return lambda done: progress(min(before + done, total), total)


def _member_entries(
    source: ImportSource, member: Member, reader: Reader, state: _State
) -> Iterator[ImportedConversation | Unreadable]:
    try:
        first = reader.first_byte()
        if first == b"{":
            doc = read_document(reader)
            native = read_assistant(doc)
            state.format = state.format or "assistant"
            state.memories.extend(native.memories)
            state.events.extend(native.events)
            state.projects.extend(native.projects)
            state.instructions = state.instructions or native.instructions
            state.memory_policy = state.memory_policy or native.memory_policy
            for conversation in native.conversations:
                yield _once(conversation, state, conversation.title)
        elif first == b"[":
            for item in list_items(reader):
                entry = _item(item, state)
                if entry is not None:
                    yield entry
        elif not first:
            raise FileProblemError(f"is empty. {CHOOSE}")
        else:
            raise FileProblemError(_not_a_list(reader))
    except FileProblemError as exc:
        raise exc.named(_shown_name(source, member)) from None


def _item(raw: Any, state: _State) -> ImportedConversation | Unreadable | None:
    """One conversation of a ChatGPT or Claude list, why it cannot be read, or None if empty."""
    order = state.items
    state.items += 1
    name = _name(raw, order)
    if not isinstance(raw, dict):
        return Unreadable(name, f"is {kind(raw)}, not a conversation")
    if is_claude(raw):
        fmt: ImportFormat = "claude"
        reader = read_claude
    elif is_chatgpt(raw):
        fmt, reader = "chatgpt", read_chatgpt
    else:
        return Unreadable(
            name,
            "is neither a ChatGPT conversation (it has no “mapping”) nor a Claude one (no "
            "“chat_messages”)",
        )
    state.recognized += 1
    state.format = state.format or fmt
    try:
        check_texts(raw)
        conversation = reader(raw, order, state.tally)
    except FieldError as exc:
        return Unreadable(name, field_problem(str(exc)))
    except (RecursionError, ValueError, TypeError) as exc:
        return Unreadable(name, f"it holds something this version cannot read ({exc})")
    if conversation is None:
        return None
    try:
        check_messages(conversation.messages)  # what the store will check when it is written
    except ValueError as exc:
        return Unreadable(name, field_problem(str(exc)))
    return _once(conversation, state, name)


def _once(
    conversation: ImportedConversation, state: _State, name: str
) -> ImportedConversation | Unreadable:
    if conversation.id in state.seen:
        return Unreadable(name, f"its id {conversation.id!r} is used by an earlier conversation")
    state.seen.add(conversation.id)
    return conversation


def _name(raw: Any, order: int) -> str:
    """A conversation's title, else its id, else its place in the file."""
    if isinstance(raw, dict):
        for key in ("title", "name", "conversation_id", "id", "uuid"):
            value = raw.get(key)
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())[:80]
    return f"conversation {order + 1}"


def _shown_name(source: ImportSource, member: Member | None = None) -> str:
    """The file as the user knows it: "export.json", "conversations-001.json in export.zip"."""
    if source.kind in ("zip", "folder") and member is not None:
        return f"{member.name} in {source.path.name}"
    return source.path.name


def _not_a_list(reader: Reader) -> str:
    """Why a file that is not an object or a list is not an export (said after its name)."""
    head = reader.read(_PEEK_BYTES)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not just a character cut by the peek
            return (
                f"is not UTF-8 text (a bad byte at offset {exc.start:,}), so it is not an "
                f"export. {CHOOSE}"
            )
        text = head[: exc.start].decode("utf-8")
    try:
        value = json.loads(text)
    except ValueError:
        return f"is not JSON, so it is not an export. {CHOOSE}"
    return f"{NOT_AN_EXPORT}: it holds only {kind(value)}, not conversations. {CHOOSE}"


def _were(n: int) -> str:
    return "1 conversation was" if n == 1 else f"{n} conversations were"
