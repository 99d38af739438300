"""The curator: after a turn, extract memories from the exchange, decide what each one changes
in long-term memory (add, refine, supersede or nothing: see `decisions`), and keep topics; and
the same rules for a statement another app asks to remember (`take`, for `assistant mcp`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from typing import Literal

from assistant.agent.cancel import CancelToken
from assistant.agent.candidates import EXTRACTED_KINDS, Candidate, parse_candidates
from assistant.agent.change_budget import ReplyBudget
from assistant.agent.chat import ChatProvider
from assistant.agent.chat_scope import ChatScope
from assistant.agent.decisions import (
    DECIDE_MAX_TOKENS,
    DECIDE_PROMPT,
    SHOWN_CHARS,
    Decision,
    decision_request,
    parse_decisions,
)
from assistant.errors import AssistantError, ProviderError
from assistant.memory import (
    Change,
    ForgottenFactError,
    Inbox,
    MemoryEdit,
    MemoryItem,
    MemoryKind,
    Message,
    Origin,
    Proposal,
    Scope,
    SemanticMemory,
    Source,
    TopicStore,
)
from assistant.memory.pending import PendingAction, PendingChange
from assistant.memory.resembling import RESEMBLES, hold, screen
from assistant.memory_policy import AUTOMATIC, MemoryPolicy
from assistant.timestamps import now_utc

log = logging.getLogger(__name__)

RELATED_K = 5  # existing memories each candidate is compared with
# What the model may write: eight memories of JSON, and a topic's one or two sentences.
EXTRACT_MAX_TOKENS = 1000
TOPIC_MAX_TOKENS = 200

EXTRACT_PROMPT = f"""\
You curate the long-term memory of a personal assistant. From the exchange below, extract what \
is worth remembering about the user for future conversations: facts about them, preferences, \
plans, decisions, tasks and events. Skip small talk, questions without new facts, \
and anything only true for this conversation. Write each memory as one self-contained sentence \
about the user ("The user ..."). Importance is 0 to 1 (0.9 for things the user would be upset \
to have forgotten, 0.2 for trivia). The topic is one or two words.

Answer with JSON only: {{"memories": [{{"kind": one of {", ".join(EXTRACTED_KINDS)}, \
"text": "...", "importance": 0.5, "topic": "..."}}]}}. Answer {{"memories": []}} when nothing \
is worth keeping."""

ON_REQUEST_PROMPT = f"""\
You curate the long-term memory of a personal assistant whose user wants memories kept only \
when they ask. From the exchange below, extract only what the user, in their own message, \
explicitly asks the assistant to remember, note or keep in mind, in any language ("remember \
that ...", "don't forget ...", "note that ...", "merk dir ...", "souviens-toi que ...", \
"recuerda que ..."). A fact the user merely mentions, or the assistant offers to remember, is \
not a request. Write each memory as one self-contained sentence about the user ("The user \
..."). Importance is 0 to 1. The topic is one or two words.

