"""Long-term memory records: `MemoryItem`, where it came from, its history (`MemoryEvent`), and
how it ranked in a search."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, get_args

from assistant.timestamps import now_utc, stamp

MemoryKind = Literal["fact", "preference", "plan", "decision", "task", "event", "insight"]
MemoryState = Literal["active", "archived", "forgotten"]
# Who made a memory or changed it: user: typed in the sidebar; tool: the model's `remember` tool;
# curator: extracted after a turn; import: from an export file; reflection: an insight; mcp: an
# MCP client (another AI app) through `assistant mcp`, whose name the memory and event keep.
Origin = Literal["user", "tool", "curator", "import", "reflection", "mcp"]
EventType = Literal[
    "created",
    "edited",
    "merged",
    "superseded",
    "pinned",
    "unpinned",
    "used",
    "decayed",
    "archived",
    "forgotten",
    "restored",
    "moved",
]
KINDS: tuple[str, ...] = get_args(MemoryKind)
STATES: tuple[str, ...] = get_args(MemoryState)
ORIGINS: tuple[str, ...] = get_args(Origin)
EVENT_TYPES: tuple[str, ...] = get_args(EventType)

MAX_TEXT_CHARS = 2000  # a memory is a fact, not a document; bounds every prompt it enters


@dataclass(frozen=True)
class Source:
    """The message a memory was learned from."""

    conversation_id: str
    message_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The source as a JSON object."""
        return {"conversation_id": self.conversation_id, "message_id": self.message_id}

    @classmethod
    def from_json(cls, raw: Any, name: str = "source") -> Source:
        """Parse a source; raises ValueError naming `name` if it is not one."""
        if not isinstance(raw, dict) or not isinstance(raw.get("conversation_id"), str):
            raise ValueError(f"{name}: expected an object with a conversation_id")
        message_id = raw.get("message_id")
        return cls(raw["conversation_id"], message_id if isinstance(message_id, str) else None)


class MemoryItem(NamedTuple):
    """One long-term memory (a named tuple: immutable, and cheap to build 100,000 of)."""

    id: str
    text: str
    kind: MemoryKind
    importance: float
    created_at: datetime
    updated_at: datetime
    last_accessed: datetime
    pinned: bool = False
    access_count: int = 0
    state: MemoryState = "active"
    source: Source | None = None
    tags: tuple[str, ...] = ()
    origin: Origin = "user"
    valid_from: datetime | None = None  # when the fact started to hold, as far as known
    valid_to: datetime | None = None  # when it stopped holding (set by supersede); None: current
    supersedes: tuple[str, ...] = ()  # ids of the memories this one replaced
    superseded_by: str | None = None  # id of the memory that replaced this one
    rests_on: tuple[str, ...] = ()  # for insights: the memories it rests on
    decayed_at: datetime | None = None  # when its importance last decayed
    client: str | None = None  # origin "mcp": the MCP client's name ("Claude Desktop")
    project: str | None = None  # its scope: the id of its project; None: global (everywhere)

    @property
    def is_current(self) -> bool:
        """Whether the item is active and still holds (no `valid_to`)."""
        return self.state == "active" and self.valid_to is None

    @classmethod
    def new(
        cls,
        text: str,
        kind: MemoryKind,
        importance: float,
        *,
        tags: Sequence[str] = (),
        **fields: Any,
    ) -> MemoryItem:
        """A memory made now, with a new id (`fields`: any other fields to set)."""
        now = now_utc()
        return cls(
            id=uuid.uuid4().hex,
            text=text,
            kind=kind,
            importance=float(importance),
            created_at=now,
            updated_at=now,
            last_accessed=now,
            tags=tuple(tags),
            **fields,
        )

    def to_json(self) -> dict[str, Any]:
        """The item as a JSON object (timestamps as ISO 8601; empty links left out)."""
        raw: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "importance": self.importance,
            "pinned": self.pinned,
            "created_at": stamp(self.created_at),
            "updated_at": stamp(self.updated_at),
            "last_accessed": stamp(self.last_accessed),
            "access_count": self.access_count,
            "state": self.state,
            "source": None if self.source is None else self.source.to_json(),
            "tags": list(self.tags),
            "origin": self.origin,
        }
        for name in ("valid_from", "valid_to", "decayed_at"):
            moment = getattr(self, name)
            if moment is not None:
                raw[name] = stamp(moment)
        for name in ("supersedes", "rests_on"):
            if getattr(self, name):
                raw[name] = list(getattr(self, name))
        if self.superseded_by is not None:
            raw["superseded_by"] = self.superseded_by
        if self.client is not None:
            raw["client"] = self.client
        if self.project is not None:
            raw["project"] = self.project
        return raw

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> MemoryItem:
        """Parse an item; raises ValueError naming the first bad field."""
        item_id = _field(raw, "id", str)
        text = _field(raw, "text", str)
        kind = _field(raw, "kind", str)
        if kind not in KINDS:
            raise ValueError(f"kind: unknown kind {kind!r}")
        state = raw.get("state", "active")
        if state not in STATES:
            raise ValueError(f"state: unknown state {state!r}")
        importance = raw.get("importance", 0.5)
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise ValueError("importance: not a number")
        source = raw.get("source")
        if source is not None:
            source = Source.from_json(source)
        tags = raw.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ValueError("tags: expected a list of strings")
        created = _time(raw, "created_at")
        access_count = raw.get("access_count", 0)
        if isinstance(access_count, bool) or not isinstance(access_count, int):
            raise ValueError("access_count: not an integer")
        origin = raw.get("origin", "user")
        if origin not in ORIGINS:
            raise ValueError(f"origin: unknown origin {origin!r}")
        superseded_by = raw.get("superseded_by")
        if superseded_by is not None and not isinstance(superseded_by, str):
            raise ValueError("superseded_by: expected a memory id")
        client = raw.get("client")
        if client is not None and not isinstance(client, str):
            raise ValueError("client: expected a string")
        project = raw.get("project")
        if project is not None and not isinstance(project, str):
            raise ValueError("project: expected a project id")
        return cls(
            id=item_id,
            text=text,
            kind=kind,
            importance=min(1.0, max(0.0, float(importance))),
            pinned=bool(raw.get("pinned", False)),
            created_at=created,
            updated_at=_time(raw, "updated_at", created),
            last_accessed=_time(raw, "last_accessed", created),
            access_count=access_count,
            state=state,
            source=source,
            tags=tuple(tags),
            origin=origin,
            valid_from=_time(raw, "valid_from") if raw.get("valid_from") is not None else None,
            valid_to=_time(raw, "valid_to") if raw.get("valid_to") is not None else None,
            supersedes=_ids(raw, "supersedes"),
            superseded_by=superseded_by,
            rests_on=_ids(raw, "rests_on"),
            decayed_at=_time(raw, "decayed_at") if raw.get("decayed_at") is not None else None,
            client=client,
            project=project,
        )


