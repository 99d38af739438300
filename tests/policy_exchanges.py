"""A labelled set of exchanges for the memory policy: what the user said, what the (scripted)
model extracted from it, and what must be remembered, wait for review, or be left out.

The model's answers include slips (a memory about a never-topic, one the user did not ask for)
that the deterministic guard must catch, and answers where the model followed the rule in its
prompt (it extracted nothing). `label` says why the expected outcome is right.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assistant.memory_policy import MemoryPolicy

NEVER = MemoryPolicy("automatic", ("health", "money", "names"), ("my ex", "politics"))
ON_REQUEST = MemoryPolicy("on_request")
ON_REQUEST_NEVER = MemoryPolicy("on_request", ("health",))
ASK = MemoryPolicy("ask", ("money",))


def said(text: str, *, kind: str = "fact", asked: bool | None = None) -> dict[str, Any]:
    """A memory as the model extracts it."""
    entry: dict[str, Any] = {"kind": kind, "text": text, "importance": 0.6, "topic": "life"}
    if asked is not None:
        entry["asked"] = asked
    return entry


@dataclass(frozen=True)
class Exchange:
    """One labelled exchange: the policy, what was there before, what the model answers, and
    the texts expected remembered (active memories added) and waiting for review."""

    label: str
    policy: MemoryPolicy
    user: str
    extracted: tuple[dict[str, Any], ...]
    remembered: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()
    existing: tuple[str, ...] = ()  # memories there before
    rejected: tuple[str, ...] = ()  # proposals turned down before (tombstones)
    pending: tuple[str, ...] = ()  # proposals waiting before
    decisions: tuple[dict[str, Any], ...] = field(default=())  # the model's, by candidate


EXCHANGES: tuple[Exchange, ...] = (
    # -- never-topics, automatic mode ----------------------------------------------------------
    Exchange(
        "health: an allergy the model extracted is left out",
        NEVER,
        "I'm allergic to penicillin, so no amoxicillin for me.",
        (said("The user is allergic to penicillin"),),
    ),
    Exchange(
        "money: a salary is left out",
        NEVER,
        "My salary just went up to 85k.",
        (said("The user earns 85k a year"),),
    ),
    Exchange(
        "names: the model wrote the relation, not the name: kept",
        NEVER,
        "My sister Ana lives in Porto.",
        (said("The user's sister lives in Porto"),),
        remembered=("The user's sister lives in Porto",),
    ),
    Exchange(
        "names: the model slipped and wrote the name: left out",
        NEVER,
        "My sister Ana lives in Porto.",
        (said("The user's sister is called Ana"),),
    ),
    Exchange(
        "health: medication is left out",
        NEVER,
        "I started on antidepressants last month.",
        (said("The user takes antidepressants"),),
    ),
    Exchange(
        "no never-topic: a preference is kept",
        NEVER,
        "I prefer tea over coffee, always have.",
        (said("The user prefers tea over coffee", kind="preference"),),
        remembered=("The user prefers tea over coffee",),
    ),
    Exchange(
        "no never-topic: a plan is kept",
        NEVER,
        "I'm learning Portuguese before the move.",
        (said("The user is learning Portuguese", kind="plan"),),
        remembered=("The user is learning Portuguese",),
    ),
    Exchange(
        "the user's own topic 'my ex' is left out",
        NEVER,
        "My ex moved to Berlin, which is a relief.",
        (said("The user's ex lives in Berlin"),),
    ),
    Exchange(
        "the user's own topic 'politics' is left out (word forms aside)",
        NEVER,
        "I vote green; political questions matter to me.",
        (said("The user cares about political questions"),),
    ),
    Exchange(
        "money: a mortgage is left out",
        NEVER,
        "We took a mortgage on the flat.",
        (said("The user has a mortgage on their flat"),),
    ),
    Exchange(
        "money: an amount in euros is left out",
        NEVER,
        "The new bike cost me €1200.",
        (said("The user paid €1200 for a new bike"),),
    ),
    Exchange(
        "health: a pregnancy is left out",
        NEVER,
        "I'm pregnant, due in March!",
        (said("The user is pregnant and due in March", kind="event"),),
    ),
    Exchange(
        "two memories of one message: the diagnosis goes, the hobby stays",
        NEVER,
        "Since the diabetes diagnosis I go hiking every weekend.",
        (said("The user has diabetes"), said("The user goes hiking every weekend")),
        remembered=("The user goes hiking every weekend",),
    ),
    Exchange(
        "names: a colleague's name is left out",
        NEVER,
        "Meeting my colleague John about the budget tomorrow.",
        (said("The user meets their colleague John tomorrow", kind="event"),),
    ),
    Exchange(
        "health in German: the model followed the rule and extracted nothing",
        NEVER,
        "Ich habe seit Jahren Migräne.",
        (),
    ),
    Exchange(
        "names: 'boss, Maria' is left out",
        NEVER,
        "My boss, Maria, wants the report on Friday.",
        (said("The user's boss, Maria, wants the report on Friday", kind="task"),),
    ),
    Exchange(
        "names: '<Name> is my friend' is left out",
        NEVER,
        "Tom is my friend from school; we climb together.",
        (said("Tom is the user's friend from school"),),
    ),
    Exchange(
        "a place name is not a person's name: kept",
        NEVER,
        "I moved to Lisbon in spring.",
        (said("The user lives in Lisbon"),),
        remembered=("The user lives in Lisbon",),
    ),
    # -- only when the user says "remember" ----------------------------------------------------
    Exchange(
        "on request: the user asked, in English",
        ON_REQUEST,
        "Remember that my flight is on May 3.",
        (said("The user's flight is on May 3", kind="event", asked=True),),
        remembered=("The user's flight is on May 3",),
    ),
    Exchange(
        "on request: the user did not ask; the model slipped: left out",
        ON_REQUEST,
        "My flight is on May 3.",
        (said("The user's flight is on May 3", kind="event", asked=False),),
    ),
    Exchange(
        "on request: no 'asked' at all is not a request",
        ON_REQUEST,
        "I like jazz a lot.",
        (said("The user likes jazz", kind="preference"),),
    ),
    Exchange(
        "on request: asked in German",
        ON_REQUEST,
        "Merk dir: ich trinke keinen Kaffee.",
        (said("The user does not drink coffee", kind="preference", asked=True),),
        remembered=("The user does not drink coffee",),
    ),
    Exchange(
        "on request: asked in French",
        ON_REQUEST,
        "Souviens-toi que je suis végétarien.",
        (said("The user is vegetarian", kind="preference", asked=True),),
        remembered=("The user is vegetarian",),
    ),
    Exchange(
        "on request: 'don't forget' is a request",
        ON_REQUEST,
        "Don't forget I prefer aisle seats.",
        (said("The user prefers aisle seats", kind="preference", asked=True),),
        remembered=("The user prefers aisle seats",),
    ),
    Exchange(
        "on request: the model saw no request and extracted nothing",
        ON_REQUEST,
        "What a day, the train was late again.",
        (),
    ),
    Exchange(
        "on request with never health: asked, but a never-topic: left out",
        ON_REQUEST_NEVER,
        "Remember that I have asthma.",
        (said("The user has asthma", asked=True),),
    ),
    Exchange(
        "on request: of two memories only the one asked for is kept",
        ON_REQUEST,
        "Remember my passport expires in June. Also, I had pasta today.",
        (
            said("The user's passport expires in June", asked=True),
            said("The user had pasta today", kind="event", asked=False),
        ),
        remembered=("The user's passport expires in June",),
    ),
    # -- ask first -----------------------------------------------------------------------------
    Exchange(
        "ask first: a new fact waits for review and is not remembered",
        ASK,
        "I live in Lisbon now.",
        (said("The user lives in Lisbon"),),
        waiting=("The user lives in Lisbon",),
    ),
    Exchange(
        "ask first: a never-topic never reaches the inbox",
        ASK,
        "I prefer window seats, and my rent went up to €900.",
        (
            said("The user prefers window seats", kind="preference"),
            said("The user pays €900 rent"),
        ),
        waiting=("The user prefers window seats",),
    ),
    Exchange(
        "ask first: a move is proposed as replacing the old home",
        ASK,
        "We moved from Porto to Lisbon.",
        (said("The user lives in Lisbon"),),
        waiting=("The user lives in Lisbon",),
        existing=("The user lives in Porto",),
        decisions=({"candidate": 0, "action": "SUPERSEDE", "target": "#0", "reason": "moved"},),
    ),
    Exchange(
        "ask first: what is remembered word for word is not proposed",
        ASK,
        "I like tea.",
        (said("The user likes tea", kind="preference"),),
        existing=("The user likes tea",),
    ),
    Exchange(
        "ask first: what the user rejected is not proposed again",
        ASK,
        "I collect stamps.",
        (said("The user collects stamps"),),
        rejected=("The user collects stamps",),
    ),
    Exchange(
        "ask first: what waits already is not proposed twice",
        ASK,
        "I collect stamps, did I say?",
        (said("The user collects stamps"),),
        pending=("The user collects stamps",),
        waiting=("The user collects stamps",),
    ),
    Exchange(
        "ask first: the model found nothing related worth a change (NOTHING): nothing waits",
        ASK,
        "I still like green tea.",
        (said("The user likes green tea", kind="preference"),),
        existing=("The user likes tea, green tea most",),
        decisions=({"candidate": 0, "action": "NOTHING", "target": "#0"},),
    ),
)