Answer with JSON only: {{"memories": [{{"kind": one of {", ".join(EXTRACTED_KINDS)}, \
"text": "...", "importance": 0.5, "topic": "...", "asked": true}}]}}. Answer \
{{"memories": []}} when the user asked to remember nothing."""

# In a project's chat (not an isolated one) the model also says where each memory belongs.
SCOPE_NOTE = """\
This conversation is in the user's project {name}. Give each memory a "scope" too: "personal" \
for a fact about the user themselves or a preference that holds everywhere (their family, home, \
health, tastes, how they like answers), "project" for a fact about this project's work (its \
goals, plans, decisions, people, deadlines, tools). When unsure, "project"."""

TOPIC_PROMPT = """\
Summarize what these memories say about the user in one or two sentences, as a short scene \
("The user ..."). Answer with the summary only."""


TakenAction = Literal["added", "updated", "superseded", "known", "pinned", "forgotten", "held"]
_NEW = Decision(0, "ADD")  # what a candidate would be before the decisions


@dataclass(frozen=True)
class Taken:
    """What `Curator.take` did with a statement: `item` is the memory added, changed, already
    saying it ("known") or left alone as pinned; `before`, the memory as it was (updated,
    superseded)."""

    action: TakenAction
    item: MemoryItem | None
    before: MemoryItem | None = None
    reason: str = ""


_TAKEN: dict[str, TakenAction] = {
    "remembered": "added",
    "updated": "updated",
    "superseded": "superseded",
}


class Curator:
    """Turns finished exchanges into long-term memories; never raises to the caller.

    Without a provider (no model set up) only `take` works, with the fallback decisions.
    """

    def __init__(
        self,
        provider: ChatProvider | None,
        memory: SemanticMemory,
        topics: TopicStore,
        inbox: Inbox | None = None,
    ) -> None:
        self.provider = provider
        self.memory = memory
        self.topics = topics
        self.inbox = inbox  # where proposals wait when the policy is "ask first"

    def process(
        self,
        conversation_id: str,
        user: Message,
        reply: Message,
        on_edit: Callable[[MemoryEdit], None] | None = None,
        *,
        cancel: CancelToken | None = None,
        budget: ReplyBudget | None = None,
        policy: MemoryPolicy = AUTOMATIC,
        scope: ChatScope | None = None,
    ) -> list[MemoryItem]:
        """Extract memories from one exchange and apply what they change, as `policy` allows;
        returns the items added or changed.

        Never-topics are left out; "on_request" keeps only what the user asked to remember;
        "ask" puts what would change in the review inbox and changes nothing. In a project's
        chat (`scope`) a new memory goes where the model says it belongs (`MemoryScope.home`),
        and only the memories the chat sees are compared with it. `on_edit` hears of each
        memory added or changed (the chat shows it with Undo). The changes draw on the reply's
        `budget` (a budget of their own without one); what is over it is offered to the user
        instead. Only `cancel` (OperationCancelledError) interrupts it; provider errors are
        logged.
        """
        report = on_edit or (lambda _edit: None)
        scope = scope or ChatScope()
        budget = budget or ReplyBudget()
        exchange = f"User: {user.content}\n\nAssistant: {reply.content}"
        source = Source(conversation_id, user.id)
        try:
            extracted = self._extract(exchange, policy, cancel, scope)
            allowed = [c for c in extracted if _allowed(c, policy)]
            candidates = self._unforgotten(allowed, source, scope)
            decisions = self.decide(exchange, candidates, cancel, scope)
            if policy.mode == "ask":
                self._propose(candidates, decisions, source, scope)
                return []
            stored: list[MemoryItem] = []
            changed: list[str] = []  # the topics of the memories added or changed
            for candidate, decision in zip(candidates, decisions, strict=True):
                home = scope.memory.home(candidate.personal)
                try:
                    item = self._apply(
                        candidate,
                        decision,
                        report,
                        source=source,
                        tags=[f"topic:{candidate.topic}"],
                        budget=budget,
                        project=home,
                    )
                except ForgottenFactError as exc:  # forgotten meanwhile, or a refined text says it
                    if exc.resemblance == "resembles":
                        hold(self.inbox, proposal(candidate, decision, source, home))
                    continue
                if item is not None:
                    stored.append(item)
                    changed.append(candidate.topic)
                    self.topics.add_memory(candidate.topic, item.id)
            for topic in dict.fromkeys(changed):
                self._summarize_topic(topic, cancel)
        except AssistantError as exc:
            log.warning("The curator could not finish: %s", exc)
            return []
        return stored

    def take(
        self, text: str, kind: MemoryKind, importance: float, *, origin: Origin, client: str
    ) -> Taken:
        """Remember a statement another app sent (`client`, e.g. through MCP) by the rules of
        the curator: a forgotten fact is not learned again, one resembling it waits in the
        inbox for the user's yes ("held"), a pinned memory is not changed, the same fact
        refines the memory that says it, a contradiction supersedes it with history.

        Raises ValueError for a statement that cannot be a memory (empty, too long, bad kind).
        """
        text = " ".join(text.split())
        screened = screen(self.memory, self.inbox, Proposal(text, kind, importance, by=origin))
        if screened != "clear":
            return _not_taken(screened)
        candidate = Candidate(kind, text, importance, topic="general")
        exchange = f"{client} asks to remember: {text}"
        [decision] = self.decide(exchange, [candidate], None)
        if decision.action == "NOTHING":
            known = self.memory.get(decision.target) if decision.target else None
            return Taken("known", known, reason=decision.reason)
        pinned = self._pinned_target(decision)
        if pinned is not None:
            return Taken("pinned", pinned, reason=decision.reason)
        edits: list[MemoryEdit] = []
        try:
            self._apply(candidate, decision, edits.append, origin=origin, client=client)
        except ForgottenFactError as exc:  # a refined text says or resembles a forgotten fact
            if exc.resemblance == "resembles":
                hold(self.inbox, Proposal(decision.text or text, kind, importance, by=origin))
                return _not_taken("held")
            return _not_taken("forgotten")
        [edit] = edits
        return Taken(_TAKEN[edit.action], edit.after, edit.before, decision.reason)

    def _extract(
        self,
        exchange: str,
        policy: MemoryPolicy,
        cancel: CancelToken | None,
        scope: ChatScope,
    ) -> list[Candidate]:
        if self.provider is None:
            raise ProviderError("No model is set up to extract memories.")
        prompt = extract_prompt(policy)
        if scope.project is not None and not scope.project.isolated:
            prompt += "\n\n" + SCOPE_NOTE.format(name=json.dumps(scope.project.name))
        response = self.provider.chat(
            [{"role": "system", "content": prompt}, {"role": "user", "content": exchange}],
            json_mode=True,
            max_tokens=EXTRACT_MAX_TOKENS,
            cancel=cancel,
        )
        candidates = parse_candidates(response.content)
        unique = {_normal(c.text): c for c in reversed(candidates)}  # the first of repeats
        return [c for c in candidates if unique[_normal(c.text)] is c]

    def _unforgotten(
        self, candidates: list[Candidate], source: Source, scope: ChatScope
    ) -> list[Candidate]:
        """The candidates no tombstone recognises; one resembling a forgotten fact waits in
        the inbox for the user's yes (see `resembling`), one saying it is dropped."""
        return [
            c
            for c in candidates
            if screen(
                self.memory, self.inbox, proposal(c, _NEW, source, scope.memory.home(c.personal))
            )
            == "clear"
        ]

    def _propose(
        self,
        candidates: Sequence[Candidate],
        decisions: Sequence[Decision],
        source: Source,
        scope: ChatScope,
    ) -> None:
        """Put what the candidates would change in the review inbox (none if there is none),
        each with the scope the memory would have."""
        proposals = [
            proposal(c, d, source, scope.memory.home(c.personal))
            for c, d in zip(candidates, decisions, strict=True)
            if d.action != "NOTHING"
        ]
        if not proposals:
            return
        if self.inbox is None:
            log.warning("Curator: no review inbox; %d proposals dropped", len(proposals))
            return
        added = self.inbox.propose(proposals)
        log.info("Curator: %d memories wait for review", len(added))

    def decide(
        self,
        exchange: str,
        candidates: Sequence[Candidate],
        cancel: CancelToken | None,
        scope: ChatScope | None = None,
    ) -> list[Decision]:
        """One decision per candidate, against the memories (that the chat's `scope` sees)
        most related to it.

        A candidate with nothing related is added, one said word for word already is nothing;
        the model decides the rest in one call. Where its answer gives no valid decision, the
        fallback is NOTHING if a near-duplicate exists, else ADD (logged).
        """
        visible = (scope or ChatScope()).memory.visible
        related = [self._related(c.text, visible) for c in candidates]
        decided: dict[int, Decision] = {}
        asked: list[int] = []
        for index, (candidate, items) in enumerate(zip(candidates, related, strict=True)):
            same = next((i for i in items if _same_text(i.text, candidate.text)), None)
            if same is not None:
                decided[index] = Decision(index, "NOTHING", same.id, "remembered word for word")
            elif not items:
                decided[index] = Decision(index, "ADD", None, "nothing related remembered")
            else:
                asked.append(index)
        if asked:
            answers = self._ask(
                exchange, [candidates[i] for i in asked], [related[i] for i in asked], cancel
            )
            for position, index in enumerate(asked):
                answer = answers.get(position)
                if answer is None:
                    log.info(
                        "Curator: no valid decision for %.80r; falling back", candidates[index].text
                    )
                    answer = self._fallback(candidates[index], visible)
                decided[index] = replace(answer, candidate=index)
        return [decided[i] for i in range(len(candidates))]

    def _related(self, text: str, visible: frozenset[Scope]) -> list[MemoryItem]:
        hits = self.memory.find_related(text, k=RELATED_K, scopes=visible)
        return [h.item for h in hits if h.item.is_current]

    def _ask(
        self,
        exchange: str,
        candidates: Sequence[Candidate],
        related: Sequence[Sequence[MemoryItem]],
        cancel: CancelToken | None,
    ) -> dict[int, Decision]:
        """The model's valid decisions by position in `candidates` (none if the call fails or
        there is no model)."""
        if self.provider is None:
            return {}
        today = now_utc().astimezone().date()
        request = decision_request(exchange, [c.text for c in candidates], related, today)
        try:
            response = self.provider.chat(
                [
                    {"role": "system", "content": DECIDE_PROMPT},
                    {"role": "user", "content": request},
                ],
                json_mode=True,
                max_tokens=DECIDE_MAX_TOKENS,
                cancel=cancel,
            )
        except AssistantError as exc:  # the candidates are still worth keeping
            log.warning("Curator: could not ask for decisions: %s", exc)
            return {}
        shown = [[i.id for i in items] for items in related]
        return parse_decisions(response.content, shown, today)

    def _fallback(self, candidate: Candidate, visible: frozenset[Scope]) -> Decision:
        same = self.memory.same_as(candidate.text, visible)
        if same is not None:
            return Decision(0, "NOTHING", same.id, "a near-duplicate is remembered")
        return Decision(0, "ADD", None, "no decision from the model")

    def _pinned_target(self, decision: Decision) -> MemoryItem | None:
        """The pinned memory a decision would change (pinned ones change only when the user
        confirms), if it would change one."""
        if decision.action in ("ADD", "NOTHING") or decision.target is None:
            return None
        target = self.memory.get(decision.target)
        return target if target is not None and target.is_current and target.pinned else None

    def _apply(
        self,
        candidate: Candidate,
        decision: Decision,
        report: Callable[[MemoryEdit], None],
        *,
        source: Source | None = None,
        tags: Sequence[str] = (),
        origin: Origin = "curator",
        client: str | None = None,
        budget: ReplyBudget | None = None,
        project: str | None = None,
    ) -> MemoryItem | None:
        """Carry out one decision as `origin` (a memory added goes to `project`; one changed
        keeps its scope), or offer it when over the reply's `budget` (if it has one); returns
        the memory added or changed, if any."""
        action = decision.action
        if action == "NOTHING":
            return None
        pinned = self._pinned_target(decision)
        if pinned is not None:
            log.info("Curator: left the pinned memory %s as it is (%s)", pinned.id, action)
            return None
        target = self.memory.get(decision.target) if decision.target else None
        if action != "ADD" and (target is None or not target.is_current):
            log.info("Curator: %s of a memory no longer current: added instead", action)
            action = "ADD"
        elif action == "UPDATE" and target is not None and len(target.text) > SHOWN_CHARS:
            # The model saw it cut, so its refined text would lose the rest: keep both.
            log.info("Curator: added rather than refine the long memory %s", target.id)
            action = "ADD"
        change = _PENDING_ACTIONS["ADD" if target is None else action]
        if budget is not None and not budget.take(change):
            kept = None if change == "remember" else target
            budget.offer(_offered(change, candidate, decision, kept, source, project=project))
            return None
        since = _start_of(decision.since) if decision.since else None
        if action == "ADD" or target is None:
            item = self.memory.add(
                candidate.text,
                candidate.kind,
                candidate.importance,
                source=source,
                tags=tags,
                origin=origin,
                valid_from=since,
                client=client,
                project=project,
            )
            report(MemoryEdit("remembered", None, item))
        elif action == "UPDATE":
            item = self.memory.merge_into(
                target.id,
                decision.text or candidate.text,
                by=origin,
                source=source,
                kind=candidate.kind,
                importance=max(candidate.importance, target.importance),
                client=client,
            )
            report(MemoryEdit("updated", target, item))
        else:
            item = self.memory.supersede(
                target.id,
                candidate.text,
                candidate.kind,
                candidate.importance,
                by=origin,
                source=source,
                reason=decision.reason or "a newer fact replaces it",
                valid_from=since,
                tags=tags,
                client=client,
            )
            report(MemoryEdit("superseded", target, item))
        return item

    def _summarize_topic(self, name: str, cancel: CancelToken | None) -> None:
        topic = self.topics.get(name)
        if topic is None:
            return
        items = [i for i in map(self.memory.get, topic.memory_ids) if i and i.state == "active"]
        if not items:
            return
        listing = "\n".join(f"- {i.text}" for i in items[-20:])
        if self.provider is None:
            return
        response = self.provider.chat(
            [{"role": "system", "content": TOPIC_PROMPT}, {"role": "user", "content": listing}],
            max_tokens=TOPIC_MAX_TOKENS,
            cancel=cancel,
        )
        summary = response.content.strip()
        if summary:
            self.topics.set_summary(name, summary[:600], tuple(i.id for i in items))


