"""Memories' histories: the events of the memory log, by memory, loaded on first use.

The log holds two kinds of history records (see README, "Data format"): `event` records (one
`MemoryEvent`) and `used` records (one "used" event for each id they list, besides the access
statistics they carry). Opening the store from its index cache does not read them; the first
call that needs a history reads them from the log (`MemoryLog.read_history`), and from
then on new events are added here as they are appended.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from assistant.memory.items import EventType, MemoryEvent, MemoryItem, Source
from assistant.timestamps import parse

ACCEPTED = "accepted by you"  # the reason of a "created" event the user said yes to
USED_KEPT = 20  # "used" events kept per memory when the log is compacted (the count keeps all)


def events_of(record: dict[str, Any]) -> list[MemoryEvent]:
    """The events a log record holds (none for a `put`); raises ValueError if it is bad."""
    op = record.get("op")
    if op == "event":
        return [MemoryEvent.from_json(record["event"])]
    if op == "used":
        at = parse(record["at"])
        reply = record.get("reply")
        source = None if reply is None else Source.from_json(reply, "reply")
        return [MemoryEvent(item_id, "used", at, source=source) for item_id in record["ids"]]
    return []


class History:
    """Events by memory id, oldest first; `None` until loaded."""

    def __init__(self) -> None:
        self._by_id: dict[str, list[MemoryEvent]] | None = None
        self.created: set[str] = set()  # the memories whose "created" event the log has

    @property
    def _events(self) -> dict[str, list[MemoryEvent]]:
        if self._by_id is None:
            raise RuntimeError("the history was not read from the log yet")
        return self._by_id

    @property
    def loaded(self) -> bool:
        """Whether the events were read (else they are only in the log)."""
        return self._by_id is not None

    def load(self, events: Iterable[MemoryEvent], keep: Callable[[str], bool]) -> None:
        """Take the events of the memories `keep` accepts (in log order)."""
        self._by_id = {}
        self.created = set()
        self.record(e for e in events if keep(e.memory_id))

    def record(self, events: Iterable[MemoryEvent]) -> None:
        """Add events just appended to the log (nothing to do while not loaded)."""
        if self._by_id is None:
            return
        for event in events:
            _insert(self._by_id.setdefault(event.memory_id, []), event)
            if event.type == "created":
                self.created.add(event.memory_id)

    def of(self, memory_id: str) -> list[MemoryEvent]:
        """One memory's events, oldest first (the history must be loaded)."""
        return list(self._events.get(memory_id, ()))

    def every(self) -> Iterator[MemoryEvent]:
        """Every event (the history must be loaded)."""
        for events in self._events.values():
            yield from events

    def kept(self, memory_ids: Sequence[str]) -> list[MemoryEvent]:
        """The events a compacted log keeps for these memories: all but the oldest "used"
        events beyond the last `USED_KEPT` of each."""
        out: list[MemoryEvent] = []
        for memory_id in memory_ids:
            events = self._events.get(memory_id, [])
            used = [e for e in events if e.type == "used"]
            dropped = {id(e) for e in used[: max(0, len(used) - USED_KEPT)]}
            out.extend(e for e in events if id(e) not in dropped)
        return out


def told(item: MemoryItem, events: Sequence[MemoryEvent]) -> list[MemoryEvent]:
    """A memory's events as they are shown: with a "created" event (made from the item's own
    fields for a memory of a log of version 1) that holds the text the memory was created
    with (see `created_text`)."""
    out = [with_text(e, item, events) for e in events]
    if not any(e.type == "created" for e in out):
        out.insert(0, with_text(creation(item), item, events))
    return out


def creation(item: MemoryItem, *, accepted: bool = False) -> MemoryEvent:
    """The "created" event of an item (as the log keeps it: without the text); `accepted`: the
    user said yes to it on the Review tab (the event's reason says so)."""
    return MemoryEvent(
        item.id,
        "created",
        item.created_at,
        by=item.origin,
        source=item.source,
        client=item.client,
        reason=ACCEPTED if accepted else None,
    )


def with_text(event: MemoryEvent, item: MemoryItem, events: Sequence[MemoryEvent]) -> MemoryEvent:
    """`event`, and if it is a "created" event without a text, with the text the memory was
    created with. The log leaves that text out, as it is the text before the first edit or
    merge of `events` (the memory's), or else the text now."""
    if event.type != "created" or event.text_after is not None:
        return event
    first = next((e.text_before for e in events if e.text_before is not None), item.text)
    return dataclasses.replace(event, text_after=first)


def select(
    events: Iterable[MemoryEvent],
    *,
    since: datetime | None,
    until: datetime | None,
    types: Iterable[EventType] | None,
    limit: int | None,
) -> list[MemoryEvent]:
    """Events in [since, until) of the given types, newest first, at most `limit`."""
    wanted = None if types is None else set(types)
    chosen = [
        e
        for e in events
        if (wanted is None or e.type in wanted)
        and (since is None or e.at >= since)
        and (until is None or e.at < until)
    ]
    chosen.sort(key=lambda e: e.at, reverse=True)
    return chosen if limit is None else chosen[:limit]


def _insert(events: list[MemoryEvent], event: MemoryEvent) -> None:
    """Keep `events` in time order (appends are nearly always in order: the fast path)."""
    if not events or events[-1].at <= event.at:
        events.append(event)
    else:
        bisect.insort_right(events, event, key=lambda e: e.at)


def what_changed(old: MemoryItem, new: MemoryItem) -> str | None:
    """An edit's changes other than the text, in words, for its event's reason ("kind fact ->
    plan, importance 0.5 -> 0.8")."""
    parts = []
    if old.kind != new.kind:
        parts.append(f"kind {old.kind} -> {new.kind}")
    if old.importance != new.importance:
        parts.append(f"importance {old.importance:.2g} -> {new.importance:.2g}")
    if old.tags != new.tags:
        parts.append(f"tags {', '.join(old.tags) or 'none'} -> {', '.join(new.tags) or 'none'}")
    return ", ".join(parts) or None
