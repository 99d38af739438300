"""The sidebar's second and third tabs: the working memory, and this conversation's
instructions, summary and topics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QWidget

from assistant.instructions import Instructions
from assistant.memory import Conversation, MemoryItem, Topic, WorkingMemory
from assistant.ui.memory.html import conversation_html, working_memory_html
from assistant.ui.themed_page import ThemedPage

MAX_TOPICS = 30


def conversation_topics(
    conversation: Conversation,
    topics: Sequence[Topic],
    get: Callable[[str], MemoryItem | None],
) -> list[Topic]:
    """The topics of the memories learned in `conversation` or used in its replies."""
    used = {mid for message in conversation.messages for mid in message.memory_ids}

    def here(memory_id: str) -> bool:
        item = get(memory_id)
        return item is not None and (
            memory_id in used
            or (item.source is not None and item.source.conversation_id == conversation.id)
        )

    return [t for t in topics if any(map(here, t.memory_ids))]


class _Page(ThemedPage):
    """A named, described page of the sidebar."""

    def __init__(self, name: str, title: str, description: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setAccessibleName(title)
        self.setAccessibleDescription(description)


class WorkingMemoryView(_Page):
    """The working memory of the current conversation: task, subgoals, notes and results."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            "workingMemoryView",
            "Working memory",
            "The task, subgoals, notes and results the assistant keeps for this conversation",
            parent,
        )

    def show_working(self, working: WorkingMemory) -> None:
        """Show `working` (an explanation while it is empty)."""
        self.show_page(lambda palette: working_memory_html(working, palette))


class ConversationView(_Page):
    """The custom instructions, a conversation's rolling summary and its topics."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            "conversationSummaryView",
            "Conversation instructions, summary and topics",
            "The custom instructions, the rolling summary of this conversation and its topics",
            parent,
        )

    def show_conversation(
        self,
        conversation: Conversation | None,
        topics: Sequence[Topic],
        get: Callable[[str], MemoryItem | None],
        instructions: Instructions,
    ) -> None:
        """Show the custom instructions (the model gets them in every chat), the summary of
        `conversation` and those of `topics` that are about it."""
        if conversation is None:
            self.show_page(lambda palette: conversation_html("", [], palette, instructions))
            return
        mine = conversation_topics(conversation, topics, get)[:MAX_TOPICS]
        summary = conversation.summary
        self.show_page(lambda palette: conversation_html(summary, mine, palette, instructions))
