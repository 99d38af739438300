"""The user's say in what is remembered: when the assistant may keep a memory (the mode) and the
topics it must never keep (built-in ones and the user's own), with the deterministic guard that
checks a memory against them.

The modes: "automatic" (the curator keeps what it finds worth keeping), "ask" (what it finds
waits in the review inbox until the user accepts it) and "on_request" (only what the user asks
to remember, in so many words). The never-topics reach the curator as a rule in its prompt; the
guard here catches what it can without a model (English words and patterns), whatever the
model did.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

PolicyMode = Literal["automatic", "ask", "on_request"]
POLICY_MODES: tuple[str, ...] = get_args(PolicyMode)
OWN_TOPIC_LIMIT = 80  # characters of one topic of the user's own
OWN_TOPICS_LIMIT = 50  # topics of the user's own


@dataclass(frozen=True)
class NeverTopic:
    """A built-in topic the user can rule out: its label, the curator's rule, and the pattern
    (on the lowercased text, or as written with `cased`) that recognises it."""

    label: str
    rule: str
    pattern: re.Pattern[str] | None = None
    cased: re.Pattern[str] | None = None
    spares: Callable[[str, re.Match[str]], bool] | None = None  # a `cased` match that is not it

    def found_in(self, text: str) -> bool:
        """Whether `text` is about this topic, as far as the patterns can tell."""
        if self.pattern is not None and self.pattern.search(text.lower()):
            return True
        if self.cased is None:
            return False
        spares = self.spares
        return any(spares is None or not spares(text, m) for m in self.cased.finditer(text))


def _words(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")


_RELATIVES = (
    r"wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|son|daughter|child|kid|baby|"
    r"mother|mom|mum|father|dad|brother|sister|sibling|cousin|aunt|uncle|nephew|niece|"
    r"grandmother|grandfather|grandma|grandpa|friend|colleague|co-?worker|boss|manager|"
    r"neighbou?r|roommate|flatmate"
)
_NAME = r"[A-Z][a-zà-ÿ]+(?:[-'][A-Z]?[a-zà-ÿ]+)?"
_NAMING = re.compile(r"(?:called|named|name is|names are)\s")
# What a "called Rex" may name that is no person: a pet, an animal or a thing.
_NOT_PEOPLE = re.compile(
    r"\b(?:pets?|dogs?|pupp(?:y|ies)|cats?|kittens?|horses?|pon(?:y|ies)|birds?|parrots?|"
    r"budgies?|fish|goldfish|hamsters?|rabbits?|bunn(?:y|ies)|guinea pigs?|tortoises?|turtles?|"
    r"snakes?|lizards?|ferrets?|rats?|mice|cows?|goats?|sheep|chickens?|hens?|animals?|"
    r"cars?|boats?|bikes?|bicycles?|vans?|plants?|laptops?|computers?|phones?|robots?|"
    r"blogs?|podcasts?|bands?|compan(?:y|ies)|startups?|shops?|projects?|apps?|games?|"
    r"houses?|cottages?)\b",
    re.IGNORECASE,
)
_PEOPLE = re.compile(
    rf"\b(?:{_RELATIVES}|person|people|man|men|woman|women|guy|girl|boy|lady|teacher|"
    r"doctor|dentist|therapist|lawyer|client|customer|landlord|landlady|someone|he|she|"
    r"him|her|his|they|them)\b",
    re.IGNORECASE,
)


def _names_no_person(text: str, match: re.Match[str]) -> bool:
    """Whether a "called X" in `text` plainly names a pet or a thing: the word it follows
    ("dog" in "the user's dog is called Rex", "the dog's name is Rex") is an animal or a
    thing, and its clause speaks of no person. Kept narrow on purpose: a person's name kept
    against the user's rule is worse than a pet's name left out."""
    if not _NAMING.match(match.group()):
        return False
    clause = re.split(r"[.;!?,]", text[: match.start()])[-1]
    named = re.search(r"([A-Za-z]+(?: pigs?)?)(?:'s?)?\s+(?:(?:is|was)\s+)?$", clause)
    if named is None or not _NOT_PEOPLE.fullmatch(named.group(1)):
        return False
    return not _PEOPLE.search(clause)


NEVER_TOPICS: dict[str, NeverTopic] = {
    "health": NeverTopic(
        "Health",
        "health (illnesses, symptoms, diagnoses, medication, treatment, therapy, pregnancy, "
        "mental health, disabilities)",
        _words(
            r"health\w*",
            r"doctors?",
            r"physicians?",
            r"hospital\w*",
            r"clinic\w*",
            r"diagnos\w+",
            r"ill(?:ness\w*)?",
            r"sick\w*",
            r"disease\w*",
            r"disorder\w*",
            r"medic(?:ation|ine|al)\w*",
            r"prescri\w+",
            r"pills?",
            r"symptoms?",
            r"therap\w+",
            r"surger\w+",
            r"pregnan\w+",
            r"depress\w+",
            r"anxiety",
            r"cancer\w*",
            r"tumou?rs?",
            r"diabet\w+",
            r"allerg\w+",
            r"asthma\w*",
            r"migraines?",
            r"blood pressure",
            r"adhd",
            r"autis\w+",
            r"psychiatr\w+",
            r"psycholog\w+",
            r"dentist\w*",
            r"injur\w+",
            r"chronic",
            r"insulin",
            r"antidepressants?",
        ),
    ),
    "money": NeverTopic(
        "Money",
        "money (income, salary, savings, debts, loans, spending, prices the user pays, "
        "investments, taxes, bank details)",
        re.compile(
            r"\b(?:salar\w+|income\w*|wages?|earns?|earning\w*|debts?|loans?|mortgage\w*|"
            r"bank\w*|savings|credit cards?|invest\w+|stocks?|crypto\w*|bitcoin|"
            r"pension\w*|tax(?:es)?|net worth|owes?|bankrupt\w*|budget\w*|paycheck\w*|"
            r"rent)\b|[$€£¥]\s?\d|\b\d[\d,.]*\s?(?:k|dollars?|euros?|pounds?|usd|eur|gbp)\b"
        ),
    ),
    "names": NeverTopic(
        "People's names",
        'other people\'s names (say "the user\'s sister", "a colleague" instead of a name, '
        "or leave the memory out)",
        cased=re.compile(  # names are told by their capitals
            rf"\b(?:called|named|name is|names are)\s+{_NAME}"
            rf"|\b(?i:{_RELATIVES})(?:,|\s+is)?\s+{_NAME}\b"
            rf"|\b{_NAME}\s+is\s+(?:the user's|my|his|her|their)\s+(?i:{_RELATIVES})\b"
        ),
        spares=_names_no_person,
    ),
}


@dataclass(frozen=True)
class MemoryPolicy:
    """The mode and the topics never to remember (built-in keys of NEVER_TOPICS, and the
    user's own words)."""

    mode: PolicyMode = "automatic"
    never: tuple[str, ...] = ()
    own: tuple[str, ...] = ()

    def rule(self) -> str:
        """The never-topics as a rule for the curator's prompt ("" if there are none)."""
        topics = [NEVER_TOPICS[key].rule for key in self.never if key in NEVER_TOPICS]
        topics += [f"anything about {_quoted(topic)}" for topic in self.own]
        if not topics:
            return ""
        listed = "".join(f"\n- {topic}" for topic in topics)
        return (
            "The user asked that these never be remembered. Skip every memory about them, in "
            f"any language, even if it seems important:{listed}"
        )

    def blocked_by(self, text: str) -> str | None:
        """The never-topic `text` is about (its label, or the user's own words), if the guard
        can tell; None if it finds none."""
        for key in self.never:
            topic = NEVER_TOPICS.get(key)
            if topic is not None and topic.found_in(text):
                return topic.label
        if self.own:
            stems = set(_content(text))
            for own in self.own:
                wanted = _content(own)
                if wanted and all(s in stems for s in wanted):
                    return own
        return None

    def to_json(self) -> dict[str, object]:
        """The policy as an export writes it."""
        return {"mode": self.mode, "never": list(self.never), "own": list(self.own)}

    def describe(self) -> str:
        """The policy in words, e.g. "Ask first; never: Health, “my ex”"."""
        topics = [NEVER_TOPICS[key].label for key in self.never if key in NEVER_TOPICS]
        topics += [f"“{topic}”" for topic in self.own]
        never = f"; never: {', '.join(topics)}" if topics else ""
        return MODE_WORDS[self.mode] + never


AUTOMATIC = MemoryPolicy()
MODE_WORDS: dict[str, str] = {
    "automatic": "Keep what it finds",
    "ask": "Ask first",
    "on_request": "Only when asked to remember",
}


def clean_own_topics(lines: list[str]) -> list[str]:
    """The user's own never-topics from what they typed: one per line, trimmed, no blanks or
    repeats (case aside), each and their number within limits (ValueError if not)."""
    topics: dict[str, str] = {}
    for line in lines:
        topic = " ".join(line.split())
        if not topic:
            continue
        if len(topic) > OWN_TOPIC_LIMIT:
            raise ValueError(f"A topic can be at most {OWN_TOPIC_LIMIT} characters: {topic[:30]}…")
        if not _content(topic):
            raise ValueError(f"{topic!r} has no word to look for.")
        topics.setdefault(topic.casefold(), topic)
    if len(topics) > OWN_TOPICS_LIMIT:
        raise ValueError(f"At most {OWN_TOPICS_LIMIT} topics of your own.")
    return list(topics.values())


def _content(text: str) -> list[str]:
    """The stems of the words of `text` that carry meaning."""
    # Loaded here: the settings read this module as the window's frame starts, without memory.
    from assistant.memory.text import is_informative, stem, tokenize

    return [stem(w) for w in tokenize(text) if is_informative(w)]


def _quoted(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'
