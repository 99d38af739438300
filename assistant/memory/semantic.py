"""Semantic long-term memory: the lifecycle verbs (add, save, insert, edit, merge, supersede,
pin, forget, archive, restore, mark used, decay) over the store's log and index.

Each verb appends its records to the log, places the items in the index, then tells the
subscribers (see `memory_store`); a forget's way to the disk is told in `memory_log`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy.typing as npt

from assistant.errors import AssistantError
from assistant.memory.decay import ARCHIVE_BELOW, decayed, unused_for
from assistant.memory.embedding_upkeep import Embedded
from assistant.memory.fading import archive_limit, decay_clock
from assistant.memory.history import creation, what_changed
from assistant.memory.insertion import Inserted, reassigned, relinked, sort_imports
from assistant.memory.item_checks import check_fields, clean_text, too_long
from assistant.memory.items import (
    MAX_TEXT_CHARS,
    EventType,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    Origin,
    Source,
)
from assistant.memory.memory_log import LOG_NAME, LOG_VERSION
from assistant.memory.memory_store import MemoryStore
from assistant.memory.same_memory import unit_rows
from assistant.memory.scopes import Scope
from assistant.memory.tombstones import Fingerprint, Meaning, Resemblance, Tombstone, fold
from assistant.timestamps import now_utc

log = logging.getLogger(__name__)

__all__ = [
    "LOG_NAME",
    "LOG_VERSION",
    "MAX_TEXT_CHARS",
    "ForgottenFactError",
    "SemanticMemory",
]

# Never learn a forgotten fact again from these (the user's own adding lifts the tombstone), nor
# one resembling it without the user's yes (`confirmed`: accepted on the Review tab).
LEARNED: tuple[Origin, ...] = ("curator", "reflection", "mcp", "tool")


_REFUSED = {
    "forgotten": "the user made the assistant forget this",
    "resembles": "it resembles a fact the user made the assistant forget; only their yes keeps it",
}


class ForgottenFactError(AssistantError):
    """The model tried to learn a fact the user made the assistant forget (`resemblance`
    "forgotten"), or one resembling it ("resembles": it may, with the user's yes)."""

    def __init__(self, message: str, resemblance: Resemblance = "forgotten") -> None:
        super().__init__(message)
        self.resemblance: Resemblance = resemblance


class SemanticMemory(MemoryStore):
    """The long-term memory store; every public method is thread-safe."""

    # -- adding --------------------------------------------------------------------------------

    def add(
        self,
        text: str,
        kind: MemoryKind = "fact",
        importance: float = 0.5,
        *,
        source: Source | None = None,
        tags: Sequence[str] = (),
        pinned: bool = False,
        vector: npt.ArrayLike | None = None,
        origin: Origin = "user",
        valid_from: datetime | None = None,
        rests_on: Sequence[str] = (),
        client: str | None = None,
        project: str | None = None,
        confirmed: bool = False,
    ) -> MemoryItem:
        """Remember `text` (a "created" event says who and from where); durable when this
        returns. `vector` skips the embedder; `client` names the MCP client (origin "mcp");
        `project` is its scope (None: global).

        A fact that was forgotten is refused (ForgottenFactError) if the model learns it
        (LEARNED), and so is one resembling it unless `confirmed` (the user said yes to this
        text on the Review tab); the user adding it lifts its tombstone.
        """
        text = clean_text(text)
        check_fields(kind, importance)
        self._refuse_forgotten(text, origin, confirmed)
        embedded = self._vectors.given(text, vector)
        item = MemoryItem.new(
            text,
            kind,
            importance,
            source=source,
            tags=tags,
            pinned=pinned,
            origin=origin,
            valid_from=valid_from,
            rests_on=tuple(rests_on),
            client=client,
            project=project,
        )
        with self._lock:
            lifted = self._log.buried_as(text) if origin == "user" else []
            created = creation(item, accepted=confirmed)
            [slot] = self._commit([item], [created], lifted=lifted)
            if embedded is not None:
                self._vectors.store(embedded, [slot])
        self._vectors.refit()
        self._emit("added", [item.id])
        return item

    def resemblance(self, text: str) -> Resemblance | None:
        """How `text` matches the tombstones, by its words or, with the embedder at hand, by its
        meaning: "forgotten" (the same fact), "resembles" (to ask the user about), or None."""
        model = self._vectors.model
        with self._lock:
            band = self._log.resemblance(text)
            if model is None or not self._log.sketched(model):
                return band
        embedded = self._vectors.embed([fold(text)])  # outside the lock
        if embedded is None:
            return band
        meaning = Meaning(embedded.embedder.name, embedded.vectors[0])
        with self._lock:
            return self._log.resemblance(text, meaning)

    def bury(self, facts: Sequence[tuple[str, str]]) -> None:
        """Leave a tombstone for each (key, text) of facts that were never kept (proposals the
        user rejected), so that they are not learned again; the user adding one lifts it."""
        if not facts:
            return
        at = now_utc()
        with self._lock:
            buried = [
                Tombstone(key, Fingerprint.of(text), at, rejected=True) for key, text in facts
            ]
            self._commit([], [], buried=buried)

    def _refuse_forgotten(self, text: str, by: Origin, confirmed: bool = False) -> None:
        band = self.resemblance(text) if by in LEARNED else None
        if band == "forgotten" or (band == "resembles" and not confirmed):
            raise ForgottenFactError(f"Not learned: {_REFUSED[band]} ({text[:60]!r}).", band)

    def says_forgotten(self, text: str) -> bool:
        """Whether `text` says or resembles a forgotten fact by its words (quick: no
        embedding), as an import would refuse it."""
        with self._lock:
            return self._log.resemblance(text) is not None

    def insert(
        self,
        items: Sequence[MemoryItem],
        *,
        events: Iterable[MemoryEvent] = (),
        dedupe: bool = True,
    ) -> Inserted:
        """Store items as they are (ids, times, counts, links), e.g. from an import, with their
        `events`; memories are never duplicated.

        An item whose id is here already is left alone; one that says or resembles a forgotten
        fact is not brought back; one whose normalised text (word stems) is that of a memory
        here, or whose meaning is as close as MERGE_THRESHOLD to an active one (or to an item
        stored earlier in this call), is merged into it: its id is mapped to that memory's, which
        gains a "merged" event and the item's history. Links between the items (supersedes,
        superseded_by, rests_on) follow the mapping. Embeds in one batch, outside the lock.
        Without `dedupe` (a bulk load, such as a benchmark's), every item with a new id is
        stored, forgotten facts too.
        """
        for item in items:
            if len(item.text) > MAX_TEXT_CHARS:
                raise ValueError(f"memory {item.id}: {too_long(item.text)}")
        history: dict[str, list[MemoryEvent]] = {}
        for event in events:
            history.setdefault(event.memory_id, []).append(event)
        done = Inserted([], {}, [], [], [])
        with self._lock:
            fresh = []
            for item in items:
                if item.id in self._index or item.id in done.ids:
                    done.present.append(item.id)
                else:
                    fresh.append(item)
                done.ids[item.id] = item.id
        embedded = self._vectors.embed([i.text for i in fresh]) if fresh else None
        vectors = None if embedded is None else unit_rows(embedded.vectors)
        with self._lock:
            new, merges = sort_imports(
                self._index,
                lambda text, row: (
                    self._log.resemblance(text, self._meaning_of(embedded, row)) is not None
                ),
                fresh,
                vectors,
                done=done,
                dedupe=dedupe,
            )
            stored = [relinked(item, done.ids) for item, _ in new]
            imported = [e for item in stored for e in history.get(item.id, ())]
            for merge in merges:  # a merged item's history, but its creation (the merge is that)
                merged = history.get(merge.related_id or "", ())
                imported += [e for e in merged if e.type != "created"]
            changes = [reassigned(e, done.ids) for e in imported] + merges
            slots = self._commit(stored, changes) if stored or changes else []
            active = [(s, r) for s, (i, r) in zip(slots, new, strict=True) if i.state == "active"]
            if embedded is not None and active:
                rows = [r for _, r in active]
                self._vectors.store(
                    Embedded(embedded.embedder, embedded.vectors[rows]), [s for s, _ in active]
                )
            done.stored.extend(stored)
        self._vectors.refit()
        if stored:
            self._emit("added", [i.id for i in stored])
        if merges:
            self._emit("updated", list(dict.fromkeys(e.memory_id for e in merges)))
        return done

    @staticmethod
    def _meaning_of(embedded: Embedded | None, row: int) -> Meaning | None:
        """The meaning of an item being imported, from its row of the embedded texts."""
        if embedded is None:
            return None
        return Meaning(embedded.embedder.name, embedded.vectors[row])

    def save(
        self,
        text: str,
        kind: MemoryKind = "fact",
        importance: float = 0.5,
        *,
        source: Source | None = None,
        tags: Sequence[str] = (),
        may_change: Callable[[MemoryItem], bool] = lambda _old: True,
        origin: Origin,
        project: str | None = None,
        scopes: Collection[Scope] | None = None,
        confirmed: bool = False,
        client: str | None = None,
    ) -> tuple[MemoryItem, MemoryItem | None]:
        """Add `text` in `project` (None: global), or merge it into the active memory of
        `scopes` (default: any) that says the same (`same_as`).

        Merging replaces that memory's text and kind and keeps the higher importance (with a
        "merged" event), but only if `may_change(old)` agrees (pinned memories change only
        when the user confirms). Returns (the memory now, the merged memory as it was before:
        None when added). `confirmed`, `client`: as for `add`.
        """
        old = self.same_as(text, scopes)
        if old is None:
            added = self.add(
                text,
                kind,
                importance,
                source=source,
                tags=tags,
                origin=origin,
                project=project,
                confirmed=confirmed,
                client=client,
            )
            return added, None
        if (old.text, old.kind) == (clean_text(text), kind) or not may_change(old):
            return old, old
        item = self.merge_into(
            old.id,
            text,
            by=origin,
            source=source,
            kind=kind,
            importance=max(importance, old.importance),
            confirmed=confirmed,
            client=client,
        )
        return item, old

    # -- changing ------------------------------------------------------------------------------

    def update(
        self,
        item_id: str,
        *,
        text: str | None = None,
        kind: MemoryKind | None = None,
        importance: float | None = None,
        tags: Sequence[str] | None = None,
        by: Origin = "user",
        source: Source | None = None,
    ) -> MemoryItem:
        """Change an item's text, kind, importance or tags (an "edited" event says what)."""
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = clean_text(text)
        if kind is not None:
            changes["kind"] = kind
        if importance is not None:
            changes["importance"] = float(importance)
        if tags is not None:
            changes["tags"] = tuple(tags)
        return self._edit(item_id, changes, "edited", by=by, source=source)

    def merge_into(
        self,
        item_id: str,
        text: str,
        *,
        by: Origin,
        source: Source | None = None,
        kind: MemoryKind | None = None,
        importance: float | None = None,
        related_id: str | None = None,
        client: str | None = None,
        confirmed: bool = False,
    ) -> MemoryItem:
        """Refine a memory with a new statement of the same fact (a "merged" event keeps the
        text before); `related_id` names a memory merged in, if it was one (an import);
        `client`, the MCP client that did it; `confirmed`: as for `add`."""
        changes: dict[str, Any] = {"text": clean_text(text)}
        self._refuse_forgotten(changes["text"], by, confirmed)
        if kind is not None:
            changes["kind"] = kind
        if importance is not None:
            changes["importance"] = float(importance)
        return self._edit(
            item_id, changes, "merged", by=by, source=source, related_id=related_id, client=client
        )

    def _edit(
        self,
        item_id: str,
        changes: dict[str, Any],
        kind: EventType,
        *,
        by: Origin,
        source: Source | None,
        related_id: str | None = None,
        client: str | None = None,
    ) -> MemoryItem:
        """Apply changes of content with an "edited" or "merged" event and new vectors."""
        with self._lock:
            old = self._index.item(item_id)
        check_fields(changes.get("kind", old.kind), changes.get("importance", old.importance))
        text = changes.get("text", old.text)
        embedded = self._vectors.embed([text]) if text != old.text else None
        with self._lock:
            old = self._index.item(item_id)
            item = old._replace(updated_at=now_utc(), **changes)
            event = MemoryEvent(
                item_id,
                kind,
                item.updated_at,
                by=by,
                source=source,
                text_before=old.text if text != old.text else None,
                text_after=text if text != old.text else None,
                related_id=related_id,
                reason=what_changed(old, item),
                client=client,
            )
            [slot] = self._commit([item], [event])
            if embedded is not None and self._index.items[slot].text == text:
                self._vectors.store(embedded, [slot])
        if embedded is not None:
            self._vectors.refit()
        self._emit("updated", [item_id])
        return item

    def supersede(
        self,
        old_id: str,
        text: str,
        kind: MemoryKind = "fact",
        importance: float = 0.5,
        *,
        by: Origin,
        source: Source | None = None,
        reason: str,
        valid_from: datetime | None = None,
        tags: Sequence[str] = (),
        client: str | None = None,
        confirmed: bool = False,
    ) -> MemoryItem:
        """Replace a memory by a new fact: the new memory is created (`supersedes` names the
        old one); the old one is archived, stops holding at `valid_from` (default now), links
        to its successor, and keeps its history with a "superseded" event saying why.
        `confirmed`: as for `add`."""
        text = clean_text(text)
        check_fields(kind, importance)
        self._refuse_forgotten(text, by, confirmed)
        embedded = self._vectors.embed([text])
        with self._lock:
            old = self._index.item(old_id)
            new = MemoryItem.new(
                text,
                kind,
                importance,
                source=source,
                tags=tags,
                origin=by,
                valid_from=valid_from,
                supersedes=(old_id,),
                client=client,
                project=old.project,  # a fact's successor holds where it held
            )
            ended = old._replace(
                state="archived",
                valid_to=valid_from or new.created_at,
                superseded_by=new.id,
                updated_at=new.created_at,
            )
            event = MemoryEvent(
                old_id,
                "superseded",
                new.created_at,
                by=by,
                source=source,
                related_id=new.id,
                reason=reason,
                client=client,
            )
            _, slot = self._commit([ended, new], [event, creation(new, accepted=confirmed)])
            if embedded is not None:
                self._vectors.store(embedded, [slot])
        self._vectors.refit()
        self._emit("updated", [old_id])
        self._emit("added", [new.id])
        return new

    def _change(
        self, item_id: str, kind: EventType, by: Origin | None, **changes: Any
    ) -> MemoryItem:
        """Change an item's state or pin with an event of `kind`; a forget leaves a
        tombstone for each text the memory had, a restore lifts them (see `memory_log`)."""
        if kind == "forgotten":
            self._log.read_history()  # the texts it had before
        with self._lock:
            item = self._index.item(item_id)._replace(updated_at=now_utc(), **changes)
            # The meaning of the text it has now from its stored vector (no embedding: forget
            # runs on the GUI thread too); earlier texts by their words.
            meaning = self._stored_meaning(item_id) if kind == "forgotten" else None
            buried = self._log.tombstones_for(item, meaning) if kind == "forgotten" else []
            lifted = [item_id] if kind == "restored" and item_id in self._log.tombstones else []
            event = MemoryEvent(item_id, kind, item.updated_at, by=by)
            self._commit([item], [event], buried=buried, lifted=lifted)
        self._emit("updated", [item_id])
        return item

    def _stored_meaning(self, item_id: str) -> Meaning | None:
        """The meaning of a memory's text from its stored vector, if it has one (under the
        lock)."""
        vectors = self._index.vectors
        vector = None if vectors is None else vectors.vector(self._index.slot(item_id))
        return None if vector is None or vectors is None else Meaning(vectors.name, vector)

    def move(self, item_id: str, project: str | None, *, by: Origin = "user") -> MemoryItem:
        """Give a memory another scope: a project's id, or None to make it global (a "moved"
        event says from where to where). The same item if it is there already."""
        with self._lock:
            old = self._index.item(item_id)
            if old.project == project:
                return old
            item = old._replace(updated_at=now_utc(), project=project)
            event = MemoryEvent(
                item_id,
                "moved",
                item.updated_at,
                by=by,
                project_before=old.project,
                project_after=project,
            )
            self._commit([item], [event])
        self._emit("updated", [item_id])
        return item

    def pin(self, item_id: str, pinned: bool = True, *, by: Origin = "user") -> MemoryItem:
        """Pin (always in the prompt, never decays) or unpin an item."""
        return self._change(item_id, "pinned" if pinned else "unpinned", by, pinned=pinned)

    def forget(self, item_id: str, *, by: Origin = "user") -> MemoryItem:
        """Remove an item from search now and from disk (with its history) at the next open or
        close, leaving tombstones (one for each text it had) that keep the fact from being
        learned again; `restore` (Undo) lifts them."""
        return self._change(item_id, "forgotten", by, state="forgotten")

    def archive(self, item_id: str, *, by: Origin | None = "user") -> MemoryItem:
        """Take an item out of search without forgetting it."""
        return self._change(item_id, "archived", by, state="archived")

    def restore(self, item_id: str, *, by: Origin = "user") -> MemoryItem:
        """Bring a forgotten or archived item back into search; a superseded one holds again
        (its end and its link to a successor are cleared: undoing a supersede)."""
        item = self._change(
            item_id, "restored", by, state="active", valid_to=None, superseded_by=None
        )
        with self._lock:
            slot = self._index.slot(item_id)
            missing = not self._index.has_vector(slot)
        embedded = self._vectors.embed([item.text]) if missing else None
        if embedded is not None:
            with self._lock:
                self._vectors.store(embedded, [slot])
            self._vectors.refit()
        return item

    def mark_used(
        self, ids: Iterable[str], now: datetime | None = None, *, reply: Source | None = None
    ) -> None:
        """Record that the agent used these items (access count, last access, and a "used"
        event naming the `reply`, the assistant message they were in the prompt of)."""
        at = now or now_utc()
        with self._lock:
            known = [i for i in dict.fromkeys(ids) if i in self._index]
            if not known:
                return
            self._log.used(known, at, reply)
            for item_id in known:
                old = self._index.item(item_id)
                self._index.place(old._replace(access_count=old.access_count + 1, last_accessed=at))
        self._emit("used", known)

    def decay(
        self,
        now: datetime | None = None,
        *,
        half_life_days: float,
        archive_below: float = ARCHIVE_BELOW,
    ) -> list[MemoryEvent]:
        """Let unused memories fade: each unpinned active memory's importance is halved for
        every `half_life_days` since its last use or its last decay, whichever is later (so
        a period never counts twice). A memory changes only once it has lost a fifth or more
        (no daily trickle of events); a "decayed" event says by how much and why. One that
        falls below `archive_below` is archived, a few a pass (see `fading`). Pinned memories
        never decay. A clock behind or far ahead of the store is guarded against and reported
        in `clock_warning`. Returns the events, decayed and archived."""
        step = unused_for(half_life_days)
        with self._lock:
            clock = decay_clock(now or now_utc(), self._index.newest_time())
        self.clock_warning = clock.warning
        if clock.warning is not None:
            log.warning("Decay: %s", clock.warning)
        if clock.at is None:
            return []
        at = clock.at
        with self._lock:
            due = self._index.unused_since(at.timestamp() - step)
            items = [self._index.items[slot] for slot in due]
            changed, events = decayed(
                items,
                at,
                half_life_days,
                archive_below,
                earlier=self._index.faded_below(archive_below),
                limit=archive_limit(self._index.active_count()),
            )
            if changed:
                self._commit(changed, events)
        if changed:
            self._emit("updated", [i.id for i in changed])
        return events
