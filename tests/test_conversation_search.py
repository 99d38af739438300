"""Hybrid conversation search: vectors for messages (background, resumable), fused with BM25."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from assistant.errors import ProviderError
from assistant.memory import ConversationStore, Message, message_vectors
from assistant.memory.message_vectors import MessageVectors, cache_path
from assistant.memory.neighbours import neighbour_relevance
from assistant.memory.periods import Timeline
from assistant.memory.ranking import SearchConfig
from assistant.memory.when import time_span
from tests.clusters import DIM, centres, clustered
from tests.embedders import HashEmbedder

# Words of one meaning share a direction, so search by meaning finds what keywords cannot.
CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "dog": 1, "puppy": 1, "rain": 2, "storm": 2}


class ConceptEmbedder:
    """An `Embedder` whose vectors say which concepts a text mentions; counts embedded texts."""

    name = "concepts"
    dim = 8

    def __init__(self) -> None:
        self.texts = 0
        self.fail_after: int | None = None

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.fail_after is not None and self.texts + len(texts) > self.fail_after:
            raise ProviderError("the embedding server went away")
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                if word in CONCEPTS:
                    out[row, CONCEPTS[word]] += 1
            out[row, 7] += 0.1  # never a zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def fill(store: ConversationStore) -> dict[str, str]:
    """Two conversations; returns message ids by a short name."""
    garage = store.create("Garage").id
    ids = {
        "ask": store.append(garage, "user", "Where did I park the automobile?").id,
        "park": store.append(garage, "assistant", "In the garage on Elm Street.").id,
    }
    pets = store.create("Pets").id
    ids["puppy"] = store.append(pets, "user", "My puppy chewed a shoe").id
    store.append(pets, "tool", "dog facts", tool_call_id="t1")  # tool results are not searched
    return ids


def test_messages_are_found_by_meaning(data_dir: Path) -> None:
    embedder = ConceptEmbedder()
    store = ConversationStore(data_dir, embedder)
    ids = fill(store)
    assert [h.message_id for h in store.search("vehicle")] == []  # no vectors yet: keywords only
    progress: list[tuple[int, int]] = []
    assert store.embed_pending(lambda done, total: progress.append((done, total))) == 3
    assert progress[0] == (0, 3) and progress[-1] == (3, 3)
    assert store.pending_embeddings() == 0
    hits = store.search("vehicle")
    assert hits[0].message_id == ids["ask"]
    assert 0 < hits[0].score <= 1
    assert [h.message_id for h in store.search("dog")] == [ids["puppy"]]
    assert store.search("storm") == []  # nothing near enough in meaning, no shared word


def test_a_reply_is_found_through_the_message_before_it(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    ids = fill(store)
    hits = store.search("park automobile")
    assert [h.message_id for h in hits][:2] == [ids["ask"], ids["park"]]
    assert hits[1].snippet == "In the garage on Elm Street."


def test_embedding_resumes_where_it_stopped(data_dir: Path) -> None:
    embedder = ConceptEmbedder()
    store = ConversationStore(data_dir, embedder)
    fill(store)
    for i in range(200):
        store.append(store.create(f"Chat {i}").id, "user", f"note {i} about the rain")
    embedder.fail_after = 100
    with pytest.raises(ProviderError):
        store.embed_pending()
    assert cache_path(store.directory, "concepts").exists()  # what was done is kept
    again = ConversationStore(data_dir, ConceptEmbedder())
    assert again.pending_embeddings() == 203 - 64  # one batch was embedded before the failure
    assert again.embed_pending() == 203 - 64
    again.close()
    assert ConversationStore(data_dir, ConceptEmbedder()).pending_embeddings() == 0


def test_a_new_embedder_starts_afresh_and_none_means_keywords(data_dir: Path) -> None:
    store = ConversationStore(data_dir, ConceptEmbedder())
    ids = fill(store)
    store.embed_pending()
    store.set_embedder(HashEmbedder("hash", 16))
    assert store.pending_embeddings() == 3  # another model: its own vectors
    store.set_embedder(None)
    assert store.pending_embeddings() == 0
    assert [h.message_id for h in store.search("puppy")] == [ids["puppy"]]
    assert store.search("vehicle") == []


def test_a_damaged_cache_is_ignored(data_dir: Path) -> None:
    store = ConversationStore(data_dir, ConceptEmbedder())
    fill(store)
    store.embed_pending()
    cache_path(store.directory, "concepts").write_bytes(b"not a zip file")
    assert MessageVectors.load(store.directory, "concepts") is None
    assert ConversationStore(data_dir, ConceptEmbedder()).pending_embeddings() == 3


def test_time_span_of_a_query() -> None:
    now = datetime(2024, 3, 14, 15, 0, tzinfo=UTC)  # a Thursday
    assert time_span("What did we plan in May 2023?") == (
        datetime(2023, 5, 1, tzinfo=UTC),
        datetime(2023, 6, 1, tzinfo=UTC),
    )
    assert time_span("trips in December, 2022") == (
        datetime(2022, 12, 1, tzinfo=UTC),
        datetime(2023, 1, 1, tzinfo=UTC),
    )
    assert time_span("books I read in 2021") == (
        datetime(2021, 1, 1, tzinfo=UTC),
        datetime(2022, 1, 1, tzinfo=UTC),
    )
    assert time_span("what did I say last week", now) == (
        datetime(2024, 3, 4, tzinfo=UTC),
        datetime(2024, 3, 11, tzinfo=UTC),
    )
    assert time_span("last month", now) == (
        datetime(2024, 2, 1, tzinfo=UTC),
        datetime(2024, 3, 1, tzinfo=UTC),
    )
    assert time_span("the 2021 budget") is None  # a bare number may not be a time
    assert time_span("may I ask about the car") is None


def test_a_named_period_favours_messages_written_in_it(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    messages = [
        Message(f"m{i}", f"m{i - 1}" if i else None, "user", text, when)
        for i, (text, when) in enumerate(
            [
                ("We went hiking in the Alps", "2023-05-20T10:00:00Z"),
                ("Hiking again, this time in Wales", "2023-08-02T10:00:00Z"),
                ("More hiking by the sea", "2024-01-09T10:00:00+02:00"),
            ]
        )
    ]
    store.import_conversation("walks", "Walks", messages[0].created_at, messages)
    assert store.search("hiking in August 2023")[0].message_id == "m1"
    assert store.search("hiking in May 2023")[0].message_id == "m0"
    top = store.search("hiking in 2024")[0]
    assert (top.message_id, top.created_at) == ("m2", "2024-01-09T08:00:00.000000Z")


def test_many_vectors_are_searched_through_a_projection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the exact threshold, candidates picked in the projection hold the exact best."""
    monkeypatch.setattr(message_vectors, "EXACT_UP_TO", 200)
    rng = np.random.default_rng(3)
    topics = centres(rng, 8)
    rows = clustered(rng, 600, topics)
    vectors = MessageVectors("test", DIM)
    vectors.add([("c", f"m{i}") for i in range(300)], rows[:300])
    assert vectors.projection is not None  # fitted on passing the threshold
    vectors.add([("c", f"m{i}") for i in range(300, 600)], rows[300:])
    held = []
    for query in clustered(rng, 20, topics):
        exact = np.argsort(-(rows @ query))[:10]
        found, sims = vectors.nearest(query, 60)
        assert len(found) == 60
        held.append(len(set(exact.tolist()) & set(found.tolist())) / 10)
        np.testing.assert_allclose(sims, vectors.rows(found) @ query, rtol=1e-5)  # exact
        np.testing.assert_allclose(sims, rows[found] @ query, atol=2e-3)  # 8 bits a value
    assert np.mean(held) >= 0.9  # a tenth of the rows as candidates hold the exact top 10
    vectors.save(tmp_path)
    again = MessageVectors.load(tmp_path, "test")
    assert again is not None and again.projection is not None
    assert np.array_equal(again.rows(range(600)), vectors.rows(range(600)))  # same when reopened


