"""Semantic memory: items, hybrid search, persistence, recovery, re-embedding, threads."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from assistant.errors import ProviderError, StorageError
from assistant.fileio import atomic_write_json
from assistant.memory import jsonl
from assistant.memory.bm25 import COMMON_FROM
from assistant.memory.embedding import EMBED_BATCH
from assistant.memory.items import MemoryChange, MemoryItem, Source
from assistant.memory.memory_log import LOG_NAME
from assistant.memory.projection import Projection
from assistant.memory.quantize import stored
from assistant.memory.ranking import SearchConfig
from assistant.memory.semantic import SemanticMemory
from assistant.memory.text import query_terms, terms
from assistant.memory.vectors import Refit, VectorMatrix, cache_paths
from assistant.timestamps import now_utc
from tests.clusters import DIM, centres, clustered
from tests.embedders import HashEmbedder, hashed_vector


@pytest.fixture
def mem_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


def test_add_and_search_keyword_only(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    tea = mem.add("Alice prefers tea", kind="preference", importance=0.7)
    mem.add("Bob likes coffee in the morning", kind="preference")
    mem.add("The project deadline is Friday", kind="task", importance=0.9)
    hits = mem.search("what does Alice drink", k=5)
    assert [h.item.id for h in hits] == [tea.id]
    assert hits[0].keyword_rank == 1
    assert hits[0].vector_rank is None
    assert mem.search("weather in Tokyo") == []
    assert mem.search("what is the") == []  # stop words alone find nothing
    assert mem.embedding_status().keyword_only


def test_hybrid_search_fuses_both_rankings(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    tea = mem.add("Alice prefers green tea")
    mem.add("Bob likes coffee")
    hits = mem.search("green tea please", k=3)
    assert hits[0].item.id == tea.id
    assert hits[0].keyword_rank == 1
    assert hits[0].vector_rank == 1
    assert hits[0].similarity is not None and hits[0].similarity > 0.5
    assert not mem.embedding_status().keyword_only


def test_validation(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    with pytest.raises(ValueError, match="kind"):
        mem.add("x", kind="gossip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="between 0 and 1"):
        mem.add("x", importance=1.5)
    with pytest.raises(ValueError, match="needs some text"):
        mem.add("   ")
    with pytest.raises(KeyError):
        mem.pin("nope")
    with pytest.raises(ValueError, match="embedder"):
        mem.add("x", vector=[1.0, 0.0])


def test_persistence_round_trip(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    source = Source("conv-1", "msg-1")
    a = mem.add("Alice prefers tea", kind="preference", importance=0.7, source=source, tags=["t"])
    b = mem.add("Bob likes coffee")
    c = mem.add("Carol lives in Lyon")
    mem.update(a.id, text="Alice prefers green tea", importance=0.8)
    mem.pin(b.id)
    mem.mark_used([a.id, "unknown"])
    mem.archive(c.id)
    before = {i.id: i for i in mem.all(state=None)}
    mem.close()
    with pytest.raises(StorageError):
        mem.add("after close")

    again = SemanticMemory.open(mem_dir)
    assert {i.id: i for i in again.all(state=None)} == before
    assert again.get(a.id) == before[a.id]
    assert before[a.id].access_count == 1
    assert before[a.id].source == source
    assert [i.id for i in again.pinned()] == [b.id]
    assert len(again) == 2
    assert again.search("green tea")[0].item.id == a.id
    assert again.search("Lyon") == []  # archived


def test_forget_hides_at_once_and_leaves_disk_at_close(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    secret = mem.add("My bank PIN is 4711")
    mem.add("I like hiking")
    mem.forget(secret.id)
    assert mem.search("bank PIN") == []
    assert mem.get(secret.id) is not None  # undo is possible until the app quits
    mem.restore(secret.id)
    assert mem.search("bank PIN")[0].item.id == secret.id
    mem.forget(secret.id)
    assert [i.id for i in mem.all(state="forgotten")] == [secret.id]
    mem.close()
    assert "4711" not in (mem_dir / LOG_NAME).read_text()
    again = SemanticMemory.open(mem_dir)
    assert again.get(secret.id) is None
    assert len(again) == 1


def test_forgotten_items_are_purged_on_open_after_a_crash(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    secret = mem.add("forget this secret")
    mem.forget(secret.id)
    # no close(): the app crashed
    again = SemanticMemory.open(mem_dir)
    assert again.get(secret.id) is None
    assert "secret" not in (mem_dir / LOG_NAME).read_text()


def test_items_order_pinned_first_then_newest(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    first = mem.add("first")
    second = mem.add("second")
    third = mem.add("third")
    mem.pin(first.id)
    assert [i.id for i in mem.all()] == [first.id, third.id, second.id]


def test_mark_used_and_decay(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    old = now_utc() - timedelta(days=200)
    stale = mem.add("stale trivia", importance=0.1)
    kept_pinned = mem.add("pinned trivia", importance=0.1, pinned=True)
    important = mem.add("important fact", importance=0.9)
    recent = mem.add("recent trivia", importance=0.1)
    mem.mark_used([stale.id, kept_pinned.id, important.id], now=old)
    mem.mark_used([recent.id])
    events = mem.decay(half_life_days=180)
    assert [(e.memory_id, e.type) for e in events] == [
        (stale.id, "decayed"),
        (stale.id, "archived"),
        (important.id, "decayed"),
    ]
    assert mem.get(stale.id).state == "archived"  # type: ignore[union-attr]
    assert mem.get(important.id).state == "active"  # type: ignore[union-attr]
    assert mem.search("stale trivia")[0].item.id != stale.id
    assert mem.decay(half_life_days=180) == []
    assert mem.get(recent.id).access_count == 1  # type: ignore[union-attr]


def test_recency_and_importance_break_ties(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    low = mem.add("meeting notes about budget", importance=0.1)
    high = mem.add("meeting notes about budget", importance=0.9)
    assert mem.search("budget meeting")[0].item.id == high.id
    mem.update(high.id, importance=0.1)
    mem.mark_used([high.id], now=now_utc() - timedelta(days=300))
    assert mem.search("budget meeting")[0].item.id == low.id


def test_a_named_period_favours_memories_that_hold_from_it(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    alps = mem.add("Went hiking in the Alps", valid_from=datetime(2023, 5, 20, tzinfo=UTC)).id
    wales = mem.add("Went hiking in Wales", valid_from=datetime(2023, 8, 2, tzinfo=UTC)).id
    sea = mem.add("Went hiking by the sea").id  # learned now, no other date
    assert mem.search("hiking in August 2023")[0].item.id == wales
    assert mem.search("hiking in May 2023")[0].item.id == alps
    september = datetime(2023, 9, 1, tzinfo=UTC)
    assert mem.search("hiking in May", now=september)[0].item.id == alps  # against `now`
    assert mem.search("hiking last month", now=september)[0].item.id == wales
    assert mem.search("hiking this week")[0].item.id == sea
    plain = SemanticMemory.open(mem_dir.parent / "plain", config=SearchConfig(date_weight=0.0))
    for item in (mem.get(alps), mem.get(wales)):
        assert item is not None
        plain.insert([item])
    in_may, in_august = plain.search("hiking in May 2023"), plain.search("hiking in August 2023")
    assert [h.item.id for h in in_may] == [h.item.id for h in in_august]  # dates not weighed


def test_find_similar_with_and_without_embeddings(mem_dir: Path) -> None:
    plain = SemanticMemory.open(mem_dir / "plain")
    a = plain.add("Alice prefers green tea")
    plain.add("Bob likes coffee")
    assert [i.id for i, _ in plain.find_similar("alice prefers green tea!", 0.8)] == [a.id]
    assert plain.find_similar("Alice hates tea", 0.8) == []

    dense = SemanticMemory.open(mem_dir / "dense", HashEmbedder())
    b = dense.add("Alice prefers green tea")
    found = dense.find_similar("Alice prefers green tea", 0.95)
    assert [i.id for i, _ in found] == [b.id]
    assert found[0][1] == pytest.approx(1.0, abs=1e-5)


def test_subscribers_hear_changes(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    changes: list[MemoryChange] = []
    unsubscribe = mem.subscribe(changes.append)
    item = mem.add("x marks the spot")
    mem.pin(item.id)
    mem.mark_used([item.id])
    mem.forget(item.id)
    unsubscribe()
    mem.restore(item.id)
    assert [(c.kind, c.ids) for c in changes] == [
        ("added", (item.id,)),
        ("updated", (item.id,)),
        ("used", (item.id,)),
        ("updated", (item.id,)),
    ]


# -- embeddings ------------------------------------------------------------------------------


def test_failing_embedder_falls_back_to_keywords(mem_dir: Path) -> None:
    embedder = HashEmbedder()
    embedder.fail = True
    mem = SemanticMemory.open(mem_dir, embedder)
    item = mem.add("Alice prefers tea")
    status = mem.embedding_status()
    assert status.keyword_only
    assert status.error is not None and "127.0.0.1" in status.error
    assert mem.search("alice")[0].item.id == item.id
    embedder.fail = False
    progress: list[tuple[int, int]] = []
    assert mem.embed_missing(lambda done, total: progress.append((done, total))) == 1
    assert progress[0] == (0, 1)
    assert progress[-1] == (1, 1)
    status = mem.embedding_status()
    assert (status.embedded, status.total, status.error) == (1, 1, None)


def test_embed_missing_raises_provider_error(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    mem.add("one")
    embedder = HashEmbedder()
    embedder.fail = True
    mem.set_embedder(embedder)
    with pytest.raises(ProviderError):
        mem.embed_missing()
    assert mem.embedding_status().error is not None


def test_backfill_then_cache_is_reused(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    for i in range(600):
        mem.add(f"note number {i} about topic {i % 7}")
    embedder = HashEmbedder()
    mem.set_embedder(embedder)
    assert mem.embedding_status().embedded == 0
    progress: list[tuple[int, int]] = []
    assert mem.embed_missing(lambda d, t: progress.append((d, t))) == 600
    steps = [*range(0, 600, EMBED_BATCH), 600]
    assert progress == [(done, 600) for done in steps]  # after each batch
    assert embedder.calls == len(steps) - 1
    mem.close()

    counting = HashEmbedder()
    again = SemanticMemory.open(mem_dir, counting)
    assert again.embedding_status().embedded == 600
    assert again.embed_missing() == 0
    assert counting.calls == 0


def test_embed_missing_can_be_cancelled(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    for i in range(600):
        mem.add(f"note {i}")
    mem.set_embedder(HashEmbedder())
    calls = iter([False, True])
    assert mem.embed_missing(cancel=lambda: next(calls)) == EMBED_BATCH
    assert mem.embedding_status().embedded == EMBED_BATCH


@pytest.mark.parametrize(("name", "dim"), [("other-model", 64), ("hash", 32)])
def test_new_model_or_dimension_triggers_reembedding(mem_dir: Path, name: str, dim: int) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder("hash", 64))
    items = [mem.add(f"memory {i} about cats") for i in range(10)]
    mem.close()

    other = HashEmbedder(name, dim)
    again = SemanticMemory.open(mem_dir, other)
    assert again.search("cats")  # keyword search works; the query's vector shows the change
    assert again.embedding_status().embedded == 0
    assert again.embed_missing() == 10
    assert again.embedding_status().embedded == 10
    assert again.search("memory 3 cats", k=1)[0].item.id == items[3].id
    assert again.search("memory 3 cats")[0].vector_rank is not None


def test_dimension_change_mid_session_reembeds_everything(mem_dir: Path) -> None:
    embedder = HashEmbedder("model", 64)
    mem = SemanticMemory.open(mem_dir, embedder)
    for i in range(5):
        mem.add(f"fact {i}")
    embedder.dim = 32  # the server now serves another model under the same name
    mem.add("fact 5")
    assert mem.embedding_status().embedded == 1
    assert mem.embed_missing() == 5
    assert mem.embedding_status().embedded == 6


@pytest.mark.parametrize("damaged", ["npy", "json", "truncated"])
def test_corrupt_vector_cache_is_rebuilt(mem_dir: Path, damaged: str) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    mem.add("a memory")
    mem.close()
    (npy,) = mem_dir.glob("vectors-*.npy")
    if damaged == "npy":
        npy.write_bytes(b"garbage")
    elif damaged == "json":
        npy.with_suffix(".json").write_text("{")
    else:
        stat = npy.stat()
        with npy.open("r+b") as f:
            f.truncate(stat.st_size - 8)
        os.utime(npy, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = SemanticMemory.open(mem_dir, HashEmbedder())
    assert again.embedding_status().embedded == 0
    assert again.embed_missing() == 1


def test_copied_vector_cache_is_verified_and_kept(mem_dir: Path, tmp_path: Path) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    for i in range(20):
        mem.add(f"memory {i}")
    mem.close()
    copy = tmp_path / "restored"
    shutil.copytree(mem_dir, copy, copy_function=shutil.copyfile)  # new times, same bytes
    (npy,) = copy.glob("vectors-*.npy")
    meta = npy.with_suffix(".json")
    assert json.loads(meta.read_text())["npy"]["mtime_ns"] != npy.stat().st_mtime_ns

    counting = HashEmbedder()
    again = SemanticMemory.open(copy, counting)
    assert again.embedding_status().embedded == 20
    assert again.embed_missing() == 0 and counting.calls == 0
    again.close()  # writes the cache again, with the copy's times
    assert json.loads(meta.read_text())["npy"]["mtime_ns"] == npy.stat().st_mtime_ns


def test_vector_cache_of_the_same_write_opens_without_a_checksum(
    mem_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    mem.add("a memory")
    mem.close()

    def no_crc(data: object, value: int = 0) -> int:
        raise AssertionError("the rows were checksummed on the fast path")

    monkeypatch.setattr("assistant.memory.vectors.zlib.crc32", no_crc)
    again = SemanticMemory.open(mem_dir, HashEmbedder())
    assert again.embedding_status().embedded == 1


def test_copied_vector_cache_with_other_bytes_is_rebuilt(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    mem.add("a memory")
    mem.close()
    (npy,) = mem_dir.glob("vectors-*.npy")
    data = bytearray(npy.read_bytes())
    data[-1] ^= 0xFF  # same size, another vector
    npy.write_bytes(bytes(data))
    again = SemanticMemory.open(mem_dir, HashEmbedder())
    assert again.embedding_status().embedded == 0
    assert again.embed_missing() == 1


# -- two-stage dense search -------------------------------------------------------------------

# The projection from 101 vectors on; 100 candidates rescored (of 450: the two-stage path).
TWO_STAGE = SearchConfig(exact_up_to=100, rescore_factor=2)
EXACT = SearchConfig(exact_up_to=10**9)
NOTE_WORDS = [f"w{i}" for i in range(40)]
Query = tuple[str, npt.NDArray[np.float32]]


def projected_store(directory: Path, n: int = 450) -> tuple[SemanticMemory, list[Query]]:
    """A store of `n` memories with clustered random vectors, past the exact threshold."""
    rng = np.random.default_rng(11)
    topics = centres(rng, 8)
    mem = SemanticMemory.open(directory, HashEmbedder("hash", DIM), TWO_STAGE)
    for i, vector in enumerate(clustered(rng, n, topics)):
        text = f"note{i} " + " ".join(rng.choice(NOTE_WORDS, 4).tolist())
        mem.add(text, importance=float(rng.random()), vector=vector)
    queries = [
        (" ".join(rng.choice(NOTE_WORDS, 3).tolist()), vector)
        for vector in clustered(rng, 20, topics)
    ]
    return mem, queries


def assert_same_as_exact(mem: SemanticMemory, queries: list[Query]) -> None:
    estimated: list[int] = []
    project_query = Projection.project_query

    def counting(self: Projection, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        estimated.append(1)
        return project_query(self, query)

    for text, vector in queries:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Projection, "project_query", counting)
            hits = mem.search(text, k=10, query_vector=vector)
        exact = mem.search(text, k=10, query_vector=vector, config=EXACT)
        assert [h.item.id for h in hits] == [h.item.id for h in exact]
        assert [h.vector_rank for h in hits] == [h.vector_rank for h in exact]
        assert [h.similarity for h in hits] == pytest.approx([h.similarity for h in exact])
        assert [h.score for h in hits] == pytest.approx([h.score for h in exact])
    assert len(estimated) == len(queries)  # every search took the two-stage path


def vectors_of(mem: SemanticMemory) -> VectorMatrix:
    assert mem._index.vectors is not None
    return mem._index.vectors


def assert_projected_rows_in_sync(matrix: VectorMatrix) -> None:
    assert matrix.projection is not None
    slots = np.flatnonzero(matrix.present(len(matrix._has)))
    expected = matrix.projection.project(matrix._m[slots])
    # The cached projected rows are float16.
    np.testing.assert_allclose(matrix._projected[slots], expected, atol=1e-3)


def test_two_stage_search_equals_exact_search(mem_dir: Path, fits: list[int]) -> None:
    mem, queries = projected_store(mem_dir)
    assert fits == [101, 404]  # as vectors were stored, not at the first search
    assert_same_as_exact(mem, queries)
    needle = mem.add("a needle in the haystack")  # embedded: far from every other vector
    found = mem.find_similar("a needle in the haystack", 0.95)
    assert [(i.id, round(sim, 5)) for i, sim in found] == [(needle.id, 1.0)]
    assert fits == [101, 404]


@pytest.mark.timeout(600)  # the waits below guard against a hang, not for speed
def test_the_store_stays_usable_while_a_projection_is_fitted(
    mem_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(13)
    vectors = clustered(rng, 130, centres(rng, 8))
    mem = SemanticMemory.open(mem_dir, HashEmbedder("hash", DIM), TWO_STAGE)
    for vector in vectors[:100]:
        mem.add("before the fit", vector=vector)
    assert vectors_of(mem).projection is None
    started, release = threading.Event(), threading.Event()
    compute = Refit.compute

    def slow_compute(self: Refit) -> tuple[Projection, npt.NDArray[np.float32]]:
        started.set()
        assert release.wait(300)  # 29 fsynced adds ran over 10 s once on a machine busy 8x over
        return compute(self)

    monkeypatch.setattr(Refit, "compute", slow_compute)
    fitting = threading.Thread(target=mem.add, args=("the 101st",), kwargs={"vector": vectors[100]})
    fitting.start()
    assert started.wait(300)
    # The fit holds no lock: reads, searches and more adds go on meanwhile.
    meanwhile = [mem.add(f"during the fit {i}", vector=v) for i, v in enumerate(vectors[101:])]
    assert mem.get(meanwhile[0].id) == meanwhile[0]
    assert mem.search("during fit", k=3, query_vector=vectors[101])[0].item.id == meanwhile[0].id
    release.set()
    fitting.join(300)
    matrix = vectors_of(mem)
    assert matrix.projection is not None
    assert_projected_rows_in_sync(matrix)  # the rows set during the fit were projected too


def test_projection_follows_adds_updates_and_forgets(mem_dir: Path) -> None:
    mem, queries = projected_store(mem_dir)
    items = mem.all()
    rng = np.random.default_rng(12)
    for item in items[:5]:
        mem.update(item.id, text=item.text + " changed")  # embedded anew by the HashEmbedder
    for item in items[5:10]:
        mem.forget(item.id)
    mem.restore(items[5].id)
    mem.add("fresh memory", vector=rng.standard_normal(DIM))
    assert_projected_rows_in_sync(vectors_of(mem))
    assert_same_as_exact(mem, queries)


def test_projection_cache_is_reused(mem_dir: Path, fits: list[int]) -> None:
    mem, queries = projected_store(mem_dir)
    mem.forget(mem.all()[-1].id)  # its row is left out when reopened
    before = vectors_of(mem).projection
    mem.close()
    paths = cache_paths(mem_dir, "hash")
    meta = json.loads(paths.meta.read_text())
    assert meta["projection"]["fitted"] == 404
    assert paths.projection.exists()

    del fits[:]
    embedder = HashEmbedder("hash", DIM)
    again = SemanticMemory.open(mem_dir, embedder, TWO_STAGE)
    matrix = vectors_of(again)
    assert matrix.projection is not None and before is not None
    np.testing.assert_array_equal(matrix.projection.basis, before.basis)
    np.testing.assert_array_equal(matrix.projection.mean, before.mean)
    assert_projected_rows_in_sync(matrix)
    assert_same_as_exact(again, queries)
    assert (fits, embedder.calls) == ([], 0)
    again.add("one more", vector=np.ones(DIM))  # no refit before 4 x 404 vectors
    assert fits == []


def test_copied_projection_cache_is_kept(mem_dir: Path, tmp_path: Path, fits: list[int]) -> None:
    mem, queries = projected_store(mem_dir)
    mem.close()
    copy = tmp_path / "restored"
    shutil.copytree(mem_dir, copy, copy_function=shutil.copyfile)  # new times, same bytes
    del fits[:]
    again = SemanticMemory.open(copy, HashEmbedder("hash", DIM), TWO_STAGE)
    assert_same_as_exact(again, queries)
    assert fits == []


def test_equal_similarities_rank_alike_on_both_paths(mem_dir: Path) -> None:
    """Equally relevant items are ordered by their boosts, here recency: newest first."""
    mem, _ = projected_store(mem_dir)
    twin = np.ones(DIM, dtype=np.float32)
    twins = [mem.add(f"twin {i}", vector=twin).id for i in range(30)]
    for config in (TWO_STAGE, EXACT):
        hits = mem.search("twin", k=5, query_vector=twin, config=config)
        assert [h.item.id for h in hits] == twins[::-1][:5]


@pytest.mark.timeout(600)  # a fit ran past 60 s once in numpy's QR with both cores busy
@pytest.mark.parametrize("damage", ["garbage", "stale", "missing", "shape", "old cache"])
def test_bad_projection_cache_is_fitted_again(
    mem_dir: Path, fits: list[int], damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    mem, queries = projected_store(mem_dir)
    mem.close()
    paths = cache_paths(mem_dir, "hash")
    stat = paths.projection.stat()
    if damage == "garbage":  # same size and time: only the contents tell
        paths.projection.write_bytes(b"x" * stat.st_size)
        os.utime(paths.projection, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    elif damage == "stale":  # another write (same size): only the time tells
        with np.load(paths.projection) as arrays:
            np.savez(paths.projection, **{k: v + 1 for k, v in arrays.items()})
        os.utime(paths.projection, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    elif damage == "missing":
        paths.projection.unlink()
    else:
        meta = json.loads(paths.meta.read_text())
        if damage == "shape":
            zeros = np.zeros((DIM, 4), dtype=np.float32)
            np.savez(paths.projection, mean=zeros[:, 0], basis=zeros, rows=zeros)
            new = paths.projection.stat()
            meta["projection"].update(size=new.st_size, mtime_ns=new.st_mtime_ns)
        else:  # written before there were projections
            del meta["projection"]
            paths.projection.unlink()
        atomic_write_json(paths.meta, meta)

    del fits[:]
    embedder = HashEmbedder("hash", DIM)
    again = SemanticMemory.open(mem_dir, embedder, TWO_STAGE)
    assert vectors_of(again).projection is None
    assert again.embedding_status().embedded == 450  # the vectors themselves are kept
    warned = sum("cached projection" in r.getMessage() for r in caplog.records)
    assert warned == (damage != "old cache")
    assert_same_as_exact(again, queries)  # the first search fits it again
    assert (fits, embedder.calls) == ([450], 0)
    assert_projected_rows_in_sync(vectors_of(again))
    again.close()  # saves the projection fitted by the search
    assert vectors_of(SemanticMemory.open(mem_dir, embedder, TWO_STAGE)).projection is not None


def test_index_cache_opens_without_replaying_the_log(
    mem_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = SemanticMemory.open(mem_dir)
    a = mem.add("Alice prefers green tea", kind="preference", source=Source("c", "m"), tags=["x"])
    b = mem.add("Bob likes coffee")
    gone = mem.add("forget me")
    mem.mark_used([a.id])
    mem.pin(b.id)
    mem.forget(gone.id)
    mem.close()
    expected = mem.all(state="active")

    def no_replay(path: Path, **options: Any) -> object:
        raise AssertionError("the log was replayed")

    monkeypatch.setattr("assistant.memory.jsonl.read", no_replay)
    cached = SemanticMemory.open(mem_dir)
    assert cached.all(state=None) == expected
    assert cached.search("green tea")[0].item.id == a.id
    c = cached.add("Carol cycles to work")
    assert cached.search("cycles")[0].item.id == c.id
    monkeypatch.undo()
    # Opened again without close (a crash): the log has changed, so the cache is not used.
    replayed = SemanticMemory.open(mem_dir)
    assert {i.id for i in replayed.all()} == {a.id, b.id, c.id}


@pytest.mark.parametrize("changed", [False, True])
def test_index_cache_of_a_copied_log_is_used_if_the_bytes_match(
    mem_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: bool
) -> None:
    mem = SemanticMemory.open(mem_dir)
    items = [mem.add(f"Memory {i} about tea") for i in range(5)]
    mem.close()
    copy = tmp_path / "restored"
    shutil.copytree(mem_dir, copy, copy_function=shutil.copyfile)  # new inode and times
    if changed:  # same size, another text
        log_path = copy / LOG_NAME
        log_path.write_bytes(log_path.read_bytes().replace(b"Memory 3", b"Memory 9"))
    replays: list[Path] = []
    read = jsonl.read

    def counted(path: Path, **options: Any) -> jsonl.Loaded:
        replays.append(path)
        return read(path, **options)

    monkeypatch.setattr("assistant.memory.jsonl.read", counted)
    again = SemanticMemory.open(copy)
    assert len(replays) == int(changed)
    texts = [i.text for i in again.all(state=None)]
    assert ("Memory 9 about tea" in texts) == changed
    assert len(texts) == len(items)


def test_unreadable_index_cache_falls_back_to_the_log(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("kept safe")
    mem.close()
    (mem_dir / "semantic-index.npz").write_bytes(b"not a zip file")
    again = SemanticMemory.open(mem_dir)
    assert [i.id for i in again.all()] == [item.id]


# -- files -----------------------------------------------------------------------------------


def test_torn_last_line_is_dropped(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    kept = mem.add("kept memory")
    mem.close()
    with (mem_dir / LOG_NAME).open("ab") as f:
        f.write(b'{"version":1,"op":"put","item":{"id":"torn","te')
    again = SemanticMemory.open(mem_dir)
    assert [i.id for i in again.all()] == [kept.id]
    again.add("next memory")
    again.close()
    assert len(SemanticMemory.open(mem_dir)) == 2
    assert list(mem_dir.glob("*.corrupt-*")) == []


def test_corrupt_lines_are_moved_aside_records_not_understood_kept(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    a = mem.add("first memory")
    mem.close()
    log = mem_dir / LOG_NAME
    good = log.read_text()
    bad_record = json.dumps({"version": 1, "op": "put", "item": {"id": "x", "kind": "nonsense"}})
    log.write_text("not json at all\n" + good + bad_record + "\n")
    again = SemanticMemory.open(mem_dir)
    assert [i.id for i in again.all()] == [a.id]
    assert len(again.warnings) == 2
    [aside] = sorted(mem_dir.glob(f"{LOG_NAME}.corrupt-*"))
    assert "not json at all" in aside.read_text()
    again.close()
    assert "not json at all" not in log.read_text()
    kept = [json.loads(line) for line in log.read_text().splitlines()]
    assert json.loads(bad_record) in kept  # as it was, for a version that reads it
    reopened = SemanticMemory.open(mem_dir)
    assert len(reopened.warnings) == 1 and "cannot read" in reopened.warnings[0]


def test_log_is_compacted_when_mostly_dead(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("counter")
    for _ in range(1500):
        mem.mark_used([item.id])
    lines = (mem_dir / LOG_NAME).read_text().splitlines()
    assert len(lines) < 1000
    again = SemanticMemory.open(mem_dir)
    assert again.get(item.id).access_count == 1500  # type: ignore[union-attr]


_WRITER = """
import sys
from pathlib import Path
from typing import Any
from assistant.memory.semantic import SemanticMemory
mem = SemanticMemory.open(Path(sys.argv[1]))
i = 0
while True:
    item = mem.add(f"memory number {i} " + "padding " * 50)
    print(item.id, flush=True)
    i += 1
