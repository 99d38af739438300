"""The index cache stores texts as one block and times as microseconds, and hands the index
its arrays and vector keys as columns: opening from it must give exactly what replaying the
log gives."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assistant.memory.items import MemoryItem, Source
from assistant.memory.memory_index import MemoryIndex
from assistant.memory.semantic import SemanticMemory
from tests.embedders import HashEmbedder

START = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)


def _index(mem: SemanticMemory) -> MemoryIndex:
    index: MemoryIndex = mem._index
    return index


def _varied_store(directory: Path) -> list[MemoryItem]:
    """A closed store whose items use every field the cache has a column or a link for."""
    mem = SemanticMemory.open(directory, HashEmbedder())
    items = [
        MemoryItem(
            f"m{i}",
            f"memory {i}: café ☕ naïve 𝄞 {'x' * i}",  # non-ASCII and astral characters
            "fact",
            0.1 * (i % 10),
            START + timedelta(days=i, microseconds=i),
            START + timedelta(days=i, hours=1),
            START + timedelta(days=i % 3, seconds=7 * i),
            pinned=i % 4 == 0,
            access_count=i,
            source=Source("c1", f"msg{i}") if i % 2 else None,
            tags=("a", "b") if i % 3 == 0 else (),
            origin="import",
            valid_from=START - timedelta(days=i) if i % 5 == 0 else None,
            decayed_at=START + timedelta(days=2 * i) if i % 7 == 0 else None,
            project="p1" if i % 6 == 0 else None,
        )
        for i in range(40)
    ]
    mem.insert(items, dedupe=False)
    mem.archive("m3")
    mem.close()
    return mem.all(state=None)


def test_opening_from_the_cache_gives_the_items_arrays_and_vectors_of_a_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _varied_store(tmp_path)

    def no_replay(path: Path, **options: Any) -> object:
        raise AssertionError("the log was replayed")

    monkeypatch.setattr("assistant.memory.jsonl.read", no_replay)
    embedder = HashEmbedder()
    cached = SemanticMemory.open(tmp_path, embedder)
    assert cached.all(state=None) == expected
    assert [type(i.created_at.tzinfo) for i in expected] == [
        type(i.created_at.tzinfo) for i in cached.all(state=None)
    ]
    monkeypatch.undo()
    (tmp_path / "semantic-index.npz").unlink()
    replayed = SemanticMemory.open(tmp_path, embedder)
    a, b = _index(cached), _index(replayed)
    n = a.size
    assert a.items == b.items
    for name in ("_active", "_pinned", "_importance", "_last_used", "_dated", "_scope"):
        assert np.array_equal(getattr(a, name)[:n], getattr(b, name)[:n]), name
    assert a._keys == b._keys
    assert a.embedded_count() == b.embedded_count() == a.active_count()
    assert embedder.texts == 0  # every vector came from the cache, under its key
    for query in ("café memory 7", "naïve 12", "memory"):
        assert cached.search(query, 10, now=START) == replayed.search(query, 10, now=START)


def test_an_item_changed_after_the_cache_gets_its_own_vector_key(tmp_path: Path) -> None:
    _varied_store(tmp_path)
    mem = SemanticMemory.open(tmp_path, HashEmbedder())
    mem.update("m5", text="memory 5, edited")
    appender = mem._log._appender
    assert appender is not None
    appender.close()  # a crash: the cache stays as it was, the log has the edit
    again = SemanticMemory.open(tmp_path, HashEmbedder())
    index = _index(again)
    slot = index.slot("m5")
    assert index.items[slot].text == "memory 5, edited"
    assert not index.has_vector(slot)  # the old text's vector is not taken for the new text
    assert index.has_vector(index.slot("m4"))


@pytest.mark.parametrize("was_on", [True, False])
def test_opening_leaves_the_cycle_collector_as_it_found_it(tmp_path: Path, was_on: bool) -> None:
    _varied_store(tmp_path)
    if not was_on:
        gc.disable()
    try:
        SemanticMemory.open(tmp_path, HashEmbedder()).close()
        assert gc.isenabled() == was_on
    finally:
        gc.enable()
