"""Message vectors are held in memory as they are stored (8 bits and a scale a row): a quarter
of float32, whatever the number of messages, with the same search results."""

from __future__ import annotations

import tracemalloc

import numpy as np

from assistant.memory.message_vectors import MessageVectors
from assistant.memory.quantize import stored

DIM = 384
ROWS = 20_000


def test_vectors_take_a_quarter_of_float32_and_give_the_same_cosines() -> None:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    tracemalloc.start()
    try:
        vectors = MessageVectors("test", DIM)
        for start in range(0, ROWS, 64):  # as embedding adds them, a batch at a time
            batch = range(start, min(ROWS, start + 64))
            vectors.add([("c", f"m{i}") for i in batch], rows[batch.start : batch.stop])
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    float32 = ROWS * DIM * 4
    # 8-bit rows with their growth headroom, the projected rows and the keys: less than the
    # rows alone as float32 (which held 2x that with their headroom)
    assert held < float32
    unit = stored(rows / np.linalg.norm(rows, axis=1, keepdims=True))
    query = unit[123]
    found, sims = vectors.nearest(query, 200)
    np.testing.assert_array_equal(sims, unit[found] @ query)  # exactly the stored values
    assert found[np.argmax(sims)] == 123
