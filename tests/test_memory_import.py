"""Imports and memories: never a duplicate, histories and links kept, forgotten facts stay
forgotten, and an export of the version before (no history) still imports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from assistant.errors import InvalidImportError
from assistant.memory import ConversationStore, SemanticMemory, Source
from assistant.memory.items import MemoryItem
from assistant.transfer import apply_import, export_data, load_import, parse_import
from tests.embedders import HashEmbedder
from tests.store_set import StoreSet

DATA = Path(__file__).parent / "data"
BEFORE_HISTORY = DATA / "assistant-export-2026-11.json"  # made by the version before issue 14


def open_stores(root: Path, embedder: HashEmbedder | None = None) -> StoreSet:
    return StoreSet(ConversationStore(root), SemanticMemory.open(root / "memory", embedder))


@pytest.fixture
def source(tmp_path: Path) -> Iterator[StoreSet]:
    stores = open_stores(tmp_path / "source", HashEmbedder())
    yield stores
    stores.memory.close()


@pytest.fixture
def target(tmp_path: Path) -> Iterator[StoreSet]:
    stores = open_stores(tmp_path / "target", HashEmbedder())
    yield stores
    stores.memory.close()


def types(memory: SemanticMemory, memory_id: str) -> list[str]:
    return [e.type for e in memory.history(memory_id)]


def test_an_export_of_the_version_before_still_imports(target: StoreSet) -> None:
    raw = json.loads(BEFORE_HISTORY.read_text(encoding="utf-8"))
    assert all("history" not in m and "origin" not in m for m in raw["memories"])
    plan = load_import(BEFORE_HISTORY)
    result = apply_import(plan, target, "skip")
    assert (result.conversations_imported, result.memories_imported) == (1, 4)
    memory = target.memory
    for exported in raw["memories"]:
        item = memory.get(exported["id"])
        assert item is not None
        assert (item.text, item.state, item.origin) == (
            exported["text"],
            exported["state"],
            "import",
        )
        assert types(memory, item.id) == ["created"]  # from the item's own fields
        assert memory.history(item.id)[0].at == item.created_at
    [conversation] = raw["conversations"]
    reply = target.conversations.load(conversation["id"]).messages[-1]
    assert list(reply.memory_ids) == conversation["messages"][-1]["memory_ids"]


def fill(memory: SemanticMemory) -> dict[str, MemoryItem]:
    porto = memory.add("The user lives in Porto", source=Source("c1", "m1"), origin="curator")
    memory.update(porto.id, text="The user lives in Porto, Portugal", by="tool")
    lisbon = memory.supersede(
        porto.id,
        "The user lives in Lisbon",
        by="curator",
        reason="moved to Lisbon",
        valid_from=datetime(2026, 3, 1, tzinfo=UTC),
    )
    tea = memory.add("The user likes green tea", kind="preference", origin="tool")
    memory.pin(tea.id)
    memory.mark_used([tea.id], reply=Source("c1", "a1"))
    insight = memory.add(
        "The user is settling in Lisbon",
        kind="insight",
        origin="reflection",
        rests_on=[lisbon.id, porto.id],
    )
    gone = memory.add("The user's bank PIN hint is the cat's name")
    memory.forget(gone.id)
    return {"porto": porto, "lisbon": lisbon, "tea": tea, "insight": insight}


def test_history_and_links_survive_export_and_import(source: StoreSet, target: StoreSet) -> None:
    ids = fill(source.memory)
    data = export_data(source, include_memories=True)
    text = json.dumps(data)
    assert "PIN" not in text and '"tombstone"' not in text
    plan = parse_import(text)
    result = apply_import(plan, target, "skip", keep_pinned=[m.id for m in plan.memories])
    assert (result.memories_imported, result.memories_merged) == (4, 0)
    for key, item in ids.items():
        here, there = source.memory.get(item.id), target.memory.get(item.id)
        assert here == there, key
        assert target.memory.history(item.id) == source.memory.history(item.id), key
    old = target.memory.get(ids["porto"].id)
    assert old is not None and old.superseded_by == ids["lisbon"].id
    assert target.memory.search("where did the user live", include_history=True)
    # And once more: an export of the imported store says the same.
    again = export_data(target, include_memories=True)
    assert again["memories"] == data["memories"]


def _export(memories: list[dict[str, Any]], memory_ids: list[str] | None = None) -> str:
    message = {
        "id": "a1",
        "parent_id": None,
        "role": "assistant",
        "content": "Noted.",
        "created_at": "2026-01-02T10:00:00Z",
    }
    if memory_ids is not None:
        message["memory_ids"] = memory_ids
    conversation = {
        "id": "conv1",
        "title": "Imported",
        "created_at": "2026-01-02T10:00:00Z",
        "updated_at": "2026-01-02T10:00:00Z",
        "summary": "",
        "messages": [message],
    }
    doc = {"format": "assistant.export", "version": 1, "conversations": [conversation]}
    return json.dumps({**doc, "memories": memories})


def _memory(memory_id: str, text: str, **extra: Any) -> dict[str, Any]:
    at = "2026-01-01T09:00:00Z"
    return {
        "id": memory_id,
        "text": text,
        "kind": "fact",
        "importance": 0.5,
        "created_at": at,
        "updated_at": at,
        "last_accessed": at,
        **extra,
    }


@pytest.mark.parametrize("policy", ["skip", "copy"])
def test_an_imported_memory_that_is_here_already_is_merged(target: StoreSet, policy: str) -> None:
    here = target.memory.add("The user likes green tea", importance=0.6)
    history = [
        {"type": "created", "at": "2026-01-01T09:00:00Z", "by": "tool"},
        {"type": "pinned", "at": "2026-01-01T09:30:00Z", "by": "user"},
    ]
    memories = [
        _memory("x-tea", "the user LIKES green teas!", history=history),  # the same stems
        _memory("x-tea-2", "The user likes green tea"),  # and again in the same file
        _memory("x-new", "The user has a cat called Miso"),
    ]
    plan = parse_import(_export(memories, ["x-tea", "x-new", "x-tea-2"]))
    result = apply_import(plan, target, policy)  # type: ignore[arg-type]
    assert (result.memories_imported, result.memories_merged, result.memories_skipped) == (
        1,
        2,
        0,
    )
    assert "2 merged into the same memories here" in result.summary()
    texts = sorted(i.text for i in target.memory.all(None))
    assert texts == ["The user has a cat called Miso", "The user likes green tea"]
    assert target.memory.get(here.id) == here  # the memory here is not changed...
    events = target.memory.history(here.id)  # ...but knows what was merged into it
    assert [(e.type, e.related_id) for e in events] == [  # in time order
        ("pinned", None),  # the imported memory's history (its "created" is the merge)
        ("created", None),
        ("merged", "x-tea"),
        ("merged", "x-tea-2"),
    ]
    assert events[2].by == "import"
    reply = target.conversations.load("conv1").messages[0]
    assert reply.memory_ids == (here.id, "x-new")  # messages name the memory here, once
    # A second import changes nothing: the new one is here by id, the others by text.
    before = target.memory.all(None)
    again = apply_import(plan, target, "skip")
    assert (again.memories_imported, again.memories_skipped, again.memories_merged) == (0, 1, 2)
    assert target.memory.all(None) == before


def test_an_imported_memory_close_in_meaning_is_merged(tmp_path: Path) -> None:
    target = open_stores(tmp_path / "t", HashEmbedder())
    here = target.memory.add("Alice prefers green tea in the morning")
    # The hashed embedder puts texts with the same words close: a cosine above 0.85.
    text = "alice prefers green tea in the morning, always hot"  # 7 words of 9 in common
    plan = parse_import(_export([_memory("x", text)]))
    result = apply_import(plan, target, "copy")
    assert (result.memories_imported, result.memories_merged) == (0, 1)
    assert types(target.memory, here.id) == ["created", "merged"]
    target.memory.close()
    # Without embeddings, the word sets decide (Jaccard >= 0.85): 7/9 is not enough.
    offline = open_stores(tmp_path / "o")
    offline.memory.add("Alice prefers green tea in the morning")
    result = apply_import(plan, offline, "copy")
    assert (result.memories_imported, result.memories_merged) == (1, 0)
    offline.memory.close()


def test_a_forgotten_memory_is_not_brought_back_by_an_import(
    source: StoreSet, target: StoreSet
) -> None:
    ids = fill(source.memory)
    data = export_data(source, include_memories=True)
    target.memory.add("Unrelated")
    apply_import(parse_import(json.dumps(data)), target, "skip")
    target.memory.forget(ids["tea"].id)
    target.memory.close()
    reopened = open_stores(target.conversations.directory.parent, HashEmbedder())
    assert reopened.memory.get(ids["tea"].id) is None  # gone from disk
    renamed = json.dumps(data).replace(ids["tea"].id, "another-id")
    result = apply_import(parse_import(renamed), reopened, "copy")
    assert (result.memories_imported, result.memories_forgotten) == (0, 1)
    assert "1 not brought back as you had made the assistant forget it" in result.summary()
    assert not any("tea" in i.text for i in reopened.memory.all(None))
    reopened.memory.close()


def test_the_preview_counts_a_forgotten_memory_apart(source: StoreSet, target: StoreSet) -> None:
    ids = fill(source.memory)
    data = export_data(source, include_memories=True)
    apply_import(parse_import(json.dumps(data)), target, "skip")
    target.memory.forget(ids["tea"].id)
    plan = parse_import(json.dumps(data))
    # Before a restart the forgotten memory is still in the store: not "already here".
    assert plan.memories_forgotten(target) == [ids["tea"].id]
    assert ids["tea"].id not in plan.memory_conflicts(target)
    target.memory.close()
    reopened = open_stores(target.conversations.directory.parent, HashEmbedder())
    renamed = parse_import(json.dumps(data).replace(ids["tea"].id, "another-id"))
    assert renamed.memories_forgotten(reopened) == ["another-id"]  # by what it says
    assert "another-id" not in renamed.memory_conflicts(reopened)
    reopened.memory.close()


def test_a_bad_history_is_named_and_nothing_is_imported(target: StoreSet) -> None:
    history = [{"type": "created", "at": "2026-01-01T09:00:00Z"}, {"type": "teleported"}]
    with pytest.raises(InvalidImportError, match=r"memories\[0\]\.history\[1\]\.type"):
        parse_import(_export([_memory("x", "text", history=history)]))
    with pytest.raises(InvalidImportError, match=r"memories\[0\]\.history"):
        parse_import(_export([_memory("x", "text", history={"type": "created"})]))
    assert target.memory.all(None) == []
