"""One budget for every change the model makes to long-term memory in one reply.

The reply's tools, the curator after it and a reflection it triggers all draw on the same
budget: at most MAX_CHANGES_PER_REPLY existing memories changed (edited, merged, replaced,
forgotten, pinned or unpinned) and MAX_ADDS_PER_REPLY memories added. What goes over is not
applied: it is offered to the user as a suggestion in the chat (`offer`), who may accept it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from assistant.memory.pending import PendingAction, PendingChange

log = logging.getLogger(__name__)

MAX_CHANGES_PER_REPLY = 3
MAX_ADDS_PER_REPLY = 5
# Suggestions per reply: a model that asks for 200 changes gets 10 lines, not 200.
MAX_OFFERS_PER_REPLY = 10

Offer = Callable[[PendingChange], None]


class ReplyBudget:
    """What the model may still change in memory for one reply; thread-safe (the curator runs
    in the background while the next turn may start)."""

    def __init__(
        self,
        offer: Offer | None = None,
        *,
        max_changes: int = MAX_CHANGES_PER_REPLY,
        max_adds: int = MAX_ADDS_PER_REPLY,
    ) -> None:
        self._offer = offer
        self.max_changes = max_changes
        self.max_adds = max_adds
        self.changes = 0
        self.adds = 0
        self.offered = 0
        self._lock = threading.Lock()

    def take(self, action: PendingAction) -> bool:
        """Count one change of this kind ("remember" is an add); False if over the budget."""
        with self._lock:
            if action == "remember":
                if self.adds >= self.max_adds:
                    return False
                self.adds += 1
            else:
                if self.changes >= self.max_changes:
                    return False
                self.changes += 1
            return True

    def give_back(self, action: PendingAction) -> None:
        """Return a change taken but not made (an add that turned out to be a merge)."""
        with self._lock:
            if action == "remember":
                self.adds = max(0, self.adds - 1)
            else:
                self.changes = max(0, self.changes - 1)

    def offer(self, change: PendingChange) -> None:
        """Offer a change over the budget to the user instead of making it (a few per reply;
        the rest are dropped)."""
        with self._lock:
            self.offered += 1
            dropped = self._offer is None or self.offered > MAX_OFFERS_PER_REPLY
        if dropped or self._offer is None:
            log.info("Over the reply's budget, not applied: %s", change.describe())
            return
        self._offer(change)