"""


@pytest.mark.slow
def test_sigkill_while_appending_loses_no_acknowledged_add(mem_dir: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(mem_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
    )
    assert proc.stdout is not None
    acknowledged = []
    while len(acknowledged) < 300 and (line := proc.stdout.readline()):
        acknowledged.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    mem = SemanticMemory.open(mem_dir)
    ids = {i.id for i in mem.all()}
    assert len(acknowledged) == 300
    assert set(acknowledged) <= ids
    mem.add("the store still works")


# -- threads ---------------------------------------------------------------------------------


def test_concurrent_add_and_search(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        try:
            for i in range(300):
                item = mem.add(f"alpha beta note {i}")
                if i % 3 == 0:
                    mem.forget(item.id)
                if i % 5 == 0:
                    mem.update(item.id, text=f"gamma note {i}")
        except BaseException as exc:
            errors.append(exc)
        finally:
            stop.set()

    def reader() -> None:
        try:
            while not stop.is_set():
                for hit in mem.search("alpha note", k=10):
                    assert hit.item.state == "active"
                mem.embedding_status()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    assert len(mem) == 200


# -- the index equals a brute-force reference --------------------------------------------------

WORDS = ["tea", "coffee", "alice", "bob", "paris", "likes", "the", "blue", "car", "dog"]
TEXTS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), TEXTS),
        st.tuples(st.just("update"), st.integers(0, 30), TEXTS),
        st.tuples(st.just("pin"), st.integers(0, 30), st.booleans()),
        st.tuples(st.just("forget"), st.integers(0, 30)),
        st.tuples(st.just("restore"), st.integers(0, 30)),
        st.tuples(st.just("compact")),
        st.tuples(st.just("reopen")),
    ),
    max_size=30,
)


def reference_search(items: list[MemoryItem], query: str) -> dict[str, float]:
    """Search the slow, obvious way: full rankings in Python loops, fused the same way.

    `items` come in creation order, which is how the store breaks ties between equal scores.
    """
    config = SearchConfig()
    active = [i for i in items if i.state == "active"]
    tokens, wanted = query_terms(query)
    if not active or not wanted:
        return {}
    docs = [terms(i.text) for i in active]
    df = {t: sum(1 for d in docs if t in d) for t in wanted}
    rare = {t for t in wanted if df[t] > 0 and 2 * df[t] <= len(docs)}  # not in most items
    informative = rare if rare and len(docs) >= COMMON_FROM else set(wanted)
    bm25 = BM25Okapi(docs, k1=config.bm25_k1, b=config.bm25_b)
    scores = bm25.get_scores(tokens)
    lexical = [
        (float(s), i) for s, i, d in zip(scores, active, docs, strict=True) if informative & set(d)
    ]
    lexical.sort(key=lambda pair: -pair[0])
    lexical = lexical[:50]
    q = hashed_vector(query, 64)
    dense = [(float(np.dot(q, stored(hashed_vector(i.text, 64)[None])[0])), i) for i in active]
    dense = [(s, i) for s, i in dense if s >= 0.3]
    dense.sort(key=lambda pair: -pair[0])
    dense = dense[:50]
    if not lexical and not dense:
        return {}
    weight = config.dense_weight if lexical and dense else float(bool(dense))
    fused: dict[str, float] = {}
    for share, ranking in ((1 - weight, lexical), (weight, dense)):
        best = max((s for s, _ in ranking), default=0.0)
        for score, item in ranking:
            part = max(score, 0.0) / best if best > 0 else 1.0
            fused[item.id] = fused.get(item.id, 0.0) + share * part
    by_id = {i.id: i for i in active}
    now = now_utc().timestamp()
    return {
        item_id: relevance
        + 0.1 * by_id[item_id].importance
        + 0.05 * math.exp(-max(0.0, now - by_id[item_id].last_accessed.timestamp()) / 86400 / 30)
        for item_id, relevance in fused.items()
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS, query=TEXTS)
def test_random_operations_match_reference(tmp_path: Path, ops: list[tuple], query: str) -> None:
    directory = tmp_path / f"run-{time.monotonic_ns()}"
    embedder = HashEmbedder()
    mem = SemanticMemory.open(directory, embedder)
    expected: dict[str, dict[str, object]] = {}
    ids: list[str] = []
    for op in ops:
        name = op[0]
        target = ids[op[1] % len(ids)] if len(op) > 1 and ids and isinstance(op[1], int) else None
        if name == "add":
            item = mem.add(op[1])
            ids.append(item.id)
            expected[item.id] = {"text": op[1], "pinned": False, "state": "active"}
        elif target is None and name in ("update", "pin", "forget", "restore"):
            continue
        elif name == "update":
            mem.update(target, text=op[2])
            expected[target]["text"] = op[2]
        elif name == "pin":
            mem.pin(target, op[2])
            expected[target]["pinned"] = op[2]
        elif name == "forget":
            mem.forget(target)
            expected[target]["state"] = "forgotten"
        elif name == "restore":
            mem.restore(target)
            expected[target]["state"] = "active"
        elif name == "compact":
            mem.compact()
        elif name == "reopen":
            mem.close()
            mem = SemanticMemory.open(directory, embedder)
            expected = {i: e for i, e in expected.items() if e["state"] != "forgotten"}
            ids = [i for i in ids if i in expected]
    items = sorted(mem.all(state=None), key=lambda i: ids.index(i.id))  # creation order
    got = {i.id: {"text": i.text, "pinned": i.pinned, "state": i.state} for i in items}
    assert got == expected
    assert {i.id for i in mem.pinned()} == {
        i for i, e in expected.items() if e["pinned"] and e["state"] == "active"
    }
    assert len(mem) == sum(1 for e in expected.values() if e["state"] == "active")
    hits = mem.search(query, k=5)
    reference = reference_search(items, query)
    # Items with equal scores may come back in either order: compare scores, and each hit's
    # score with the reference score of the same item.
    best = sorted(reference.values(), reverse=True)[:5]
    assert [h.score for h in hits] == pytest.approx(best, abs=1e-6)
    for hit in hits:
        assert hit.score == pytest.approx(reference[hit.item.id], abs=1e-6)


def test_insert_keeps_items_as_they_are(mem_dir: Path) -> None:
    source = SemanticMemory.open(mem_dir / "a")
    item = source.add("Alice prefers tea", kind="preference", importance=0.7)
    source.mark_used([item.id], now=now_utc() - timedelta(days=3))
    original = source.get(item.id)
    assert original is not None
    target = SemanticMemory.open(mem_dir / "b", HashEmbedder())
    assert target.insert([original]).stored == [original]
    assert target.get(item.id) == original
    assert target.embedding_status().embedded == 1
    again = target.insert([original, original._replace(id="other")])
    assert (again.stored, again.present, again.merged) == ([], [item.id], ["other"])
    assert again.ids == {item.id: item.id, "other": item.id}
    bulk = target.insert([original._replace(id="third")], dedupe=False)  # a benchmark's load
    assert [i.id for i in bulk.stored] == ["third"]
    target.close()
    assert len(SemanticMemory.open(mem_dir / "b")) == 2


def test_word_forms_and_search_as_you_type(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    peanuts = mem.add("Allergic to peanuts").id
    sister = mem.add("My sister lives in Oslo").id
    assert [h.item.id for h in mem.search("peanut allergy")] == [peanuts]
    assert mem.search("siste") == []
    assert [h.item.id for h in mem.search("siste", prefix=True)] == [sister]
    assert mem.search("siste ", prefix=True) == []  # a finished word is taken as it is


def test_save_adds_merges_or_leaves_alone(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    first, before = mem.save(
        "Alice prefers green tea in the morning", importance=0.7, origin="tool"
    )
    assert before is None
    same, before = mem.save("Alice prefers green tea in the morning", importance=0.2, origin="tool")
    assert same is before and same.id == first.id  # nothing to change
    merged, before = mem.save(
        "alice prefers green tea in the morning!", "preference", 0.4, origin="tool"
    )
    assert before is not None and before.text == first.text
    assert (merged.id, merged.kind, merged.importance) == (first.id, "preference", 0.7)
    kept, before = mem.save(
        "Alice prefers green tea in the morning", may_change=lambda _: False, origin="tool"
    )
    assert kept is before and kept.text == merged.text
    _, before = mem.save("Bob drives a red car", origin="tool")
    assert before is None and len(mem) == 2


@pytest.mark.parametrize("embedded", [False, True])
def test_one_policy_says_what_is_the_same_memory(mem_dir: Path, embedded: bool) -> None:
    """Saving merges into, and importing maps to, the memory `same_as` finds (the curator's
    fallback asks it too); a superseded memory is the same only to an import."""
    mem = SemanticMemory.open(mem_dir, HashEmbedder() if embedded else None)
    tea = mem.add("Alice prefers green tea in the morning")
    porto = mem.add("Bob lives in Porto")
    mem.supersede(porto.id, "Bob lives in Lisbon", by="user", reason="he moved")
    again = "alice prefers green tea in the morning!"

    assert mem.same_as(again) == tea
    assert mem.same_as("Carol collects stamps") is None
    assert mem.same_as("Bob lives in Porto") is None  # archived: not what a save merges into
    item, before = mem.save(again, origin="curator")
    assert before == tea and item.id == tea.id
    copy = MemoryItem.new(again, "fact", 0.5)
    old_porto = MemoryItem.new("Bob lives in Porto", "fact", 0.5)
    done = mem.insert([copy, old_porto])
    assert done.ids == {copy.id: tea.id, old_porto.id: porto.id}
    assert done.stored == []
