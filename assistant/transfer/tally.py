"""What the readers of other apps' exports left out or found on the way, for the preview."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from assistant.transfer.plan import SuggestedMemory, counted


@dataclass
class Tally:
    """Counts gathered while reading, one conversation at a time."""

    empty: int = 0  # conversations without a visible message
    left_out: Counter[str] = field(default_factory=Counter)  # content kinds not imported
    suggestions: dict[SuggestedMemory, None] = field(default_factory=dict)  # in order, unique

    def leave_out(self, what: str) -> None:
        """Count one piece of content of this kind that is not imported."""
        self.left_out[what] += 1

    def notes(self) -> tuple[str, ...]:
        """Sentences for the preview and the command line."""
        notes = []
        if self.empty:
            notes.append(
                f"{counted(self.empty, 'conversation')} without text messages will be left out."
            )
        if self.left_out:
            kinds = ", ".join(f"{what} ({n})" for what, n in self.left_out.most_common())
            notes.append(f"Left out as they cannot be shown as text: {kinds}.")
        return tuple(notes)
