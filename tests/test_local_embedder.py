"""The built-in embedder runs the shipped all-MiniLM-L6-v2 (int8 ONNX) with no network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assistant.memory.local_embedder import DIM, NAME, LocalEmbedder
from assistant.workspace import Workspace


def test_embeds_by_meaning_offline() -> None:
    embedder = LocalEmbedder(threads=1)
    texts = ["My sister adopted a puppy.", "She got a young dog.", "Quarterly tax forms are due."]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, DIM) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.4 > unrelated
    # Batching and padding do not change a text's vector.
    np.testing.assert_allclose(embedder.embed(texts[2:]), vectors[2:], atol=1e-5)
    assert embedder.embed([]).shape == (0, DIM)


def test_workspace_uses_it_by_default(data_dir: Path) -> None:
    workspace = Workspace.open(data_dir)
    try:
        assert workspace.embedder is not None and workspace.embedder.name == NAME
        assert workspace.memory.embedding_status().model == NAME
    finally:
        workspace.close()


def test_long_passages_go_a_few_at_a_time_and_keep_their_vectors() -> None:
    embedder = LocalEmbedder(threads=1)
    lengths = [5] * 40 + [200] * 20  # short texts first, as `embed` orders them
    batches = list(embedder._batches(list(range(60)), lengths))
    assert [len(b) for b in batches] == [32, 8] + [2] * 10  # 32 short; then 512 padded tokens
    assert [i for b in batches for i in b] == list(range(60))
    texts = ["word " * n for n in (3, 150, 40, 220, 7)]
    whole = embedder.embed(texts)
    embedder.batch_tokens = 256  # one long passage a batch
    np.testing.assert_allclose(embedder.embed(texts), whole, atol=1e-5)


# Run in a fresh process: threads other tests left behind come and go in this one.
_COUNT_THREADS = """
import threading
from pathlib import Path
import onnxruntime, tokenizers  # importing them starts a thread of their own: not counted
from assistant.memory.local_embedder import LocalEmbedder

def threads():
    return {task.name for task in Path("/proc/self/task").iterdir()}

embedder = LocalEmbedder()
before = threads()
embedder.embed(["load the model here, as the first search would"])
assert threads() - before == set(), "loading the model started threads"
done = []
worker = threading.Thread(target=lambda: done.append(len(embedder.embed(["in the back"]))))
worker.start()
worker.join()
assert done == [1]
print("ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads the threads from /proc")
def test_the_model_runs_on_the_calling_thread_at_its_priority() -> None:
    """Loading the model starts no thread of its own: background embedding runs on its own
    low-priority thread alone (onnxruntime's threads, started by whichever thread loaded the
    model, kept normal priority), and a query never waits for another core."""
    run = subprocess.run(
        [sys.executable, "-c", _COUNT_THREADS],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
