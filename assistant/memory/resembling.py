"""The one way a memory the model wants to make passes the tombstones (the curator, the
`remember` tool, another app's `remember` over MCP, a reflection).

A text that says a fact the user made the assistant forget (the "forgotten" band of
`tombstones`) is not learned and not asked about. One that merely resembles such a fact (the
"resembles" band: close in meaning, or the same words with another number, name or the
opposite) is neither learned nor dropped: it waits in the review inbox, flagged with
RESEMBLES, until the user says yes (then it is learned, see `review`) or no (it is not proposed
again). Neither the question nor the inbox holds anything of the forgotten text. What the user
types in the sidebar is theirs and passes no such check.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Literal

from assistant.memory.inbox import Inbox, Proposal
from assistant.memory.semantic import SemanticMemory

log = logging.getLogger(__name__)

# Why the Review tab shows a proposal held this way.
RESEMBLES = "Resembles something you asked me to forget"

Screened = Literal["clear", "forgotten", "held"]


def screen(memory: SemanticMemory, inbox: Inbox | None, proposed: Proposal) -> Screened:
    """Whether the memory `proposed` may be made now: "clear" if its text matches no tombstone
    (or an active memory says it already: the user said yes to it before); "forgotten" if it
    says a forgotten fact; "held" if it resembles one: it waits in `inbox`, flagged (without
    an inbox, it is dropped with a log line)."""
    band = memory.resemblance(proposed.text)
    if band is None:
        return "clear"
    if band == "forgotten":
        log.info("Not learning a fact the user had forgotten (from the %s)", proposed.by)
        return "forgotten"
    if memory.same_as(proposed.text) is not None:
        return "clear"
    hold(inbox, proposed)
    return "held"


def hold(inbox: Inbox | None, proposed: Proposal) -> None:
    """Put `proposed` in `inbox` for the user's yes, flagged as resembling a forgotten fact."""
    if inbox is None:
        log.warning("No review inbox: a memory resembling a forgotten fact was dropped")
        return
    inbox.propose([dataclasses.replace(proposed, resembles_forgotten=True)])
    log.info("Held for review: a memory resembling a fact the user had forgotten")