_PENDING_ACTIONS: dict[str, PendingAction] = {
    "ADD": "remember",
    "UPDATE": "update",
    "SUPERSEDE": "supersede",
}


def _offered(
    change: PendingAction,
    candidate: Candidate,
    decision: Decision,
    target: MemoryItem | None,
    source: Source | None,
    *,
    project: str | None,
) -> PendingChange:
    """A decision over the reply's budget, as a suggestion for the user (a memory to add goes
    to `project`)."""
    text = decision.text if change == "update" and decision.text else candidate.text
    return PendingChange.new(
        change,
        "budget",
        "curator",
        text=text,
        kind=candidate.kind,
        importance=candidate.importance,
        target_id=target.id if target is not None else None,
        target_text=target.text if target is not None else None,
        message_id=source.message_id if source is not None else None,
        project=project if change == "remember" else None,
    )


_CHANGES: dict[str, Change] = {"ADD": "add", "UPDATE": "refine", "SUPERSEDE": "replace"}


def _not_taken(screened: Literal["forgotten", "held"]) -> Taken:
    if screened == "held":
        return Taken("held", None, reason=RESEMBLES)
    return Taken("forgotten", None, reason="the user made the assistant forget it")


def extract_prompt(policy: MemoryPolicy) -> str:
    """The extraction prompt for `policy`: its mode's, with the never-topics rule after it."""
    base = ON_REQUEST_PROMPT if policy.mode == "on_request" else EXTRACT_PROMPT
    rule = policy.rule()
    return f"{base}\n\n{rule}" if rule else base


