"""Vectors at 8 bits and a scale per row: on disk, and as the stores keep them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from assistant.memory.quantize import pack, packed_width, stored, unpack
from assistant.memory.vectors import VectorMatrix, cache_paths
from tests.clusters import DIM, centres, clustered


def test_rows_come_back_within_half_a_step() -> None:
    rng = np.random.default_rng(1)
    rows = clustered(rng, 5000, centres(rng))  # more than one chunk
    packed = pack(rows)
    assert packed.dtype == np.int8 and packed.shape == (5000, packed_width(DIM))
    back = unpack(packed)
    step = np.abs(rows).max(axis=1, keepdims=True) / 127
    assert (np.abs(back - rows) <= step / 2 + 1e-7).all()
    cosines = np.einsum("ij,ij->i", back, rows)
    assert np.abs(cosines - 1).max() < 2e-3
    assert np.array_equal(stored(back), back)  # stored values are stored as they are
    assert np.array_equal(pack(rows, np.array([7, 3])), packed[[7, 3]])
    assert not unpack(pack(np.zeros((2, DIM), dtype=np.float32))).any()


def test_the_vector_cache_is_8_bit_and_reads_back_what_was_searched(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    rows = clustered(rng, 50, centres(rng))
    matrix = VectorMatrix("test", DIM)
    matrix.set_many(range(50), rows)
    ids = [f"m{i}" for i in range(50)]
    matrix.save(tmp_path, ids)
    paths = cache_paths(tmp_path, "test")
    on_disk = np.load(paths.vectors)
    assert on_disk.dtype == np.int8 and on_disk.shape == (50, packed_width(DIM))
    again = VectorMatrix.from_cache(tmp_path, "test", ids)
    assert again is not None
    query = rows[0]
    allowed = np.ones(50, dtype=bool)
    before = matrix.nearest(query, allowed, 10, exact_up_to=100, candidates=10)
    after = again.nearest(query, allowed, 10, exact_up_to=100, candidates=10)
    assert before[0].tolist() == after[0].tolist()
    assert np.array_equal(before[1], after[1])  # reopening changes no similarity


def test_an_older_float16_cache_still_loads(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = clustered(rng, 20, centres(rng))
    matrix = VectorMatrix("test", DIM)
    matrix.set_many(range(20), rows)
    ids = [f"m{i}" for i in range(20)]
    matrix.save(tmp_path, ids)
    paths = cache_paths(tmp_path, "test")
    np.save(paths.vectors, rows.astype(np.float16))  # as the previous version wrote it
    meta = json.loads(paths.meta.read_text())
    st = paths.vectors.stat()
    meta["npy"].update(size=st.st_size, mtime_ns=st.st_mtime_ns)
    paths.meta.write_text(json.dumps(meta))
    again = VectorMatrix.from_cache(tmp_path, "test", ids)
    assert again is not None and again.count == 20
    slots, sims = again.nearest(rows[4], np.ones(20, dtype=bool), 1, exact_up_to=100, candidates=1)
    assert slots.tolist() == [4] and abs(sims[0] - 1) < 1e-3
