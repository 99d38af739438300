"""Messages found also by the memories extracted from them (their keys), by words and meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.memory import ConversationStore
from assistant.memory.conversations import FILES_FOR_CONTEXTS
from assistant.memory.items import Source
from assistant.memory.memory_keys import tie_memories_to_messages
from assistant.memory.message_keys import PREFIX
from assistant.memory.message_vectors import MessageVectors, cache_path
from assistant.memory.semantic import SemanticMemory
from assistant.paths import memory_dir
from tests.test_conversation_search import ConceptEmbedder


def chat(store: ConversationStore) -> tuple[str, dict[str, str]]:
    """A conversation whose words say little; returns its id and message ids by a short name."""
    cid = store.create("Weekend").id
    ids = {
        "went": store.append(cid, "user", "We finally went there on Saturday.").id,
        "nice": store.append(cid, "assistant", "Sounds lovely, how was it?").id,
        "other": store.append(cid, "user", "I cooked pasta afterwards.").id,
    }
    return cid, ids


def test_a_message_is_found_by_the_words_of_its_memory(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid, ids = chat(store)
    assert store.search("lighthouse") == []
    store.set_message_keys({(cid, ids["went"]): ["The user visited the lighthouse in Porto."]})
    assert [h.message_id for h in store.search("lighthouse")] == [ids["went"]]
    hit = store.search("lighthouse")[0]
    assert hit.snippet == "We finally went there on Saturday."  # the message, not its key
    store.set_message_keys({(cid, ids["went"]): []})  # the memory is gone: so is the key
    assert store.search("lighthouse") == []


def test_keys_given_before_the_index_is_built_are_used(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid, ids = chat(store)
    store.close()
    fresh = ConversationStore(data_dir)  # its index is built on the first search
    fresh.set_message_keys({(cid, ids["nice"]): ["The lighthouse tour was lovely."]})
    assert [h.message_id for h in fresh.search("lighthouse tour")] == [ids["nice"]]


def test_a_message_is_found_by_the_meaning_of_its_memory(data_dir: Path) -> None:
    embedder = ConceptEmbedder()
    store = ConversationStore(data_dir, embedder)
    cid, ids = chat(store)
    store.set_message_keys({(cid, ids["went"]): ["The user drove the car to the coast."]})
    assert store.pending_embeddings() == 4  # three messages and one key
    assert store.embed_pending() == 4
    assert store.pending_embeddings() == 0
    hits = store.search("vehicle")  # no shared word: by the key's meaning alone
    assert [h.message_id for h in hits] == [ids["went"]]
    off = ConversationStore(data_dir, embedder, store._index.config.__class__(message_keys=False))
    assert off.search("vehicle") == []  # the same search without keys finds nothing


def test_the_key_cache_keeps_only_current_keys(data_dir: Path) -> None:
    embedder = ConceptEmbedder()
    store = ConversationStore(data_dir, embedder)
    cid, ids = chat(store)
    store.set_message_keys(
        {
            (cid, ids["went"]): ["The user drove the car to the coast."],
            (cid, ids["other"]): ["The user has a puppy."],
        }
    )
    store.embed_pending()
    store.close()
    path = cache_path(store.directory, embedder.name, PREFIX)
    cached = MessageVectors.load(store.directory, embedder.name, PREFIX)
    assert cached is not None and len(cached) == 2
    assert b"puppy" not in path.read_bytes()  # the cache names texts by a hash only

    again = ConversationStore(data_dir, embedder)
    again.set_message_keys(
        {
            (cid, ids["went"]): ["The user drove the car to the coast."],
            (cid, ids["other"]): [],  # that memory was forgotten
        }
    )
    assert again.pending_embeddings() == 0  # the kept key needs no embedding again
    assert [h.message_id for h in again.search("vehicle")] == [ids["went"]]
    assert again.search("dog") == []
    again.close()
    cached = MessageVectors.load(store.directory, embedder.name, PREFIX)
    assert cached is not None and len(cached) == 1  # the forgotten memory's vector is gone


def test_memories_become_keys_of_their_messages_and_follow_changes(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid, ids = chat(store)
    memory = SemanticMemory.open(memory_dir(data_dir))
    learned = memory.add(
        "The user visited the lighthouse.", source=Source(cid, ids["went"]), origin="curator"
    )
    memory.add("The user likes tea.", origin="user")  # no source: no key
    stop = tie_memories_to_messages(memory, store)
    assert [h.message_id for h in store.search("lighthouse")] == [ids["went"]]
    assert store.search("tea") == []

    memory.add("The user cooked carbonara.", source=Source(cid, ids["other"]), origin="curator")
    assert [h.message_id for h in store.search("carbonara")] == [ids["other"]]
    memory.update(learned.id, text="The user visited the old windmill.")
    assert store.search("lighthouse") == []
    assert [h.message_id for h in store.search("windmill")] == [ids["went"]]
    memory.forget(learned.id)
    assert store.search("windmill") == []  # a forgotten memory is no key

    stop()
    memory.add("The user saw a heron.", source=Source(cid, ids["nice"]), origin="curator")
    assert store.search("heron") == []  # no longer tied
    memory.close()
    store.close()


def test_a_memory_is_found_by_the_words_of_its_message_and_the_one_before(
    data_dir: Path,
) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Art").id
    asked = store.append(cid, "user", "Did you paint anything at the lake?").id
    answered = store.append(cid, "assistant", "Yes, a sunrise over the water.").id
    memory = SemanticMemory.open(memory_dir(data_dir))
    learned = memory.add("A sunrise, finished.", source=Source(cid, answered), origin="curator")
    own = memory.add("Tea with Alice at the lake.", source=Source(cid, asked), origin="curator")
    assert [h.item.id for h in memory.search("painting")] == []
    stop = tie_memories_to_messages(memory, store)
    assert {h.item.id for h in memory.search("painting")} == {learned.id, own.id}
    assert [h.item.id for h in memory.search("water")] == [learned.id]  # not the reply after
    later = store.append(cid, "user", "I sold the watercolour of the water lilies.").id
    sold = memory.add("Sold a picture.", source=Source(cid, later), origin="curator")
    assert sold.id in [h.item.id for h in memory.search("watercolour")]  # given when added
    store.delete(cid)  # the messages are gone: so are the contexts
    assert memory.search("painting") == []
    assert memory.search("watercolour") == []
    stop()
    memory.close()
    store.close()


def test_contexts_are_kept_in_the_index_cache_until_they_change(data_dir: Path) -> None:
    memory = SemanticMemory.open(memory_dir(data_dir))
    fact = memory.add("A sunrise, finished.").id
    other = memory.add("A walk by the lake.").id
    memory.set_contexts({fact: "Did you paint anything?", other: "Any plans for Sunday?"})
    assert [h.item.id for h in memory.search("painting")] == [fact]
    memory.close()

    again = SemanticMemory.open(memory_dir(data_dir))  # from the index cache: no context given
    assert [h.item.id for h in again.search("painting")] == [fact]
    again.set_contexts({fact: "Did you paint anything?"})  # the same: nothing changes
    assert [h.item.id for h in again.search("painting")] == [fact]
    again.set_contexts({fact: "Did you sing anything?", other: None})
    assert again.search("painting") == []
    assert [h.item.id for h in again.search("singing")] == [fact]
    assert again.search("sunday") == []
    again.set_contexts({fact: "Did you dance?"})
    again.forget(fact)
    again.close()
    third = SemanticMemory.open(memory_dir(data_dir))  # the forgotten one left no context
    assert third.search("dance") == []
    third.close()


def test_contexts_come_from_the_files_until_the_index_is_built(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Art").id
    asked = store.append(cid, "user", "Did you paint anything at the lake?").id
    store.append(cid, "tool", "weather: sunny", tool_call_id="t1")  # not searched: no context
    answered = store.append(cid, "assistant", "Yes, a sunrise over the water.").id
    store.close()
    wanted = [(cid, asked), (cid, answered), ("gone", "m1")]
    fresh = ConversationStore(data_dir)  # its index is built on the first search
    from_files = fresh.message_contexts(wanted)
    assert from_files == {
        (cid, asked): "Did you paint anything at the lake?",
        (cid, answered): "Did you paint anything at the lake?\nYes, a sunrise over the water.",
    }
    fresh.search("sunrise")
    assert fresh.message_contexts(wanted) == from_files  # from the index, the same
    fresh.close()


def test_opening_again_reads_no_conversation_for_contexts_given_before(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Art").id
    store.append(cid, "user", "Did you paint anything at the lake?")
    answered = store.append(cid, "assistant", "Yes, a sunrise over the water.").id
    other = store.create("Walks").id
    walked = store.append(other, "user", "We walked to the old mill.").id
    memory = SemanticMemory.open(memory_dir(data_dir))
    learned = memory.add("A sunrise, finished.", source=Source(cid, answered), origin="curator")
    mill = memory.add("Visited a mill.", source=Source(other, walked), origin="curator")
    stop = tie_memories_to_messages(memory, store)
    stop()
    store.delete(other)  # while nothing is tied: the next opening finds it gone
    memory.close()
    store.close()

    asked: list[object] = []
    read = ConversationStore.message_contexts
    monkeypatch.setattr(
        ConversationStore,
        "message_contexts",
        lambda self, messages: asked.append(messages) or read(self, messages),
    )
    memory = SemanticMemory.open(memory_dir(data_dir))
    store = ConversationStore(data_dir)
    stop = tie_memories_to_messages(memory, store)
    assert asked == []  # every context was known: no conversation was read for them
    assert memory.unknown_contexts([learned.id, mill.id]) == []
    assert [h.item.id for h in memory.search("painting")] == [learned.id]
    assert memory.search("walked") == []  # its conversation is gone: so is its context
    stop()
    memory.close()
    store.close()


def test_contexts_of_many_conversations_build_the_index(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    wanted = []
    for n in range(FILES_FOR_CONTEXTS + 1):
        cid = store.create(f"Chat {n}").id
        store.append(cid, "user", f"Question number {n}?")
        wanted.append((cid, store.append(cid, "assistant", f"Answer number {n}.").id))
    store.close()
    fresh = ConversationStore(data_dir)
    found = fresh.message_contexts(wanted)
    assert found[wanted[3]] == "Question number 3?\nAnswer number 3."
    assert len(found) == len(wanted)
    fresh.close()


def test_a_memory_lifts_its_message_and_not_the_messages_around_it(data_dir: Path) -> None:
    # Two chats alike word for word; in one the reply has a memory that matches the query.
    store = ConversationStore(data_dir)
    ids = {}
    for name in ("kept", "plain"):
        cid = store.create(name).id
        first = store.append(cid, "user", "We walked around Porto all day.").id
        reply = store.append(cid, "assistant", "The old town of Porto is lovely.").id
        ids[name] = (cid, first, reply)
    other = store.create("Cooking").id
    for text in ("Pasta tonight?", "With basil.", "And garlic bread.", "Fine.", "Wine?", "No."):
        store.append(other, "user", text)  # so that "Porto" is a rare word
    cid, _, reply = ids["kept"]
    store.set_message_keys({(cid, reply): ["The user saw the lighthouse in Porto."]})
    scores = {h.message_id: h.score for h in store.search("Porto lighthouse")}
    _, kept_first, kept_reply = ids["kept"]
    _, plain_first, plain_reply = ids["plain"]
    assert scores[kept_reply] > scores[plain_reply]  # found also by its memory
    assert scores[plain_first] > 0.2  # a match of its own
    # The message before it takes from it what the reply says, not what its memory says.
    assert scores[kept_first] == pytest.approx(scores[plain_first])
    store.close()
