"""Ctrl+K with the built-in embedder (MiniLM): a short query that names someone or something
finds the message with that name first, ahead of messages only close in meaning, even when the
name is buried in a long message. (The fake server's hashed embeddings rank by chance; this
pins what users of the shipped embedder see.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.memory import ConversationStore
from assistant.memory.local_embedder import LocalEmbedder

CHATTER = (
    "We also talked about the weather, groceries, the car insurance renewal, a birthday present "
    "for my nephew, and whether to repaint the kitchen before the summer. "
)
CONVERSATIONS = {
    "Capital": [
        "What should I see in the capital of Portugal?",
        "The Alfama district, the castle and the tram 28 in Portugal's capital.",
    ],
    "Food": ["Portuguese capital city food tips", "Try pastel de nata in Portugal's capital."],
    "Catch-up": [CHATTER + "Oh and Lisbon came up once. " + CHATTER, "Noted."],
    "Cats": [f"My cat did something funny today, number {i}" for i in range(6)],
    "Vet": [CHATTER + "The vet said Miso is healthy. " + CHATTER, "Good news."],
    "Dentist": ["Book Dr. Okafor for a filling on Friday", "Booked."],
    "Teeth": [
        "I need a checkup with my dentist and a dental cleaning",
        "A dental cleaning every six months is good.",
    ],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ConversationStore:
    root: Path = tmp_path_factory.mktemp("names")
    made = ConversationStore(root, LocalEmbedder(threads=1))
    for title, texts in CONVERSATIONS.items():
        cid = made.create(title).id
        for n, text in enumerate(texts):
            made.append(cid, "user" if n % 2 == 0 else "assistant", text)
    assert made.embed_pending() > 0
    return made


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "holding"),
    [
        ("Lisbon", "Oh and Lisbon came up once."),
        ("lisbon", "Oh and Lisbon came up once."),
        ("Lisbon trip", "Oh and Lisbon came up once."),
        ("Miso", "The vet said Miso is healthy."),
        ("Okafor", "Book Dr. Okafor"),
        ("Dr Okafor", "Book Dr. Okafor"),
    ],
)
def test_the_message_with_the_name_comes_first(
    store: ConversationStore, query: str, holding: str
) -> None:
    hits = store.search(query, k=10)
    assert hits, query
    first = store.load(hits[0].conversation_id).messages
    text = next(m.content for m in first if m.id == hits[0].message_id)
    assert holding in text, (query, text)
    # Messages close in meaning only ("the capital of Portugal") rank below it.
    assert all(h.score < hits[0].score for h in hits[1:])
