"""The memories the curator's model proposes from an exchange, validated."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from assistant.agent.decisions import MAX_MEMORY_CHARS
from assistant.agent.model_json import listed
from assistant.memory import KINDS, MemoryKind

log = logging.getLogger(__name__)

MAX_CANDIDATES = 8
# Insights are written by reflection, from several memories; an exchange yields plain facts.
EXTRACTED_KINDS = tuple(kind for kind in KINDS if kind != "insight")


@dataclass(frozen=True)
class Candidate:
    """A memory proposed by the model, validated."""

    kind: MemoryKind
    text: str
    importance: float
    topic: str
    asked: bool = False  # the model says the user asked for it to be remembered
    personal: bool = False  # in a project's chat: the model said "personal" (it goes global)


def parse_candidates(text: str) -> list[Candidate]:
    """Validated candidates from the model's JSON; anything malformed is dropped with a log line."""
    found = []
    for entry in listed(text, "memories", log)[:MAX_CANDIDATES]:
        candidate = _candidate(entry)
        if candidate is None:
            log.info("Curator: dropped an invalid memory %.200r", entry)
        else:
            found.append(candidate)
    return found


def _candidate(entry: Any) -> Candidate | None:
    if not isinstance(entry, dict):
        return None
    text, kind, importance = entry.get("text"), entry.get("kind"), entry.get("importance", 0.5)
    topic = entry.get("topic")
    personal = entry.get("scope") in ("personal", "global")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_MEMORY_CHARS:
        return None
    if kind == "insight":  # reflection writes those, from several memories
        kind = "fact"
    if kind not in EXTRACTED_KINDS:
        return None
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        return None
    return Candidate(
        kind=kind,
        text=" ".join(text.split()),
        importance=min(1.0, max(0.0, float(importance))),
        topic=topic.strip() if isinstance(topic, str) and topic.strip() else "general",
        asked=entry.get("asked") is True,
        personal=personal,
    )