def proposal(
    candidate: Candidate, decision: Decision, source: Source, project: Scope = None
) -> Proposal:
    """The review inbox's proposal for a candidate and what was decided about it (`project`:
    the scope the memory would have)."""
    refined = decision.action == "UPDATE" and decision.text
    return Proposal(
        text=decision.text if refined and decision.text else candidate.text,
        kind=candidate.kind,
        importance=candidate.importance,
        topic=candidate.topic,
        source=source,
        change=_CHANGES.get(decision.action, "add"),
        target=decision.target,
        reason=decision.reason,
        project=project,
    )


def _allowed(candidate: Candidate, policy: MemoryPolicy) -> bool:
    """Whether the policy lets the curator keep `candidate` (logged when not)."""
    topic = policy.blocked_by(candidate.text)
    if topic is not None:
        log.info("Curator: left out a memory about a topic never to remember (%s)", topic)
        return False
    if policy.mode == "on_request" and not candidate.asked:
        log.info("Curator: left out a memory the user did not ask to remember")
        return False
    return True


def _start_of(day: date) -> datetime:
    """The start of a day in local time."""
    return datetime.combine(day, time(), tzinfo=now_utc().astimezone().tzinfo)


def _same_text(a: str, b: str) -> bool:
    """Whether two memories say the same word for word (case, spacing and end marks aside)."""
    return _normal(a) == _normal(b)


def _normal(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!")
