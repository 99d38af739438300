"""A conversation file: one JSON Lines file of records (a header, messages, metadata updates),
and the `Conversation` read from it.

Records carry a `version` and a `type`: "meta" (the header: title, created_at, temporary,
do_not_remember, project), "message", "update" (a new title, summary, chosen branch, its
project, whether it is pinned or archived in the list, the chat model and its options chosen
for it, why the reply to a user message failed), "pending" (a change to memory that waits for
the user, see `pending`) or "answered" (the user's answer to one). A torn or malformed record
is skipped with a warning; a file without its header is recovered with a placeholder title;
records of a newer version make the file unreadable (it is left as it is).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant.fileio import refuse_newer
from assistant.json_fields import optional_str, string
from assistant.memory import jsonl
from assistant.memory.messages import (
    MESSAGE_OVERHEAD_TOKENS,
    AttachedFile,
    Message,
    estimate_tokens,
)
from assistant.memory.pending import PendingChange
from assistant.model_options import ModelOptions
from assistant.timestamps import stamp

log = logging.getLogger(__name__)

RECORD_VERSION = 1
RECOVERED_TITLE = "Recovered conversation"

# Ids name files, so they are restricted to characters that are safe in a file name.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def is_valid_id(conversation_id: str) -> bool:
    """Whether `conversation_id` can name a conversation file (letters, digits, '-', '_')."""
    return _ID.fullmatch(conversation_id) is not None


@dataclass(frozen=True)
class PromptWindow:
    """What of a conversation goes into a prompt, and what fell out unsummarized."""

    summary: str
    messages: list[Message]
    overflow: list[Message]
    tokens: int


@dataclass(frozen=True)
class Conversation:
    """A conversation as loaded from its file."""

    id: str
    title: str
    created_at: str
    updated_at: str
    temporary: bool
    summary: str
    summary_upto: str | None
    messages: list[Message]  # every message of every branch, in the order they were written
    leaf_id: str | None  # the end of the branch shown and continued (None: before the first)

    def branch(self) -> list[Message]:
        """The messages of the chosen branch, oldest first: the leaf and its ancestors."""
        leaf = self.leaf_id
        by_id = {m.id: m for m in self.messages}
        path: list[Message] = []
        while leaf is not None and leaf in by_id:
            path.append(by_id[leaf])
            leaf = by_id[leaf].parent_id
        path.reverse()
        return path

    def versions(self) -> dict[str, list[Message]]:
        """For each message but tool results: it and its siblings, oldest first (one pass)."""
        children: dict[str | None, list[Message]] = {}
        for message in self.messages:
            if message.role != "tool":
                children.setdefault(message.parent_id, []).append(message)
        return {m.id: group for group in children.values() for m in group}

    def attachment(self, attachment_id: str) -> AttachedFile | None:
        """A file one of its messages carries, by its id."""
        for message in self.messages:
            for attached in message.attachments:
                if attached.id == attachment_id:
                    return attached
        return None

    def newest_leaf_under(self, message_id: str) -> str:
        """The newest message on a branch through `message_id` (it, if nothing follows it)."""
        below = {message_id}
        leaf = message_id
        for message in self.messages:
            if message.parent_id in below:
                below.add(message.id)
                leaf = message.id
        return leaf

    do_not_remember: bool = False  # imported so: the curator never learns from it
    pending: tuple[PendingChange, ...] = ()  # changes to memory waiting for the user's answer
    unread: int = 0  # records this version cannot read (kept in the file as they are)
    pinned: bool = False  # kept at the top of the list
    archived: bool = False  # out of the list until the user shows archived ones
    model: str | None = None  # the chat model chosen for it (None: the settings' one)
    options: ModelOptions = field(default_factory=ModelOptions)  # its own, over the model's
    project: str | None = None  # the id of the project it belongs to, if any
    failures: Mapping[str, str] = field(default_factory=dict)  # user message id -> why unanswered

    def with_record(self, record: Mapping[str, Any]) -> Conversation:
        """This conversation once `record` (a message or an update) is appended to its file.

        ValueError if the record is malformed; a record of another type changes nothing.
        """
        kind = record.get("type")
        if kind == "message":
            message = Message.from_json(record)
            return replace(
                self,
                messages=[*self.messages, message],
                leaf_id=message.id,
                updated_at=message.created_at,
            )
        if kind == "update":
            fields = update_fields(record)
            failure = fields.pop("failed", None)
            if failure is not None:
                fields["failures"] = {**self.failures, failure[0]: failure[1]}
            return replace(self, **fields)
        if kind in ("pending", "answered"):
            return replace(self, pending=with_pending(self.pending, record))
        return self

    def prompt_messages(self, budget_tokens: int) -> PromptWindow:
        """The summary and the newest messages after `summary_upto` that fit the budget.

        Tool exchanges (an assistant message with tool calls and its tool results) are kept or
        dropped whole, and the newest exchange is always kept. Older unsummarized messages that
        do not fit are returned as `overflow`, to be folded into the summary.
        """
        start = 0
        branch = self.branch()
        if self.summary_upto is not None:
            ids = [m.id for m in branch]
            if self.summary_upto in ids:
                start = ids.index(self.summary_upto) + 1
        pending = branch[start:]
        groups: list[list[Message]] = []
        for message in pending:
            if message.role == "tool" and groups:
                groups[-1].append(message)
            else:
                groups.append([message])
        used = estimate_tokens(self.summary) + MESSAGE_OVERHEAD_TOKENS if self.summary else 0
        kept: list[Message] = []
        for group in reversed(groups):
            cost = sum(m.estimated_tokens() for m in group)
            # Tool results whose call was summarized away cannot open a window.
            if group[0].role == "tool" or (kept and used + cost > budget_tokens):
                break
            kept[:0] = group
            used += cost
        return PromptWindow(self.summary, kept, pending[: len(pending) - len(kept)], used)


def read_conversation(path: Path, known_size: int | None = None) -> tuple[Conversation, list[str]]:
    """Parse a conversation file (repairing it as `jsonl.read` does, `known_size` being the
    size it had whole) and say what was wrong.

    Records this version cannot read stay in the file (`Conversation.unread`). A file with
    records of a newer version is a StorageError, and is left as it is.
    """
    loaded = jsonl.read(
        path, known_size=known_size, vet=lambda r: refuse_newer(path, r, RECORD_VERSION)
    )
    problems: list[str] = []
    meta: dict[str, Any] | None = None
    updates: dict[str, Any] = {}  # the latest title, summary and flags
    messages: list[Message] = []
    leaf: str | None = None
    pending: tuple[PendingChange, ...] = ()
    failures: dict[str, str] = {}
    bad = 0
    for record in loaded.records:
        kind = record.get("type")
        try:
            if kind == "message":
                messages.append(Message.from_json(record))
                leaf = messages[-1].id
            elif kind == "meta" and meta is None:
                string(record, "title")
                string(record, "created_at")
                for flag in ("temporary", "do_not_remember"):
                    if not isinstance(record.get(flag, False), bool):
                        raise ValueError(f"{flag!r} must be true or false")
                optional_str(record, "project")
                meta = record
            elif kind == "update":
                fields = update_fields(record)
                leaf = fields.pop("leaf_id", leaf)
                failures.update([fields.pop("failed")] if "failed" in fields else [])
                updates.update(fields)
            elif kind in ("pending", "answered"):
                pending = with_pending(pending, record)
            elif kind != "meta":  # a kind of record of a later version
                raise ValueError(f"unknown type {kind!r}")
        except ValueError:
            bad += 1
    if bad:
        problems.append(
            f"Conversation {updates.get('title') or (meta or {}).get('title', path.stem)!r} "
            f"({path.name}): "
            f"{bad} {'record' if bad == 1 else 'records'} this version cannot read "
            "were kept in its file, unchanged."
        )
    if meta is None:
        problems.append(
            f"{path.name}: its header record is missing; titled it {RECOVERED_TITLE!r}."
        )
        created_at = (
            messages[0].created_at
            if messages
            else stamp(datetime.fromtimestamp(path.stat().st_mtime, UTC))
        )
        meta = {"title": RECOVERED_TITLE, "created_at": created_at}
    for msg in problems:
        log.warning(msg)
    if leaf is not None and all(m.id != leaf for m in messages):  # a leaf that was not written
        leaf = messages[-1].id if messages else None
    conversation = Conversation(
        id=path.stem,
        title=updates.get("title") or meta["title"],
        created_at=meta["created_at"],
        updated_at=messages[-1].created_at if messages else meta["created_at"],
        temporary=meta.get("temporary", False),
        summary=updates.get("summary", ""),
        summary_upto=updates.get("summary_upto"),
        messages=messages,
        do_not_remember=meta.get("do_not_remember", False),
        leaf_id=leaf,
        pending=pending,
        unread=bad,
        pinned=updates.get("pinned", False),
        archived=updates.get("archived", False),
        model=updates.get("model"),
        options=updates.get("options", ModelOptions()),
        project=updates.get("project", meta.get("project")),
        failures=failures,
    )
    named = f"Conversation {conversation.title!r} ({path.name}):"  # what the user knows it by
    found = [named + w.removeprefix(f"{path.name}:") for w in loaded.warnings]
    return conversation, found + problems


def update_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """What an "update" record changes, by `Conversation` field; ValueError if malformed."""
    fields: dict[str, Any] = {}
    if "title" in record:
        fields["title"] = string(record, "title")
    if "summary" in record:
        fields["summary"] = string(record, "summary")
        fields["summary_upto"] = optional_str(record, "summary_upto")
    if "leaf" in record:
        fields["leaf_id"] = optional_str(record, "leaf")
    if "project" in record:
        fields["project"] = optional_str(record, "project")
    for flag in ("pinned", "archived"):
        if flag in record:
            if not isinstance(record[flag], bool):
                raise ValueError(f"{flag!r} must be true or false")
            fields[flag] = record[flag]
    if "model" in record:
        fields["model"] = optional_str(record, "model") or None
    if "options" in record:
        fields["options"] = ModelOptions.from_json(record["options"], "options")
    if "failed" in record:  # {"message": a user message's id, "error": why no reply came}
        failed = record["failed"]
        if not isinstance(failed, Mapping):
            raise ValueError("'failed' must be an object")
        fields["failed"] = (string(failed, "message"), string(failed, "error"))
    return fields


def with_pending(
    pending: tuple[PendingChange, ...], record: Mapping[str, Any]
) -> tuple[PendingChange, ...]:
    """The changes waiting once a "pending" record adds one or an "answered" one closes one;
    ValueError if malformed."""
    if record.get("type") == "pending":
        change = PendingChange.from_json(record)
        return (*(p for p in pending if p.id != change.id), change)
    answered = string(record, "id")
    return tuple(p for p in pending if p.id != answered)


def file_record(kind: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """A file record: version, type, then the body's fields."""
    return {"version": RECORD_VERSION, "type": kind, **body}


def clean_title(title: str) -> str:
    """The title on one line; ValueError if it is empty."""
    cleaned = " ".join(title.split())
    if not cleaned:
        raise ValueError("a conversation title must not be empty")
    return cleaned