@dataclass(frozen=True)
class MemoryEvent:
    """One change in a memory's history (the memory log keeps them; see README)."""

    memory_id: str
    type: EventType
    at: datetime
    by: Origin | None = None  # who did it (created: the origin)
    source: Source | None = None  # the message it came from; for "used": the reply
    text_before: str | None = None  # edited / merged
    text_after: str | None = None  # created / edited / merged
    related_id: str | None = None  # merged: the memory merged in; superseded: the successor
    reason: str | None = None  # superseded / decayed: in words
    importance_before: float | None = None  # decayed
    importance_after: float | None = None  # decayed
    client: str | None = None  # by "mcp": the MCP client's name
    project_before: str | None = None  # moved: the project it was in (None: global)
    project_after: str | None = None  # moved: the project it is in now (None: global)

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object; fields that are None are left out."""
        raw: dict[str, Any] = {"memory_id": self.memory_id, "type": self.type, "at": stamp(self.at)}
        for name in _EVENT_OPTIONAL:
            value = getattr(self, name)
            if value is not None:
                raw[name] = value.to_json() if isinstance(value, Source) else value
        return raw

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> MemoryEvent:
        """Parse an event; raises ValueError naming the first bad field."""
        if not isinstance(raw, dict):
            raise ValueError("event: expected an object")
        kind = raw.get("type")
        if kind not in EVENT_TYPES:
            raise ValueError(f"type: unknown event type {kind!r}")
        by = raw.get("by")
        if by is not None and by not in ORIGINS:
            raise ValueError(f"by: unknown origin {by!r}")
        values: dict[str, Any] = {}
        for name in _EVENT_STRINGS:
            value = raw.get(name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name}: expected a string")
            values[name] = value
        for name in ("importance_before", "importance_after"):
            value = raw.get(name)
            if value is not None and not _is_number(value):
                raise ValueError(f"{name}: not a number")
            values[name] = None if value is None else float(value)
        source = raw.get("source")
        return cls(
            memory_id=_field(raw, "memory_id", str),
            type=kind,
            at=_time(raw, "at"),
            by=by,
            source=None if source is None else Source.from_json(source),
            **values,
        )


_EVENT_STRINGS = (
    "text_before",
    "text_after",
    "related_id",
    "reason",
    "client",
    "project_before",
    "project_after",
)
_EVENT_OPTIONAL = ("by", "source", *_EVENT_STRINGS, "importance_before", "importance_after")


def listing_order(item: MemoryItem) -> tuple[bool, float]:
    """The order memories are listed in (store and sidebar): pinned first, then newest first."""
    return (not item.pinned, -item.created_at.timestamp())


def _field(raw: dict[str, Any], name: str, kind: type) -> Any:
    value = raw.get(name)
    if not isinstance(value, kind):
        raise ValueError(f"{name}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ids(raw: dict[str, Any], name: str) -> tuple[str, ...]:
    value = raw.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name}: expected a list of memory ids")
    return tuple(value)


def _time(raw: dict[str, Any], name: str, default: datetime | None = None) -> datetime:
    value = raw.get(name)
    if value is None and default is not None:
        return default
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected an ISO 8601 timestamp")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SearchHit:
    """A search result: the item, its final score and how it got there."""

    item: MemoryItem
    score: float
    keyword_rank: int | None = None
    keyword_score: float | None = None
    vector_rank: int | None = None
    similarity: float | None = None
    importance_boost: float = 0.0
    recency_boost: float = 0.0
    matched: tuple[str, ...] = ()  # the query's words found in the item, as typed
    keyword_part: float = 0.0  # of the score, what the keyword ranking gave
    meaning_part: float = 0.0  # of the score, what the meaning ranking gave
    # Of the matched words, those in more than half of the memories searched, with how many
    # have them: BM25 gives such a word next to no weight (it does not set a memory apart).
    common: tuple[tuple[str, int], ...] = ()
    searched: int = 0  # the memories searched (0: not known)


# "history": the histories were read from the log (views that waited for them can show them)
ChangeKind = Literal["added", "updated", "used", "embeddings", "history"]


@dataclass(frozen=True)
class MemoryChange:
    """What changed in the store, for subscribers (the UI's models)."""

    kind: ChangeKind
    ids: tuple[str, ...] = ()
