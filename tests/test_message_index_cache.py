"""The conversation search index is cached at close, so that opening reads no conversation file
it does not have to; a file changed since is read again, and a damaged cache is ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.memory import ConversationStore, Message, conversation_file
from assistant.memory.message_index_cache import CACHE_NAME


def messages(texts: list[str]) -> list[Message]:
    return [
        Message(f"m{i}", f"m{i - 1}" if i else None, "user", text, "2024-05-01T10:00:00Z")
        for i, text in enumerate(texts)
    ]


def filled(data_dir: Path) -> ConversationStore:
    store = ConversationStore(data_dir)
    store.import_conversation("trip", "Trip", "2024-05-01T10:00:00Z", messages(["Lisbon trams"]))
    store.import_conversation("food", "Food", "2024-05-01T10:00:00Z", messages(["Porto tarts"]))
    return store


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The conversation files read from now on."""
    seen: list[Path] = []
    real = conversation_file.read_conversation

    def counting(path: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(conversation_file, "read_conversation", counting)
    return seen


def ids(store: ConversationStore, query: str) -> list[str]:
    return [h.conversation_id for h in store.search(query)]


def test_opening_again_reads_no_file_for_the_first_search(
    data_dir: Path, reads: list[Path]
) -> None:
    store = filled(data_dir)
    assert ids(store, "trams") == ["trip"]  # the index is built (the imports indexed it)
    store.close()
    assert (store.directory / CACHE_NAME).exists()
    reads.clear()
    again = ConversationStore(data_dir)
    assert ids(again, "trams") == ["trip"]
    assert ids(again, "tarts") == ["food"]
    assert reads == []
    hit = again.search("Lisbon")[0]
    assert (hit.title, hit.snippet, hit.message_id) == ("Trip", "Lisbon trams", "m0")


def test_a_conversation_changed_or_deleted_since_is_read_again(
    data_dir: Path, reads: list[Path]
) -> None:
    store = filled(data_dir)
    store.search("trams")
    store.close()
    other = ConversationStore(data_dir)  # another writer, while the cache stays as it was
    other.append("trip", "assistant", "And the Belem tower")
    other.delete("food")
    reads.clear()
    again = ConversationStore(data_dir)
    assert ids(again, "Belem") == ["trip"]
    assert ids(again, "tarts") == []
    assert [p.stem for p in reads] == ["trip"]  # only the changed file


def test_keys_changed_since_the_cache_are_indexed_again(data_dir: Path) -> None:
    store = filled(data_dir)
    store.set_message_keys({("trip", "m0"): ["The user rode the yellow funicular."]})
    assert ids(store, "funicular") == ["trip"]
    store.close()
    assert b"funicular" in (store.directory / CACHE_NAME).read_bytes()
    again = ConversationStore(data_dir)
    again.set_message_keys({("trip", "m0"): []})  # that memory was forgotten meanwhile
    assert ids(again, "funicular") == []
    assert ids(again, "trams") == ["trip"]
    again.close()
    assert b"funicular" not in (store.directory / CACHE_NAME).read_bytes()


def test_a_damaged_cache_is_ignored(data_dir: Path) -> None:
    store = filled(data_dir)
    store.search("trams")
    store.close()
    (store.directory / CACHE_NAME).write_bytes(b"not a zip file")
    again = ConversationStore(data_dir)
    assert ids(again, "tarts") == ["food"]
