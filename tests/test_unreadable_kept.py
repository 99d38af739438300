"""What could not be read is kept and reported: records this version does not understand,
damaged ends of files, files of a newer version, empty or unreadable caches."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pytestqt.qtbot import QtBot

from assistant.errors import StorageError
from assistant.memory import ConversationStore
from assistant.memory.conversation_listing import INDEX_NAME
from assistant.memory.message_vectors import cache_path
from assistant.workspace import Workspace
from tests.desktop import shown_window
from tests.embedders import HashEmbedder

STAMP = "2025-01-02T03:04:05+00:00"


def file_of(store: ConversationStore, conversation_id: str) -> Path:
    return store.directory / f"{conversation_id}.jsonl"


def a_record_from_later(conversation_id: str, n: int) -> dict[str, object]:
    """A message record of this format's version that this version cannot parse."""
    return {
        "version": 1,
        "type": "message",
        "id": f"later{n}",
        "parent_id": None,
        "role": "critic",
        "content": [{"type": "text", "text": f"part {n} of {conversation_id}"}],
        "created_at": STAMP,
    }


def with_unreadable_messages(store: ConversationStore) -> tuple[str, bytes]:
    """A conversation whose only messages cannot be parsed; its id and its file's bytes."""
    cid = store.create("From a later version").id
    path = file_of(store, cid)
    with path.open("ab") as f:
        for n in range(2):
            f.write(json.dumps(a_record_from_later(cid, n)).encode() + b"\n")
    return cid, path.read_bytes()


def test_messages_this_version_cannot_parse_are_kept_and_reported(data_dir: Path) -> None:
    cid, data = with_unreadable_messages(ConversationStore(data_dir))
    store = ConversationStore(data_dir)
    store.all()
    assert any("2 records" in w and "kept" in w for w in store.warnings), store.warnings
    assert not store.is_empty(cid)
    assert not store.delete_if_empty(cid)
    assert file_of(store, cid).read_bytes() == data


def test_a_conversation_with_only_a_header_is_empty(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create().id
    assert store.is_empty(cid)
    assert store.delete_if_empty(cid)
    assert not store.exists(cid)


@pytest.mark.gui
def test_starting_the_app_keeps_a_conversation_it_cannot_read(qtbot: QtBot, data_dir: Path) -> None:
    cid, data = with_unreadable_messages(ConversationStore(data_dir))
    window = shown_window(qtbot, data_dir)
    qtbot.waitUntil(window.is_ready, timeout=20000)
    window.close()
    assert (data_dir / "conversations" / f"{cid}.jsonl").read_bytes() == data


def conversation_of(store: ConversationStore, messages: int) -> str:
    cid = store.create("Trip").id
    for n in range(messages):
        store.append(cid, "user", f"message number {n} about the trip")
    store.all()  # the listing records the file's size and messages
    return cid


def copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.corrupt-*"))


def test_a_zeroed_tail_is_copied_aside_and_reported(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = conversation_of(store, 5)
    path = file_of(store, cid)
    data = path.read_bytes()
    damaged = data[:-150] + b"\0" * 150
    path.write_bytes(damaged)
    again = ConversationStore(data_dir)
    loaded = again.load(cid)
    assert len(loaded.messages) < 5
    kept = copies(path)
    assert len(kept) == 1 and kept[0].read_bytes() == damaged
    warning = " ".join(again.warnings)
    assert "Trip" in warning and kept[0].name in warning, again.warnings
    assert "of its 5 messages" in warning, again.warnings


def test_a_file_cut_short_is_reported_with_what_is_missing(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = conversation_of(store, 6)
    path = file_of(store, cid)
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 200) + 30])  # in an earlier line
    again = ConversationStore(data_dir)
    assert len(again.load(cid).messages) < 6
    warning = " ".join(again.warnings)
    assert "Trip" in warning and "of its 6 messages" in warning, again.warnings
    assert copies(path)


def test_a_torn_last_append_is_cut_quietly(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = conversation_of(store, 3)
    path = file_of(store, cid)
    with path.open("ab") as f:
        f.write(b'{"version":1,"type":"message","id":"x","parent')  # a crash mid-append
    again = ConversationStore(data_dir)
    assert len(again.load(cid).messages) == 3
    assert again.warnings == []
    assert not copies(path)


@pytest.mark.parametrize("damage", ["torn tail", "bad line"])
def test_a_file_of_a_newer_version_is_refused_unchanged(data_dir: Path, damage: str) -> None:
    store = ConversationStore(data_dir)
    cid = conversation_of(store, 2)
    path = file_of(store, cid)
    newer = {"version": 9, "type": "message", "id": "n", "role": "user", "content": "hi"}
    with path.open("ab") as f:
        f.write(json.dumps(newer).encode() + b"\n")
        f.write(b'{"version":9,"type":"mess' if damage == "torn tail" else b"not json\n")
    before = sorted(p.name for p in path.parent.iterdir())
    data = path.read_bytes()
    again = ConversationStore(data_dir)
    with pytest.raises(StorageError, match="newer version"):
        again.load(cid)
    assert path.read_bytes() == data
    assert sorted(p.name for p in path.parent.iterdir()) == before


def test_an_empty_conversation_index_is_rebuilt_with_a_notice(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = conversation_of(store, 2)
    (store.directory / INDEX_NAME).write_bytes(b"")
    again = ConversationStore(data_dir)
    assert [info.id for info in again.all()] == [cid]
    assert any(INDEX_NAME in w and "rebuilt" in w for w in again.warnings), again.warnings
    assert json.loads((store.directory / INDEX_NAME).read_text())["conversations"]


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 not a zip", b"\0" * 64])
def test_an_unreadable_message_vector_cache_is_rebuilt(data_dir: Path, content: bytes) -> None:
    store = ConversationStore(data_dir, HashEmbedder())
    conversation_of(store, 3)
    store.embed_pending()
    store.close()
    cache_path(store.directory, "hash").write_bytes(content)
    again = ConversationStore(data_dir, HashEmbedder())
    assert again.search("trip")  # no exception: searched by keywords meanwhile
    assert again.pending_embeddings() == 3
    assert again.embed_pending() == 3
    again.close()
    with np.load(cache_path(store.directory, "hash")) as data:
        assert len(data["messages"]) == 3


def test_opening_the_workspace_reports_an_unreadable_conversation(data_dir: Path) -> None:
    cid, _ = with_unreadable_messages(ConversationStore(data_dir))
    workspace = Workspace.open(data_dir)
    try:
        assert any("kept" in w for w in workspace.warnings), workspace.warnings
        assert workspace.conversations.exists(cid)
    finally:
        workspace.close()
