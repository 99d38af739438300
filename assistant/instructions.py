"""The user's custom instructions: what the assistant should know about them, and how to answer."""

from __future__ import annotations

from dataclasses import dataclass

# As ChatGPT and Claude phrase them.
ABOUT_LABEL = "What should Assistant know about you?"
ANSWER_LABEL = "How should Assistant answer?"
INSTRUCTIONS_LIMIT = 1500  # characters each, as ChatGPT's


@dataclass(frozen=True)
class Instructions:
    """The two texts; either may be empty."""

    about: str = ""
    answer: str = ""

    @property
    def empty(self) -> bool:
        """Whether neither text says anything."""
        return not (self.about.strip() or self.answer.strip())

    def sections(self) -> list[tuple[str, str]]:
        """(question, text) for each text that is not blank, in the order the prompt shows them."""
        pairs = ((ABOUT_LABEL, self.about), (ANSWER_LABEL, self.answer))
        return [(label, text.strip()) for label, text in pairs if text.strip()]

    def text(self) -> str:
        """Both texts under their questions, as the prompt quotes them ("" if empty)."""
        return "\n\n".join(f"{label}\n{text}" for label, text in self.sections())


NO_INSTRUCTIONS = Instructions()
