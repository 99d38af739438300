"""The user's custom instructions: what the assistant should know about them, how to answer,
and (in a project's chats) the project's own instructions."""

from __future__ import annotations

from dataclasses import dataclass

# As ChatGPT and Claude phrase them.
ABOUT_LABEL = "What should Assistant know about you?"
ANSWER_LABEL = "How should Assistant answer?"
INSTRUCTIONS_LIMIT = 1500  # characters each, as ChatGPT's


@dataclass(frozen=True)
class Instructions:
    """The global texts, and a project's (in its chats); any may be empty."""

    about: str = ""
    answer: str = ""
    project_name: str = ""  # the project of the chat, if it is in one
    project: str = ""  # that project's instructions

    @property
    def empty(self) -> bool:
        """Whether no text says anything."""
        return not (self.about.strip() or self.answer.strip() or self.project.strip())

    def sections(self) -> list[tuple[str, str]]:
        """(question, text) for each text that is not blank, in the order the prompt shows them:
        the global ones, then the project's."""
        pairs = [(ABOUT_LABEL, self.about), (ANSWER_LABEL, self.answer)]
        if self.project_name:
            pairs.append((project_label(self.project_name), self.project))
        return [(label, text.strip()) for label, text in pairs if text.strip()]

    def in_project(self, name: str, text: str) -> Instructions:
        """These global instructions with a project's."""
        return Instructions(self.about, self.answer, name, text)

    def text(self) -> str:
        """The texts under their questions, as the prompt quotes them ("" if empty)."""
        return "\n\n".join(f"{label}\n{text}" for label, text in self.sections())


def project_label(name: str) -> str:
    """The heading of a project's instructions, as the prompt and the sidebar show it."""
    return f"Instructions for the project {name!r}:"


NO_INSTRUCTIONS = Instructions()
