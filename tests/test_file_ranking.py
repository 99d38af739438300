"""The file index ranks as it did: a fixture of 6,000 chunks (more than are scanned exactly, so
the projection picks the dense candidates) and questions of common and rarer words, against the
results recorded before its search was made faster (`tests/data/file_ranking.json`).

The search configuration is spelled out, so that the record holds while the defaults are
tuned: this checks how the index computes a ranking, not which ranking is best.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from assistant.knowledge import Chunk, FileIndex, Place
from assistant.knowledge import index as index_module
from assistant.knowledge.vector_log import VectorLog
from assistant.memory.ranking import SearchConfig
from tests.embedders import HashEmbedder

RECORD = Path(__file__).parent / "data" / "file_ranking.json"
CONFIG = SearchConfig(depth=50, fusion="convex", dense_weight=0.3, bm25_k1=1.5, bm25_b=0.4,
                      min_similarity=0.3, rescore_factor=5, rescore_fraction=0.01)  # fmt: skip
COMMON = "the of and to a in is that for it with was on".split()
RARE = [f"{a}{b}" for a in ("ka", "lo", "mi", "nu", "po", "ra") for b in ("ban", "cor", "dil",
        "fen", "gat", "hum", "jor", "kel", "lim", "mor", "nap", "pil")]  # fmt: skip
WORDS = COMMON + RARE
WEIGHTS = [1 / (rank + 1) for rank in range(len(WORDS))]
FILES, PER_FILE = 60, 100


def fixture_index() -> FileIndex:
    """6,000 chunks of 20-60 words in 60 files, with hashed bag-of-words vectors."""
    rng = random.Random(11)
    index = FileIndex(None, HashEmbedder(dim=96), CONFIG)
    for f in range(FILES):
        chunks = [Chunk(" ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(20, 60))),
                        Place(page=p + 1)) for p in range(PER_FILE)]  # fmt: skip
        index.put(f"/docs/file-{f:02}.pdf", chunks)
    index.embed_pending()
    return index


def questions() -> list[str]:
    rng = random.Random(12)
    asked = [" ".join([*rng.choices(WORDS, WEIGHTS, k=rng.randint(0, 4)), rng.choice(RARE)])
             for _ in range(40)]  # fmt: skip
    return [*asked, "the of and", "kaban", "loban the kaban", "nothing-like-it"]


def ranking(index: FileIndex, query: str) -> list[list[object]]:
    return [[hit.path, hit.place.page, round(hit.score, 9)] for hit in index.search(query, 10)]


def test_rankings_are_those_recorded() -> None:
    index = fixture_index()
    recorded = json.loads(RECORD.read_text())
    assert [query for query, _ in recorded] == questions()
    for query, expected in recorded:
        got = ranking(index, query)
        assert [hit[:2] for hit in got] == [hit[:2] for hit in expected], query
        assert [hit[2] for hit in got] == pytest.approx([hit[2] for hit in expected], abs=1e-6)
    assert sum(len(hits) == 10 for _, hits in recorded) > 35  # the record is not empty


if __name__ == "__main__":  # writes the record: run on the code to compare with
    fixture = fixture_index()
    lines = [json.dumps([q, ranking(fixture, q)]) for q in questions()]
    RECORD.write_text("[\n" + ",\n".join(lines) + "\n]\n")


def test_rows_stay_mapped_to_chunks_through_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files come, change and go, sharing texts (the same text in two files has one vector, found
    # as its newest chunk), between embeddings and saves (which drop unused vectors once they
    # are many: here, from 4): the map of vector rows to chunks, and of chunks to rows, kept in
    # step, is the one made afresh.
    monkeypatch.setattr(index_module, "COMPACT_VECTORS_FROM", 4)
    rng = random.Random(13)
    texts = [f"passage {n} about {rng.choice(RARE)}" for n in range(40)]
    index = FileIndex(tmp_path, HashEmbedder(dim=32), CONFIG)
    compactions = 0
    for step in range(60):
        path = f"/docs/f{rng.randrange(8)}.md"
        if rng.random() < 0.2:
            index.drop(path)
        else:
            index.put(path, [Chunk(t, Place()) for t in rng.sample(texts, rng.randint(1, 6))])
        if step % 3 == 0:
            index.embed_pending()
        if step % 7 == 0:
            rows = len(index._vectors or ())
            index.save()
            compactions += len(index._vectors or ()) < rows
        index.search(rng.choice(RARE))
        kept, kept_rows = index._key_of_row, index._row_of_key.copy()
        assert kept is not None and index._vectors is not None
        index._key_of_row = None
        fresh = index._mapped(index._vectors)
        assert kept[: len(fresh)].tolist() == fresh.tolist()
        assert kept_rows.tolist() == index._row_of_key.tolist()
    assert compactions > 0


def test_a_search_after_a_change_maps_no_rows_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # The rows of a file's texts are mapped as it changes: the first search after a change
    # looked up every chunk's row (40 ms at 100,000 chunks, against 3 ms for a search).
    index = fixture_index()
    index.search("kaban")
    index.put("/docs/file-00.pdf", [Chunk(f"new kaban text {n}", Place(page=n)) for n in range(5)])
    index.embed_pending()
    looked_up: list[object] = []
    real_row = VectorLog.row

    def row(self: VectorLog, key: bytes) -> int:
        looked_up.append(key)
        return real_row(self, key)

    monkeypatch.setattr(VectorLog, "row", row)
    assert index.search("kaban new")[0].path == "/docs/file-00.pdf"
    assert looked_up == []  # not FILES * PER_FILE rows
