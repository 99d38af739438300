"""The review inbox: memories the assistant proposes while the user's policy is "ask first".

They wait in `memory/inbox.json` (one JSON object, rewritten atomically on each change) until
the user accepts or rejects them (`memory.review`). Waiting, they are in no prompt and no search:
only this store holds them. A proposal may refine or replace an existing memory (the curator
decided so when it proposed it); accepting it does that then. Whatever the policy, a memory
the model wants to make that resembles a forgotten fact waits here too (`resembles_forgotten`,
see `memory.resembling`), and is learned only with the user's yes.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, get_args

from assistant.fileio import atomic_write_json, read_json_object, set_aside
from assistant.memory.items import KINDS, ORIGINS, MemoryKind, Origin, Source
from assistant.memory.subscribers import Subscribers
from assistant.timestamps import now_utc, parse, stamp

log = logging.getLogger(__name__)

INBOX_VERSION = 1
INBOX_NAME = "inbox.json"
# Proposals that wait at most; past it the oldest go (unreviewed, so they may come up again).
MAX_PENDING = 200

Change = Literal["add", "refine", "replace"]
CHANGES: tuple[str, ...] = get_args(Change)


@dataclass(frozen=True)
class Proposal:
    """A memory waiting for the user: what it says, where it came from, and what it would
    change (`target`: the memory it would refine or replace)."""

    text: str
    kind: MemoryKind = "fact"
    importance: float = 0.5
    topic: str = "general"
    source: Source | None = None
    by: Origin = "curator"
    change: Change = "add"
    target: str | None = None
    reason: str = ""
    project: str | None = None  # the scope the memory would have (None: global)
    resembles_forgotten: bool = False  # held because it resembles a fact the user had forgotten
    client: str | None = None  # the MCP client that sent it (by "mcp")
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    proposed_at: datetime = field(default_factory=now_utc)

    def to_json(self) -> dict[str, Any]:
        """The proposal as its line of the inbox file holds it."""
        raw: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "importance": self.importance,
            "topic": self.topic,
            "by": self.by,
            "change": self.change,
            "proposed_at": stamp(self.proposed_at),
        }
        if self.source is not None:
            raw["source"] = self.source.to_json()
        if self.target is not None:
            raw["target"] = self.target
        if self.reason:
            raw["reason"] = self.reason
        if self.project is not None:
            raw["project"] = self.project
        if self.resembles_forgotten:
            raw["resembles_forgotten"] = True
        if self.client is not None:
            raw["client"] = self.client
        return raw

    @classmethod
    def from_json(cls, raw: Any) -> Proposal:
        """Parse a proposal; ValueError naming the first bad field."""
        if not isinstance(raw, dict):
            raise ValueError("proposal: expected an object")
        for name in ("id", "text", "proposed_at"):
            if not isinstance(raw.get(name), str) or not raw[name]:
                raise ValueError(f"proposal {name}: expected a string")
        kind, by, change = raw.get("kind"), raw.get("by", "curator"), raw.get("change", "add")
        if kind not in KINDS:
            raise ValueError(f"proposal kind: unknown kind {kind!r}")
        if by not in ORIGINS:
            raise ValueError(f"proposal by: unknown origin {by!r}")
        if change not in CHANGES:
            raise ValueError(f"proposal change: unknown change {change!r}")
        importance = raw.get("importance", 0.5)
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise ValueError("proposal importance: not a number")
        target, topic = raw.get("target"), raw.get("topic", "general")
        reason = raw.get("reason", "")
        if not isinstance(topic, str) or not isinstance(reason, str):
            raise ValueError("proposal topic, reason: expected strings")
        if target is not None and not isinstance(target, str):
            raise ValueError("proposal target: expected a memory id")
        project = raw.get("project")
        if project is not None and not isinstance(project, str):
            raise ValueError("proposal project: expected a project id")
        client = raw.get("client")
        if client is not None and not isinstance(client, str):
            raise ValueError("proposal client: expected a string")
        source = raw.get("source")
        return cls(
            text=raw["text"],
            kind=kind,
            importance=min(1.0, max(0.0, float(importance))),
            topic=topic,
            source=None if source is None else Source.from_json(source, "proposal source"),
            by=by,
            change=change,
            target=target,
            reason=reason,
            project=project,
            resembles_forgotten=raw.get("resembles_forgotten") is True,
            client=client,
            id=raw["id"],
            proposed_at=parse(raw["proposed_at"]),
        )


class Inbox:
    """The proposals waiting for review, oldest first; thread-safe, one file."""

    def __init__(self, memory_dir: Path) -> None:
        self.path = memory_dir / INBOX_NAME
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._subscribers: Subscribers[None] = Subscribers("inbox")
        self._pending: list[Proposal] = self._load()

    def _load(self) -> list[Proposal]:
        try:
            raw = read_json_object(self.path, INBOX_VERSION, "the review inbox")
            if raw is None:
                return []
            listed = raw.get("proposals")
            if not isinstance(listed, list):
                raise ValueError("proposals: expected a list")
            return [Proposal.from_json(p) for p in listed]
        except ValueError as exc:
            self.warnings.append(set_aside(self.path, "The review inbox", exc))
            return []

    def _save(self, pending: list[Proposal]) -> None:
        """Write `pending` (then keep it: a failed write changes nothing)."""
        atomic_write_json(
            self.path, {"version": INBOX_VERSION, "proposals": [p.to_json() for p in pending]}
        )
        self._pending = pending

    def pending(self) -> list[Proposal]:
        """The proposals waiting, oldest first."""
        with self._lock:
            return list(self._pending)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    def get(self, proposal_id: str) -> Proposal | None:
        """The waiting proposal with this id, if any."""
        with self._lock:
            return next((p for p in self._pending if p.id == proposal_id), None)

    def propose(self, proposals: Iterable[Proposal]) -> list[Proposal]:
        """Add proposals (one whose text waits already is left out); returns those added.

        StorageError if they cannot be saved; the inbox is then as it was.
        """
        with self._lock:
            waiting = {_normal(p.text) for p in self._pending}
            added: list[Proposal] = []
            for proposal in proposals:
                key = _normal(proposal.text)
                if key not in waiting:
                    waiting.add(key)
                    added.append(proposal)
            if not added:
                return []
            pending = [*self._pending, *added]
            if len(pending) > MAX_PENDING:
                log.info("Review inbox: the %d oldest proposals went", len(pending) - MAX_PENDING)
                pending = pending[-MAX_PENDING:]
            self._save(pending)
        self._subscribers.notify(None)
        return added

    def remove(self, ids: Sequence[str]) -> list[Proposal]:
        """Take proposals out of the inbox (reviewed); returns those that were waiting.

        StorageError if that cannot be saved; the inbox is then as it was.
        """
        wanted = set(ids)
        with self._lock:
            taken = [p for p in self._pending if p.id in wanted]
            if not taken:
                return []
            self._save([p for p in self._pending if p.id not in wanted])
        self._subscribers.notify(None)
        return taken

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` after each change, on the changing thread; returns an unsubscribe."""
        return self._subscribers.add(lambda _: callback())


def _normal(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!")
