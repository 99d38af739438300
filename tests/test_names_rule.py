"""The "People's names" never-topic: it refuses people's names, and a pet's or a thing's name
only where the sentence says plainly that it names no person (a person's name kept against
the rule is worse than a pet's name left out)."""

from __future__ import annotations

import pytest

from assistant.memory_policy import MemoryPolicy

NAMES = MemoryPolicy("automatic", ("names",))


@pytest.mark.parametrize(
    "text",
    [
        "The user's dog is called Rex.",
        "The user's cat is named Miso.",
        "The dog's name is Rex.",
        "The user has a guinea pig called Bob.",
        "The user's car is called Herbie.",
        "The user's project is called Falcon.",
    ],
)
def test_a_pet_or_a_thing_keeps_its_name(text: str) -> None:
    assert NAMES.blocked_by(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "The user's sister is called Ana.",
        "The user met someone called Ana.",
        "A colleague called Tom lent the user his car.",
        "The user's dentist is called Dr Silva.",
        "The user's dog walker is called Ben.",  # a person, though a dog is named
        "The user's sister's dog is called Rex.",  # a person in the clause: refused
        "The user's boss is called Mark and his dog is called Rex.",
        "The user's neighbour, who owns a dog, is called Ben.",
    ],
)
def test_a_persons_name_is_still_refused(text: str) -> None:
    assert NAMES.blocked_by(text) == "People's names"
