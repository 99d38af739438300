"""The memory's derived files record what they were derived from: whatever a crash left,
opening rebuilds them from the log, never the log from them. Forget is final; a vector
belongs to its text; what the log holds that cannot be read, or is over the limits, is kept
aside and reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.errors import StorageError
from assistant.memory.index_cache import CACHE_NAME
from assistant.memory.semantic import SemanticMemory
from tests.embedders import HashEmbedder

LOG = "semantic.jsonl"


def copies(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.corrupt-*"))


def test_a_log_compacted_after_its_cache_was_written_never_brings_forgotten_back(
    tmp_path: Path,
) -> None:
    memory = SemanticMemory.open(tmp_path)
    items = [memory.add(f"fact number {n} about the garden") for n in range(6)]
    memory.close()
    old_cache = (tmp_path / CACHE_NAME).read_bytes()
    memory = SemanticMemory.open(tmp_path)
    for item in items[:3]:
        memory.forget(item.id)
    memory.close()  # compacts: the log is now shorter than the old cache reflects
    (tmp_path / CACHE_NAME).write_bytes(old_cache)  # a crash before the new cache was saved
    again = SemanticMemory.open(tmp_path)
    assert {i.id for i in again.all()} == {i.id for i in items[3:]}
    assert again.warnings == []
    assert copies(tmp_path) == []
    again.close()
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert all(b"number %d " % n not in data for n in range(3))


def test_a_log_cut_short_is_still_told_and_restored_from_the_cache(tmp_path: Path) -> None:
    memory = SemanticMemory.open(tmp_path)
    items = [memory.add(f"fact number {n} about the garden") for n in range(6)]
    memory.close()
    log = tmp_path / LOG
    data = log.read_bytes()
    log.write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])
    again = SemanticMemory.open(tmp_path)
    assert {i.id for i in again.all()} == {i.id for i in items}
    assert any("cut short" in w for w in again.warnings)


def test_a_vector_is_never_taken_for_the_text_of_a_later_edit(tmp_path: Path) -> None:
    memory = SemanticMemory.open(tmp_path, HashEmbedder())
    item = memory.add("the cat sleeps on the warm windowsill")
    memory.close()  # caches the vector of that text
    memory = SemanticMemory.open(tmp_path, HashEmbedder())
    memory.update(item.id, text="my brother plays the trumpet in a band")
    del memory  # a crash: the edit is in the log, the vector cache still has the old text's
    again = SemanticMemory.open(tmp_path, HashEmbedder())
    assert again.embedding_status().embedded == 0  # the old vector was not taken
    assert again.embed_missing() == 1
    hits = again.search("trumpet band brother")
    assert [h.item.id for h in hits] == [item.id]


@pytest.mark.parametrize(
    "content", [b"", b"PK\x03\x04broken", b"\0" * 100], ids=["empty", "zip", "zeroed"]
)
def test_an_empty_or_unreadable_index_cache_is_rebuilt_with_a_notice(
    tmp_path: Path, content: bytes
) -> None:
    memory = SemanticMemory.open(tmp_path)
    item = memory.add("the harbour opens at six")
    memory.close()
    (tmp_path / CACHE_NAME).write_bytes(content)
    again = SemanticMemory.open(tmp_path)
    assert [i.id for i in again.all()] == [item.id]
    assert any(CACHE_NAME in w and "rebuilt" in w for w in again.warnings), again.warnings
    assert [h.item.id for h in again.search("harbour")] == [item.id]


@pytest.mark.parametrize("which", ["npy", "json"])
def test_an_empty_vector_cache_is_embedded_again(tmp_path: Path, which: str) -> None:
    memory = SemanticMemory.open(tmp_path, HashEmbedder())
    memory.add("the harbour opens at six")
    memory.close()
    [cache] = tmp_path.glob(f"vectors-*.{which}")
    cache.write_bytes(b"")
    again = SemanticMemory.open(tmp_path, HashEmbedder())
    assert again.embedding_status().embedded == 0
    assert again.embed_missing() == 1


def test_a_log_of_a_newer_version_is_refused_before_anything_is_repaired(tmp_path: Path) -> None:
    memory = SemanticMemory.open(tmp_path)
    memory.add("the harbour opens at six")
    memory.close()
    (tmp_path / CACHE_NAME).unlink()
    log = tmp_path / LOG
    with log.open("ab") as f:
        f.write(json.dumps({"version": 99, "op": "put", "item": {}}).encode() + b"\n")
        f.write(b"not json\n")
        f.write(b'{"version": 99, "op": "pu')
    data = log.read_bytes()
    with pytest.raises(StorageError, match="newer version"):
        SemanticMemory.open(tmp_path)
    assert log.read_bytes() == data
    assert copies(tmp_path) == []


def test_a_damaged_end_of_the_log_is_kept_aside_and_reported(tmp_path: Path) -> None:
    memory = SemanticMemory.open(tmp_path)
    for n in range(5):
        memory.add(f"fact number {n} about the garden")
    memory.close()
    log = tmp_path / LOG
    damaged = log.read_bytes()[:-120] + b"\0" * 120
    log.write_bytes(damaged)
    again = SemanticMemory.open(tmp_path)
    kept = copies(tmp_path)
    assert any(p.read_bytes() == damaged for p in kept)
    assert any("damaged" in w or "cut short" in w for w in again.warnings), again.warnings


def put(item_id: str, text: str) -> bytes:
    stamp = "2025-01-02T03:04:05+00:00"
    item = {
        "id": item_id,
        "text": text,
        "kind": "fact",
        "importance": 0.5,
        "pinned": False,
        "created_at": stamp,
        "updated_at": stamp,
        "last_accessed": stamp,
        "state": "active",
    }
    return json.dumps({"version": 2, "op": "put", "item": item}).encode() + b"\n"


@pytest.mark.parametrize("size", [5_000, 3_000_000])
def test_a_memory_over_the_limit_is_kept_aside_not_loaded(tmp_path: Path, size: int) -> None:
    log = tmp_path / LOG
    data = put("small", "the harbour opens at six") + put("huge", "word " * (size // 5))
    log.write_bytes(data)
    memory = SemanticMemory.open(tmp_path)
    assert [i.id for i in memory.all()] == ["small"]
    kept = copies(tmp_path)
    assert [p.read_bytes() for p in kept] == [data]
    assert any(kept[0].name in w for w in memory.warnings), memory.warnings
