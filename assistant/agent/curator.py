"""The curator: after a turn, extract memories from the exchange, merge duplicates, keep topics."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assistant.agent.cancel import CancelToken
from assistant.agent.chat import ChatProvider
from assistant.errors import AssistantError
from assistant.memory import (
    KINDS,
    MemoryEdit,
    MemoryItem,
    MemoryKind,
    Message,
    SemanticMemory,
    Source,
    TopicStore,
)

log = logging.getLogger(__name__)

MAX_MEMORY_CHARS = 500
MAX_CANDIDATES = 8
# What the model may write: eight memories of JSON, and a topic's one or two sentences.
EXTRACT_MAX_TOKENS = 1000
TOPIC_MAX_TOKENS = 200

EXTRACT_PROMPT = f"""\
You curate the long-term memory of a personal assistant. From the exchange below, extract what \
is worth remembering about the user for future conversations: facts about them, preferences, \
plans, decisions, tasks, events and insights. Skip small talk, questions without new facts, \
and anything only true for this conversation. Write each memory as one self-contained sentence \
about the user ("The user ..."). Importance is 0 to 1 (0.9 for things the user would be upset \
to have forgotten, 0.2 for trivia). The topic is one or two words.

Answer with JSON only: {{"memories": [{{"kind": one of {", ".join(KINDS)}, "text": "...", \
"importance": 0.5, "topic": "..."}}]}}. Answer {{"memories": []}} when nothing is worth keeping."""

TOPIC_PROMPT = """\
Summarize what these memories say about the user in one or two sentences, as a short scene \
("The user ..."). Answer with the summary only."""


@dataclass(frozen=True)
class Candidate:
    """A memory proposed by the model, validated."""

    kind: MemoryKind
    text: str
    importance: float
    topic: str


class Curator:
    """Turns finished exchanges into long-term memories; never raises to the caller."""

    def __init__(
        self,
        provider: ChatProvider,
        memory: SemanticMemory,
        topics: TopicStore,
    ) -> None:
        self.provider = provider
        self.memory = memory
        self.topics = topics

    def process(
        self,
        conversation_id: str,
        user: Message,
        reply: Message,
        on_edit: Callable[[MemoryEdit], None] | None = None,
        *,
        cancel: CancelToken | None = None,
    ) -> list[MemoryItem]:
        """Extract and store memories from one exchange; returns the items added or updated.

        `on_edit` hears of each memory added or changed (the chat shows it with Undo). Only
        `cancel` (OperationCancelledError) interrupts it; provider errors are logged.
        """
        report = on_edit or (lambda _edit: None)
        try:
            candidates = [c for c in self._extract(user, reply, cancel) if self._new(c)]
            source = Source(conversation_id, user.id)
            stored = [self._store(c, source, report) for c in candidates]
            for topic in dict.fromkeys(c.topic for c in candidates):
                self._summarize_topic(topic, cancel)
        except AssistantError as exc:
            log.warning("The curator could not finish: %s", exc)
            return []
        return stored

    def _extract(
        self, user: Message, reply: Message, cancel: CancelToken | None
    ) -> list[Candidate]:
        exchange = f"User: {user.content}\n\nAssistant: {reply.content}"
        response = self.provider.chat(
            [{"role": "system", "content": EXTRACT_PROMPT}, {"role": "user", "content": exchange}],
            json_mode=True,
            max_tokens=EXTRACT_MAX_TOKENS,
            cancel=cancel,
        )
        return parse_candidates(response.content)

    def _new(self, candidate: Candidate) -> bool:
        """Whether a candidate may be learned: not a fact the user made the assistant forget."""
        if self.memory.is_forgotten_fact(candidate.text):
            log.info("Curator: not learning a forgotten fact again: %.80r", candidate.text)
            return False
        return True

    def _store(
        self, candidate: Candidate, source: Source, report: Callable[[MemoryEdit], None]
    ) -> MemoryItem:
        item, before = self.memory.save(
            candidate.text,
            candidate.kind,
            candidate.importance,
            source=source,
            tags=[f"topic:{candidate.topic}"],
            may_change=lambda old: not old.pinned,  # pinned ones change when the user confirms
            origin="curator",
        )
        if before is None:
            report(MemoryEdit("remembered", None, item))
        elif before is not item:
            report(MemoryEdit("updated", before, item))
        self.topics.add_memory(candidate.topic, item.id)
        return item

    def _summarize_topic(self, name: str, cancel: CancelToken | None) -> None:
        topic = self.topics.get(name)
        if topic is None:
            return
        items = [i for i in map(self.memory.get, topic.memory_ids) if i and i.state == "active"]
        if not items:
            return
        listing = "\n".join(f"- {i.text}" for i in items[-20:])
        response = self.provider.chat(
            [{"role": "system", "content": TOPIC_PROMPT}, {"role": "user", "content": listing}],
            max_tokens=TOPIC_MAX_TOKENS,
            cancel=cancel,
        )
        summary = response.content.strip()
        if summary:
            self.topics.set_summary(name, summary[:600], tuple(i.id for i in items))


def parse_candidates(text: str) -> list[Candidate]:
    """Validated candidates from the model's JSON; anything malformed is dropped with a log line."""
    try:
        data: Any = json.loads(_strip_fences(text))
    except ValueError:
        log.info("Curator: the model did not answer with JSON: %.200r", text)
        return []
    raw = data.get("memories") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        log.info("Curator: no list of memories in %.200r", text)
        return []
    found = []
    for entry in raw[:MAX_CANDIDATES]:
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
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_MEMORY_CHARS:
        return None
    if kind not in KINDS:
        return None
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        return None
    return Candidate(
        kind=kind,
        text=" ".join(text.split()),
        importance=min(1.0, max(0.0, float(importance))),
        topic=topic.strip() if isinstance(topic, str) and topic.strip() else "general",
    )


def _strip_fences(text: str) -> str:
    """Models sometimes wrap JSON in a Markdown code fence."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
