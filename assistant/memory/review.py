"""Reviewing the inbox: accepting a proposal makes it a memory (as written, or as the user
edited it), rejecting one leaves a tombstone so that it is not proposed again.

Accepting adds the memory first and takes the proposal out after, so a crash in between at
worst leaves it waiting for a second accept, which finds the memory said already.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from assistant.memory.edits import MemoryEdit
from assistant.memory.inbox import Inbox, Proposal
from assistant.memory.semantic import ForgottenFactError, SemanticMemory
from assistant.memory.topics import TopicStore

log = logging.getLogger(__name__)


@dataclass
class Reviewed:
    """What a review did: the memories it added or changed, and the proposals it could not
    accept (with why)."""

    edits: list[MemoryEdit] = field(default_factory=list)
    refused: list[tuple[Proposal, str]] = field(default_factory=list)


class Review:
    """Accepts and rejects the proposals of an inbox (from any thread; the stores lock)."""

    def __init__(self, inbox: Inbox, memory: SemanticMemory, topics: TopicStore) -> None:
        self.inbox = inbox
        self.memory = memory
        self.topics = topics

    def accept(self, ids: Sequence[str], edited: Mapping[str, str] | None = None) -> Reviewed:
        """Make memories of these proposals (`edited`: new texts by proposal id), in the order
        they wait: the user's yes, so one merely resembling a forgotten fact is kept; one that
        cannot be (the very fact the user had forgotten, an empty text) is taken out too and
        named in `refused`."""
        edited = edited or {}
        done = Reviewed()
        wanted = set(ids)
        chosen = [p for p in self.inbox.pending() if p.id in wanted]
        for proposal in chosen:
            text = " ".join(edited.get(proposal.id, proposal.text).split())
            try:
                edit = self._keep(proposal, text)
            except ForgottenFactError:  # forgotten since it was proposed
                done.refused.append((proposal, "you had Assistant forget this"))
            except ValueError as exc:
                done.refused.append((proposal, str(exc)))
            else:
                if edit is not None:
                    done.edits.append(edit)
        self.inbox.remove([p.id for p in chosen])
        return done

    def reject(self, ids: Sequence[str]) -> int:
        """Turn these proposals down: each leaves a tombstone; returns how many there were."""
        wanted = set(ids)
        chosen = [p for p in self.inbox.pending() if p.id in wanted]
        self.memory.bury([(p.id, p.text) for p in chosen])
        return len(self.inbox.remove([p.id for p in chosen]))

    def _keep(self, proposal: Proposal, text: str) -> MemoryEdit | None:
        """The memory `proposal` makes, with `text`, as the change it proposed if its target
        still holds, else as a new memory (or merged into one that says the same); None if a
        memory says it already."""
        memory, p = self.memory, proposal
        target = memory.get(p.target) if p.target else None
        tags = [f"topic:{p.topic}"]
        if target is not None and target.is_current and p.change == "replace":
            reason = p.reason or "a newer fact replaces it"
            item = memory.supersede(
                target.id,
                text,
                p.kind,
                p.importance,
                by=p.by,
                source=p.source,
                reason=reason,
                tags=tags,
                confirmed=True,
            )
            edit = MemoryEdit("superseded", target, item)
        elif target is not None and target.is_current and p.change == "refine":
            item = memory.merge_into(
                target.id,
                text,
                by=p.by,
                source=p.source,
                kind=p.kind,
                importance=max(p.importance, target.importance),
                confirmed=True,
            )
            edit = MemoryEdit("updated", target, item)
        else:
            item, before = memory.save(
                text,
                p.kind,
                p.importance,
                source=p.source,
                tags=tags,
                origin=p.by,
                project=p.project,
                scopes={p.project},  # never merged into another scope's memory
                confirmed=True,
                client=p.client,
            )
            if before is item:
                return None
            edit = MemoryEdit("remembered" if before is None else "updated", before, item)
        self.topics.add_memory(p.topic, item.id)
        return edit
