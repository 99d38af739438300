"""The knowledge index on disk: passages in an append-only log read back for the hits, vectors
appended to a mapped file; a change writes its own part, compactions drop what is stale, and
whatever is damaged is read again from the files (never the files touched)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from assistant.errors import StorageError
from assistant.knowledge import Chunk, FileIndex, Knowledge, Place
from assistant.knowledge import passage_log as passages_module
from assistant.knowledge import vector_log as vector_module
from assistant.knowledge.library import KNOWLEDGE_DIR
from assistant.knowledge.passage_log import LOG_NAME
from assistant.knowledge.records import FileRecord, chunk_json, record_json
from assistant.knowledge.vector_log import vectors_path
from assistant.memory.message_vectors import MessageVectors
from tests.embedders import HashEmbedder, hashed_vector

MODEL = "hash"


def chunks(tag: str, n: int = 3) -> list[Chunk]:
    return [Chunk(f"{tag} passage {i} about the harbour of {tag}", Place(page=i + 1))
            for i in range(n)]  # fmt: skip


def record(path: str, n: int, size: int = 10) -> FileRecord:
    return FileRecord(path, size, 1_000 + size, pages=n, chunks=n, read_at="2026-11-29T01:00:00Z")


def filled(directory: Path, files: int = 4) -> FileIndex:
    index = FileIndex(directory, HashEmbedder())
    for f in range(files):
        index.put(f"/docs/f{f}.pdf", chunks(f"zq{f}x"), record(f"/docs/f{f}.pdf", 3))
    index.embed_pending()
    index.save()
    return index


def reopened(directory: Path) -> tuple[FileIndex, dict[str, FileRecord]]:
    index = FileIndex(directory, HashEmbedder())
    records = {r.path: r for r in index.load()}
    return index, records


def test_passages_and_records_round_trip_and_texts_are_read_from_disk(tmp_path: Path) -> None:
    index = filled(tmp_path)
    index.put("/docs/empty.png", [], FileRecord("/docs/empty.png", 5, 6, status="an image"))
    index.close()
    again, records = reopened(tmp_path)
    assert records["/docs/f2.pdf"] == record("/docs/f2.pdf", 3)
    assert records["/docs/empty.png"].status == "an image"
    assert again.chunks_of("/docs/f2.pdf") == chunks("zq2x")
    assert again._held == {}  # nothing but the log holds the texts
    [hit] = again.search("zq2x passage 1", k=1)
    assert (hit.path, hit.place.page, hit.text) == ("/docs/f2.pdf", 2, chunks("zq2x")[1].text)
    assert again.pending_embeddings() == 0  # the vectors came back too
    assert again.search("harbour zq3x")[0].path == "/docs/f3.pdf"


def test_a_change_appends_its_own_entry_and_vectors(tmp_path: Path) -> None:
    index = filled(tmp_path, files=20)
    log = tmp_path / LOG_NAME
    vectors = vectors_path(tmp_path, MODEL)
    before = (log.stat().st_size, vectors.stat().st_size, log.stat().st_ino)
    changed = [*chunks("zq5x")[:2], Chunk("a new zq99x passage", Place(page=3))]
    index.put("/docs/f5.pdf", changed, record("/docs/f5.pdf", 3, size=11))
    index.embed_pending()
    index.save()
    grown = log.stat().st_size - before[0]
    entry = len(json.dumps(record_json(record("/docs/f5.pdf", 3)))) + sum(
        len(json.dumps(chunk_json(c))) for c in changed
    )
    assert entry < grown < entry + 200  # its header and passages, nothing else
    row = 16 + 64 + 4 + 4
    assert vectors.stat().st_size - before[1] == row  # the one new text's vector
    assert log.stat().st_ino == before[2]  # appended, not rewritten
    index.drop("/docs/f6.pdf")
    assert log.stat().st_size - before[0] - grown < 60  # {"gone": path}
    index.close()
    again, records = reopened(tmp_path)
    assert "/docs/f6.pdf" not in records and records["/docs/f5.pdf"].size == 11
    assert again.search("zq99x")[0].path == "/docs/f5.pdf"
    assert again.search("zq6x") == []


def test_the_log_is_compacted_once_stale_entries_outweigh_the_live_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(passages_module, "COMPACT_FROM", 2000)
    index = filled(tmp_path, files=4)
    log = tmp_path / LOG_NAME
    sizes, inodes = [], []
    for n in range(12):
        index.put("/docs/f1.pdf", chunks(f"zq{100 + n}x"), record("/docs/f1.pdf", 3, size=n))
        sizes.append(log.stat().st_size)
        inodes.append(log.stat().st_ino)
    assert len(set(inodes)) > 1  # rewritten at least once...
    assert max(sizes) < 2 * 2000 + 2 * sizes[0]  # ...so the log stays bounded
    data = log.read_bytes()
    assert b"zq100x" not in data and b"zq111x" in data  # the stale texts are gone from disk
    assert {h.path for h in index.search("zq111x")} == {"/docs/f1.pdf"}
    assert all("zq105x" not in h.text for h in index.search("zq105x"))
    index.drop("/docs/f0.pdf")
    assert index.chunks_of("/docs/f2.pdf") == chunks("zq2x")  # read at their new places
    index.close()
    again, records = reopened(tmp_path)
    assert sorted(records) == ["/docs/f1.pdf", "/docs/f2.pdf", "/docs/f3.pdf"]
    assert again.chunks_of("/docs/f1.pdf") == chunks("zq111x")


def test_unused_vectors_are_dropped_once_they_outnumber_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("assistant.knowledge.index.COMPACT_VECTORS_FROM", 4)
    index = filled(tmp_path, files=4)  # 12 rows
    for f in range(3):
        index.drop(f"/docs/f{f}.pdf")
    index.save()  # 9 unused of 12: rewritten with the 3 in use
    again, _ = reopened(tmp_path)
    assert again.search("zq3x passage 2", k=1)[0].text == chunks("zq3x")[2].text
    assert again.pending_embeddings() == 0
    vectors = vector_module.VectorLog.load(tmp_path, MODEL)
    assert vectors is not None and len(vectors) == 3
    for text_digest, row in vectors.digests().items():
        text = next(c.text for c in chunks("zq3x") if index_digest(c.text) == text_digest)
        assert float(vectors.rows([row])[0] @ hashed_vector(text, 64)) > 0.98


def index_digest(text: str) -> bytes:
    from assistant.knowledge.index import digest

    return digest(text)


def test_a_torn_last_entry_is_cut_off_quietly(tmp_path: Path) -> None:
    filled(tmp_path, files=3).close()
    log = tmp_path / LOG_NAME
    whole = log.read_bytes()
    extra = FileIndex(tmp_path / "other", None)
    extra.put("/docs/new.md", chunks("zq7x"), record("/docs/new.md", 3))
    appended = (tmp_path / "other" / LOG_NAME).read_bytes()
    for cut in (len(appended) // 3, len(appended) - 5):  # in the header, in the passages
        log.write_bytes(whole + appended[:cut])
        again, records = reopened(tmp_path)
        assert sorted(records) == ["/docs/f0.pdf", "/docs/f1.pdf", "/docs/f2.pdf"]
        assert again.warnings == []
        assert log.read_bytes() == whole
        again.close()


@pytest.mark.parametrize("where", ["header", "passage"])
def test_damage_in_the_log_drops_what_it_hit_and_the_files_are_read_again(
    tmp_path: Path, where: str
) -> None:
    filled(tmp_path, files=3).close()
    log = tmp_path / LOG_NAME
    data = bytearray(log.read_bytes())
    second = data.index(b'{"version"', 10)  # the second file's header
    at = second + 2 if where == "header" else data.index(b"zq1x passage 1")
    data[at] ^= 0xFF
    log.write_bytes(bytes(data))
    again, records = reopened(tmp_path)
    assert again.warnings
    # A header that cannot be read cuts the log there; a passage's CRC drops only its file.
    expected = ["/docs/f0.pdf"] if where == "header" else ["/docs/f0.pdf", "/docs/f2.pdf"]
    assert sorted(records) == expected
    assert again.search("zq0x passage")[0].path == "/docs/f0.pdf"
    again.put("/docs/f1.pdf", chunks("zq1x"), record("/docs/f1.pdf", 3))  # read again
    again.close()
    third, records = reopened(tmp_path)
    assert "/docs/f1.pdf" in records and third.warnings == []
    assert third.search("zq1x passage 2", k=1)[0].path == "/docs/f1.pdf"


@pytest.mark.parametrize("content", [b"", b"\0" * 300, b"not a log at all\n"])
def test_a_knowledge_folder_is_read_again_whatever_its_index_holds(
    data_dir: Path, tmp_path: Path, content: bytes
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "trip.md").write_text("# Trip\n\nThe ferry to Porto leaves at nine.\n")
    knowledge = Knowledge(data_dir, HashEmbedder())
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    knowledge.sync()
    knowledge.index.embed_pending()
    knowledge.close()
    directory = data_dir / KNOWLEDGE_DIR
    (directory / LOG_NAME).write_bytes(content)
    vectors_path(directory, MODEL).write_bytes(content)
    again = Knowledge(data_dir, HashEmbedder())
    assert again.sync() == 1
    assert again.search("ferry Porto")[0].path == str(folder / "trip.md")
    assert again.index.embed_pending() == 1
    assert (folder / "trip.md").read_text().startswith("# Trip")
    again.close()


def test_a_log_of_a_newer_version_is_left_as_it_is(tmp_path: Path) -> None:
    log = tmp_path / LOG_NAME
    newer = json.dumps({"version": 99, "path": "/docs/a.md", "chunks": 0, "bytes": 0}) + "\n"
    log.write_text(newer)
    index, records = reopened(tmp_path)
    assert records == {} and index.warnings
    index.put("/docs/b.md", chunks("zq8x"), record("/docs/b.md", 3))  # held in memory
    assert index.search("zq8x")[0].path == "/docs/b.md"
    index.close()
    assert log.read_text() == newer


def test_a_log_that_cannot_be_written_leaves_the_chunks_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = filled(tmp_path, files=2)

    def full(self: object, data: bytes) -> int:
        raise StorageError("Could not save to passages.jsonl: the disk is full.")

    monkeypatch.setattr("assistant.memory.jsonl.Appender.append_bytes", full)
    index.put("/docs/f0.pdf", chunks("zq9x"), record("/docs/f0.pdf", 3, size=99))
    assert index.search("zq9x")[0].path == "/docs/f0.pdf"
    assert index.chunks_of("/docs/f0.pdf") == chunks("zq9x")
    monkeypatch.undo()
    index.close()
    _, records = reopened(tmp_path)
    assert records["/docs/f0.pdf"].size == 10  # the old record: the file is read again


def test_an_index_of_the_older_layout_is_carried_over(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    trip = folder / "trip.md"
    trip.write_text("# Trip\n\nThe ferry to Porto leaves at nine.\n")
    stat = os.stat(trip)
    directory = data_dir / KNOWLEDGE_DIR
    (directory / "files").mkdir(parents=True)
    chunk = Chunk("The ferry to Porto leaves at nine.", Place(first_line=3, last_line=3,
                                                             heading=("Trip",)))  # fmt: skip
    old = {**record_json(FileRecord(str(trip), stat.st_size, stat.st_mtime_ns)),
           "chunks": [chunk_json(chunk)]}  # fmt: skip
    (directory / "files" / "0123.json").write_text(json.dumps(old))
    vectors = MessageVectors(MODEL, 64)
    key = ("chunk", index_digest(chunk.text).hex())
    vectors.add([key], hashed_vector(chunk.text, 64)[None, :])
    vectors.save(directory)
    embedder = HashEmbedder()
    knowledge = Knowledge(data_dir, embedder)
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    assert knowledge.sync() == 0  # nothing read again
    assert knowledge.search("ferry Porto")[0].place == chunk.place
    assert knowledge.index.pending_embeddings() == 0 and embedder.texts == 1  # the question
    assert not (directory / "files").exists()
    assert sorted(p.name for p in directory.iterdir()) == [
        "folders.json", LOG_NAME, vectors_path(directory, MODEL).name]  # fmt: skip
    knowledge.close()


def test_vectors_on_disk_are_read_through_a_map_not_kept_in_memory(tmp_path: Path) -> None:
    filled(tmp_path, files=4).close()
    vectors = vector_module.VectorLog.load(tmp_path, MODEL)
    assert vectors is not None and vectors._map is not None and len(vectors._tail) == 0
    assert isinstance(vectors._map, np.memmap)


def test_a_closed_index_still_searches(tmp_path: Path) -> None:
    index = filled(tmp_path, files=4)
    index.close()  # the window closed while a search was under way
    assert index.search("zq2x passage 1", k=1)[0].path == "/docs/f2.pdf"
