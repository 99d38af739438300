"""Long-term memory records: `MemoryItem`, where it came from, and how it ranked in a search."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, get_args

from assistant.timestamps import stamp

MemoryKind = Literal["fact", "preference", "plan", "decision", "task", "event", "insight"]
MemoryState = Literal["active", "archived", "forgotten"]
KINDS: tuple[str, ...] = get_args(MemoryKind)
STATES: tuple[str, ...] = get_args(MemoryState)


@dataclass(frozen=True)
class Source:
    """The message a memory was learned from."""

    conversation_id: str
    message_id: str | None = None


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

    def to_json(self) -> dict[str, Any]:
        """The item as a JSON object (timestamps as ISO 8601)."""
        return {
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
            "source": (
                None
                if self.source is None
                else {
                    "conversation_id": self.source.conversation_id,
                    "message_id": self.source.message_id,
                }
            ),
            "tags": list(self.tags),
        }

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
            if not isinstance(source, dict) or not isinstance(source.get("conversation_id"), str):
                raise ValueError("source: expected an object with a conversation_id")
            message_id = source.get("message_id")
            source = Source(
                source["conversation_id"], message_id if isinstance(message_id, str) else None
            )
        tags = raw.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ValueError("tags: expected a list of strings")
        created = _time(raw, "created_at")
        access_count = raw.get("access_count", 0)
        if isinstance(access_count, bool) or not isinstance(access_count, int):
            raise ValueError("access_count: not an integer")
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
        )


def listing_order(item: MemoryItem) -> tuple[bool, float]:
    """The order memories are listed in (store and sidebar): pinned first, then newest first."""
    return (not item.pinned, -item.created_at.timestamp())


def _field(raw: dict[str, Any], name: str, kind: type) -> Any:
    value = raw.get(name)
    if not isinstance(value, kind):
        raise ValueError(f"{name}: expected {kind.__name__}, got {type(value).__name__}")
    return value


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

    @property
    def why(self) -> str:
        """The ranking in words, for the UI's "why" and for debugging."""
        parts = []
        if self.keyword_rank is not None:
            parts.append(f"keyword rank {self.keyword_rank} (BM25 {self.keyword_score:.2f})")
        if self.vector_rank is not None:
            parts.append(f"meaning rank {self.vector_rank} (similarity {self.similarity:.2f})")
        parts.append(f"importance +{self.importance_boost:.3f}")
        parts.append(f"recency +{self.recency_boost:.3f}")
        return f"score {self.score:.3f}: " + ", ".join(parts)


ChangeKind = Literal["added", "updated", "used", "embeddings"]


@dataclass(frozen=True)
class MemoryChange:
    """What changed in the store, for subscribers (the UI's models)."""

    kind: ChangeKind
    ids: tuple[str, ...] = ()