def test_search_stays_current_as_messages_come_and_go(data_dir: Path) -> None:
    store = ConversationStore(data_dir, ConceptEmbedder())
    ids = fill(store)
    store.embed_pending()
    assert [h.message_id for h in store.search("vehicle")] == [ids["ask"]]  # arrays built
    later = store.create("Weather").id
    storm = store.append(later, "user", "A storm is coming").id
    assert store.search("rain") == []  # not embedded yet, and no shared word
    assert store.pending_embeddings() == 1
    assert store.embed_pending() == 1
    assert [h.message_id for h in store.search("rain")] == [storm]
    store.delete(later)
    assert store.search("rain") == []
    assert [h.message_id for h in store.search("vehicle")] == [ids["ask"]]


def test_days_and_relative_periods_are_resolved_against_now() -> None:
    now = datetime(2023, 9, 1, 12, 0, tzinfo=UTC)
    day = (datetime(2023, 10, 12, tzinfo=UTC), datetime(2023, 10, 15, tzinfo=UTC))
    assert time_span("What did Melanie show on October 13, 2023?", now) == day
    assert time_span("the party on 13th October, 2023", now) == day
    june = (datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 7, 1, tzinfo=UTC))
    assert time_span("When did we go camping in June?", now) == june
    october = (datetime(2022, 10, 1, tzinfo=UTC), datetime(2022, 11, 1, tzinfo=UTC))
    assert time_span("the trip last October", now) == october  # the last one before now
    september = datetime(2022, 9, 1, tzinfo=UTC), datetime(2022, 10, 1, tzinfo=UTC)
    assert time_span("last September", now) == september  # this one has only begun
    assert time_span("two weeks ago", now) == (
        datetime(2023, 8, 15, tzinfo=UTC),  # 18 August, give or take half a week
        datetime(2023, 8, 23, tzinfo=UTC),
    )
    assert time_span("31 June, 2023", now) is None  # no such day
    assert time_span("in May I ask", now) is not None  # "in May" is a month...
    assert time_span("may I ask", now) is None  # ...but a bare "may" is not


