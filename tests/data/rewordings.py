# ruff: noqa: RUF001 (the homoglyphs are the point)
"""A labelled set for tombstones by meaning: forgotten facts, the same facts in other words (a
synonym, a paraphrase, another language, homoglyphs), and other facts that must not match them.

Written for the test and the bench by hand; the other facts are deliberately close in topic
(the same person, place or thing, another fact about it), which is where a false positive hurts.
"""

from __future__ import annotations

from typing import Literal

How = Literal["synonym", "paraphrase", "language", "homoglyph"]

# (forgotten, the same fact reworded, how)
REWORDINGS: list[tuple[str, str, How]] = [
    ("The user's sister lives in Porto", "The user's sibling resides in Porto", "synonym"),
    ("The user is allergic to penicillin", "The user has a penicillin allergy", "paraphrase"),
    ("The user works as a nurse", "The user is employed as a nurse", "synonym"),
    ("The user's dog is called Biscuit", "Biscuit is the name of the user's dog", "paraphrase"),
    ("The user is afraid of flying", "The user has a fear of airplanes", "synonym"),
    (
        "The user drinks green tea every morning",
        "Each morning the user has green tea",
        "paraphrase",
    ),
    ("The user is learning to play the cello", "The user takes cello lessons", "paraphrase"),
    ("The user's birthday is on 12 March", "The user was born on March 12", "paraphrase"),
    ("The user is divorced", "The user's marriage ended in divorce", "paraphrase"),
    ("The user has two children", "The user is a parent of two kids", "synonym"),
    ("The user hates coriander", "The user really dislikes cilantro", "synonym"),
    (
        "The user owes their brother 500 euros",
        "The user's brother lent them 500 euros",
        "paraphrase",
    ),
    ("The user has diabetes", "The user is diabetic", "synonym"),
    ("The user is looking for a new job", "The user is searching for another job", "synonym"),
    ("The user voted for the Green party", "The user cast their vote for the Greens", "paraphrase"),
    (
        "The user's password hint is their cat's name",
        "The user uses the cat's name as a password hint",
        "paraphrase",
    ),
    ("The user's sister lives in Porto", "La hermana del usuario vive en Oporto", "language"),
    (
        "The user is allergic to penicillin",
        "L'utilisateur est allergique à la pénicilline",
        "language",
    ),
    ("The user works as a nurse", "Der Nutzer arbeitet als Krankenpfleger", "language"),
    ("The user's dog is called Biscuit", "Il cane dell'utente si chiama Biscuit", "language"),
    ("The user has diabetes", "O usuário tem diabetes", "language"),
    ("The user is afraid of flying", "Der Nutzer hat Flugangst", "language"),
    (
        "The user drinks green tea every morning",
        "L'utilisateur boit du thé vert chaque matin",
        "language",
    ),
    ("The user has two children", "El usuario tiene dos hijos", "language"),
    ("The user is learning to play the cello", "De gebruiker leert cello spelen", "language"),
    ("The user is divorced", "L'utente è divorziato", "language"),
    ("The user's sister lives in Porto", "The user's sіster lіves іn Pоrto", "homoglyph"),
    ("The user is allergic to penicillin", "Тhе usеr is аllеrgic tо pеnicillin", "homoglyph"),
    ("The user has diabetes", "The user has ｄｉａｂｅｔｅｓ", "homoglyph"),
    ("The user works as a nurse", "The user works as a nurѕe", "homoglyph"),
    ("The user's dog is called Biscuit", "The user's dοg is called Βiscuit", "homoglyph"),
    ("The user hates coriander", "Ｔｈｅ ｕｓｅｒ ｈａｔｅｓ ｃｏｒｉａｎｄｅｒ", "homoglyph"),
]

# New facts that say something else, often about the same thing as a forgotten one.
UNRELATED: list[str] = [
    "The user's brother lives in Porto",
    "The user's sister is a teacher",
    "The user visited Porto last summer",
    "The user is allergic to cats",
    "The user took penicillin as a child without problems",
    "The user's mother works as a nurse",
    "The user wants to become a doctor",
    "The user's cat is called Biscuit",
    "The user bought dog food yesterday",
    "The user loves flying kites",
    "The user drinks coffee in the afternoon",
    "The user grows green tomatoes",
    "The user plays the piano",
    "The user went to a cello concert",
    "The user's birthday party is on Saturday",
    "The user's brother was born in March",
    "The user got married in 2015",
    "The user has two cats",
    "The user's children go to school by bus",
    "The user likes coriander seeds in curry",
    "The user lent their brother a car",
    "The user's grandmother has diabetes",
    "The user runs 5 km every week",
    "The user is happy with their job",
    "The user volunteers for an environmental charity",
    "The user changes passwords every month",
    "The user lives in Lisbon",
    "The user prefers aisle seats on planes",
    "The user is vegetarian",
    "The user reads science fiction",
    "The user's favourite colour is blue",
    "The user has a meeting on Tuesday",
    "The user is learning Portuguese",
    "The user's car is a red Fiat",
    "The user speaks French at work",
    "The user takes the train to work",
    "The user is training for a marathon",
    "The user keeps bees in the garden",
    "The user dislikes horror films",
    "The user's flat has a balcony",
]

# A second set, written after the threshold was chosen and never used to choose it: rewordings of
# the same facts, and close calls (one word swapped or added: another person, place, number, or
# the opposite), which is where a sketch of the meaning errs.
CLOSE_REWORDINGS: list[tuple[str, str, How]] = [
    ("The user has diabetes", "The user suffers from diabetes", "paraphrase"),
    (
        "The user is allergic to penicillin",
        "Penicillin gives the user an allergic reaction",
        "paraphrase",
    ),
    ("The user works as a nurse", "The user's job is nursing", "paraphrase"),
    ("The user is afraid of flying", "The user is scared of getting on planes", "synonym"),
    (
        "The user drinks green tea every morning",
        "The user starts every day with a cup of green tea",
        "paraphrase",
    ),
    ("The user hates coriander", "The user can't stand the taste of coriander", "paraphrase"),
    ("The user is looking for a new job", "The user wants to change jobs", "paraphrase"),
    ("The user's sister lives in Porto", "The user has a sister who lives in Porto", "paraphrase"),
    ("The user's dog is called Biscuit", "The user has a dog named Biscuit", "paraphrase"),
    ("The user has two children", "The user has a son and a daughter", "paraphrase"),
    ("The user is learning to play the cello", "The user is taking up the cello", "synonym"),
    ("The user is divorced", "The user and their spouse divorced", "paraphrase"),
]
CLOSE_CALLS: list[str] = [
    "The user's sister lives in Lisbon",
    "The user's aunt lives in Porto",
    "The user is allergic to peanuts",
    "The user's brother is allergic to penicillin",
    "The user's son has diabetes",
    "The user works as a teacher",
    "The user's wife works as a nurse",
    "The user's dog is called Max",
    "The user's neighbour's dog is called Biscuit",
    "The user drinks black coffee every morning",
    "The user is afraid of spiders",
    "The user loves coriander",
    "The user has three children",
    "The user is learning to play the violin",
    "The user found a new job",
    "The user's parents are divorced",
    "The user owes their sister 50 euros",
    "The user voted for the Labour party",
    "The user's birthday is on 12 May",
    "The user's password hint is their mother's maiden name",
]
