"""Inserting memories as they are (an import): which are new, merged, present or forgotten.

`SemanticMemory.insert` stores items with their ids, times and links; this module decides what
becomes of each item and maps the ids of the merged ones (and the links and events that name
them) to the memories they became.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assistant.memory.items import MemoryEvent, MemoryItem
from assistant.memory.memory_index import MemoryIndex
from assistant.memory.same_memory import same_memory
from assistant.timestamps import now_utc


@dataclass(frozen=True)
class Inserted:
    """What `insert` did with each item (by the id it came with)."""

    stored: list[MemoryItem]  # added as new memories
    ids: dict[str, str]  # item id -> the id of its memory here (stored, merged or present)
    merged: list[str]  # merged into a memory here that says the same
    present: list[str]  # their id is here already: left alone
    forgotten: list[str]  # a fact the user made the assistant forget: not brought back


def sort_imports(
    index: MemoryIndex,
    buried: Callable[[str, int], bool],
    fresh: list[MemoryItem],
    vectors: npt.NDArray[np.float32] | None,
    *,
    done: Inserted,
    dedupe: bool,
) -> tuple[list[tuple[MemoryItem, int]], list[MemoryEvent]]:
    """Decide what becomes of each item with a new id (under the store's lock): the items to
    store (with their rows in `vectors`, unit rows) and the "merged" events of the others;
    `done` learns where each went. `buried(text, row)` says whether a text (with its row in
    `vectors`) was forgotten. An item merges only into a memory of its own scope (global, or
    its project)."""
    new: list[tuple[MemoryItem, int]] = []
    merges: list[MemoryEvent] = []
    now = now_utc()
    for row, item in enumerate(fresh):
        if item.id in index:  # added meanwhile
            done.present.append(item.id)
        elif dedupe and buried(item.text, row):
            done.forgotten.append(item.id)
            del done.ids[item.id]
        else:
            vector = None if vectors is None else vectors[row]
            pending = [
                (i, None if vectors is None else vectors[r])
                for i, r in new
                if i.project == item.project
            ]
            allowed = index.scope_mask({item.project})
            found = (
                same_memory(index, item.text, vector, pending, archived=True, allowed=allowed)
                if dedupe
                else None
            )
            if found is None:
                new.append((item, row))
                continue
            same = found.id
            done.ids[item.id] = same
            done.merged.append(item.id)
            reason = "imported again: the same memory"
            merges.append(
                MemoryEvent(same, "merged", now, by="import", related_id=item.id, reason=reason)
            )
    return new, merges


def reassigned(event: MemoryEvent, ids: dict[str, str]) -> MemoryEvent:
    """An imported event, on the memory its item became, naming memories by their ids here."""
    related = event.related_id
    return dataclasses.replace(
        event,
        memory_id=_mapped(event.memory_id, ids),
        related_id=None if related is None else _mapped(related, ids),
    )


def relinked(item: MemoryItem, ids: dict[str, str]) -> MemoryItem:
    """`item` with its links to other memories following an import's id mapping."""
    successor = item.superseded_by
    return item._replace(
        supersedes=tuple(_mapped(i, ids) for i in item.supersedes),
        superseded_by=None if successor is None else _mapped(successor, ids),
        rests_on=tuple(_mapped(i, ids) for i in item.rests_on),
    )


def _mapped(memory_id: str, ids: dict[str, str]) -> str:
    return ids.get(memory_id, memory_id)