def test_a_relative_period_favours_messages_of_then(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    messages = [
        Message(f"m{i}", f"m{i - 1}" if i else None, "user", text, when)
        for i, (text, when) in enumerate(
            [
                ("Camping by the lake", "2023-06-10T10:00:00Z"),
                ("Camping in the hills", "2023-07-02T10:00:00Z"),
            ]
        )
    ]
    store.import_conversation("trips", "Trips", messages[0].created_at, messages)
    now = datetime(2023, 9, 1, tzinfo=UTC)
    assert store.search("camping in June", now=now)[0].message_id == "m0"
    assert store.search("camping in July", now=now)[0].message_id == "m1"
    assert store.search("camping on 10 June, 2023")[0].message_id == "m0"


def test_a_conversation_s_summary_favours_its_messages(data_dir: Path) -> None:
    store = ConversationStore(data_dir)

    def chat(cid: str, text: str, summary: str) -> str:
        message = Message(f"{cid}-1", None, "user", text, "2024-05-01T10:00:00Z")
        store.import_conversation(cid, cid, message.created_at, [message], summary=summary)
        return message.id

    lisbon = chat("holiday", "The trip was booked today.", "Planning a holiday in Lisbon.")
    berlin = chat("work", "The trip was booked today!", "Work travel to the Berlin office.")
    chat("dinner", "Soup again.", "Cooking dinner for friends.")
    chat("garden", "Tomatoes again.", "Planting tomatoes in the garden.")
    plain = chat("other", "Another trip was booked.", "")
    assert store.search("trip to Lisbon")[0].message_id == lisbon
    assert store.search("trip to Berlin")[0].message_id == berlin
    assert store.search("Lisbon office") == []  # a summary alone makes no message a result
    assert plain in [h.message_id for h in store.search("trip to Lisbon")]
    store.set_summary("work", "Planning a trip to Lisbon next year.", berlin)
    assert store.search("trip to Lisbon")[0].message_id == berlin
    store.close()

    again = ConversationStore(data_dir)  # the summaries come from the index cache
    assert again.search("trip to Lisbon")[0].message_id == berlin
    again.delete("work")
    assert again.search("trip to Lisbon")[0].message_id == lisbon
    again.close()
    plain_config = ConversationStore(data_dir, config=SearchConfig(summary_weight=0.0))
    ranked = [h.message_id for h in plain_config.search("trip to Lisbon")]
    assert ranked == [h.message_id for h in plain_config.search("trip to Berlin")]


def test_neighbour_relevance_is_the_better_of_the_messages_around() -> None:
    # Keys 1, 2, 3 follow each other in one conversation; 7 follows 6, which is no candidate.
    order = [2, 7, 1, 3]
    relevance = np.array([0.5, 0.9, 0.2, 0.8])
    around = neighbour_relevance(order, relevance, {2: 1, 3: 2, 7: 6})
    assert around.tolist() == [0.8, 0.0, 0.5, 0.5]
    assert neighbour_relevance([], np.zeros(0), {}).tolist() == []


def test_a_message_next_to_a_good_match_rises(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    chats = {}
    for cid, first, reply in (
        ("class", "I start a painting class.", "Cool, enjoy it."),
        ("sunrise", "I made this painting today.", "What a sunrise painting, the colours!"),
    ):
        messages = [
            Message(f"{cid}-1", None, "user", first, "2024-05-01T10:00:00Z"),
            Message(f"{cid}-2", f"{cid}-1", "assistant", reply, "2024-05-01T10:01:00Z"),
        ]
        store.import_conversation(cid, cid, messages[0].created_at, messages)
        chats[cid] = messages[0].id

    def scores(found: ConversationStore) -> dict[str, float]:
        return {h.message_id: h.score for h in found.search("sunrise painting")}

    # Alike on their own: a sentence of five words with "painting" once.
    other = ConversationStore(data_dir, config=SearchConfig(neighbour_weight=0.0))
    plain = scores(other)
    other.close()
    assert plain[chats["sunrise"]] == plain[chats["class"]]
    # Beside the best match ("What a sunrise painting"), its question rises above the other.
    with_neighbours = scores(store)
    assert with_neighbours["sunrise-2"] == max(with_neighbours.values())
    assert with_neighbours[chats["sunrise"]] > with_neighbours[chats["class"]]
    store.close()


def test_weeks_of_a_month_and_seasons_are_resolved() -> None:
    now = datetime(2023, 9, 1, 12, 0, tzinfo=UTC)

    def span(query: str, when: datetime = now) -> tuple[str, str] | None:
        found = time_span(query, when)
        return None if found is None else (found[0].date().isoformat(), found[1].date().isoformat())

    assert span("the forest picture shared on December 1,2023") == ("2023-11-30", "2023-12-03")
    assert span("Which country was Tim visiting in the second week of November?") == (
        "2022-11-08",  # the last November up to now
        "2022-11-15",
    )
    assert span("the last week of February 2024") == ("2024-02-23", "2024-03-01")
    assert span("What state did Joanna visit in summer 2021?") == ("2021-06-01", "2021-09-01")
    assert span("winter of 2022") == ("2022-12-01", "2023-03-01")
    assert span("a picture near Fort Wayne last summer") == ("2023-06-01", "2023-09-01")
    assert span("last summer", datetime(2023, 7, 1, tzinfo=UTC)) == ("2022-06-01", "2022-09-01")
    assert span("this summer", datetime(2023, 7, 1, tzinfo=UTC)) == ("2023-06-01", "2023-09-01")
    assert span("in the winter", datetime(2024, 1, 10, tzinfo=UTC)) == ("2023-12-01", "2024-03-01")
    assert span("during the spring") == ("2023-03-01", "2023-06-01")
    assert span("the fall of Rome") is None  # a season only after "in", "last" and the like
    assert span("summer reading list") is None


def test_the_best_messages_of_a_named_period_join_the_candidates(data_dir: Path) -> None:
    # Each ranking is fused to depth 2: March concerts fill it, the May one is not in by words.
    config = SearchConfig(depth=2, neighbour_weight=0.0, summary_weight=0.0)
    store = ConversationStore(data_dir, config=config)
    written = {}
    for n, month in enumerate(("03", "03", "03", "05")):
        at = f"2023-{month}-1{n}T10:00:00Z"
        said = "What a concert, the best concert!" if month == "03" else "The concert was fine."
        message = Message(f"m{n}", None, "user", said, at)
        store.import_conversation(f"c{n}", f"c{n}", at, [message])
        written[message.id] = month
    filler = [
        Message(f"f{n}", None, "user", text, "2023-01-01T10:00:00Z")
        for n, text in enumerate(("Pasta tonight?", "With basil.", "Fine.", "Wine?", "No."))
    ]
    store.import_conversation("food", "food", filler[0].created_at, filler)  # "concert" is rare
    now = datetime(2023, 9, 1, tzinfo=UTC)
    found = store.search("the concert in May 2023", k=1, now=now)
    assert [written[h.message_id] for h in found] == ["05"]
    plain = ConversationStore(data_dir, config=SearchConfig(depth=2, period_candidates=False))
    assert [
        written[h.message_id] for h in plain.search("the concert in May 2023", k=1, now=now)
    ] == ["03"]
    plain.close()
    store.close()


def test_a_timeline_finds_the_keys_of_a_period_after_changes() -> None:
    times = Timeline({1: "2023-05-02", 2: "2023-03-01", 3: "2023-05-20"})
    assert times.written_in("2023-05-01", "2023-06-01") == [1, 3]
    times[4] = "2023-05-10"
    del times[1]
    assert times.written_in("2023-05-01", "2023-06-01") == [4, 3]
    times[5] = "2023-05-30"  # newer than all: appended without sorting again
    times[2] = "2023-05-01"  # an earlier time for a key: sorted again
    assert times.written_in("2023-05-01", "2023-06-01") == [2, 4, 3, 5]
    assert times.written_in("2024-01-01", "2025-01-01") == []
