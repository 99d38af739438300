"""The reply being written, as the chat showed it: shown again when its conversation is.

Only the conversation on screen gets the reply's events; a user who leaves it mid-reply and
comes back sees what was streamed meanwhile (text and tool lines), and the rest streams on.
"""

from __future__ import annotations

import dataclasses

from assistant.memory import Conversation
from assistant.ui.chat.view import ChatView
from assistant.ui.worker import AgentEvent, events

_SHOWN = events.TextDelta | events.ToolCallStarted | events.ToolCallFinished
_ENDS = events.Finished | events.Failed | events.Cancelled


class ReplyLog:
    """The text and tool events of the reply being written in one conversation."""

    def __init__(self) -> None:
        self.conversation_id: str | None = None
        self._events: list[AgentEvent] = []

    def start(self, conversation_id: str) -> None:
        """A reply in `conversation_id` begins."""
        self.conversation_id = conversation_id
        self._events = []

    def record(self, event: AgentEvent) -> None:
        """Keep what the reply shows; forget it all when the reply ends."""
        if event.conversation_id != self.conversation_id:
            return
        if isinstance(event, _SHOWN):
            self._events.append(event)
        elif isinstance(event, _ENDS):
            self.conversation_id = None
            self._events = []

    def show(self, chat: ChatView, conversation: Conversation) -> None:
        """Show `conversation` up to the question being answered, then the reply so far."""
        branch = conversation.branch()
        question = next((m for m in reversed(branch) if m.role == "user"), None)
        if question is not None:  # what the turn saved so far comes again from the events
            conversation = dataclasses.replace(conversation, leaf_id=question.id)
        chat.show_conversation(conversation, replying=True)
        chat.start_reply(resumed=True)
        text: list[str] = []
        for event in self._events:
            if isinstance(event, events.TextDelta):
                text.append(event.text)
                continue
            if text:
                chat.append_delta("".join(text))
                text = []
            if isinstance(event, events.ToolCallStarted):
                chat.start_tool_call(event.call_id, event.name, event.arguments)
            elif isinstance(event, events.ToolCallFinished):
                chat.finish_tool_call(event.call_id, event.result, event.ok)
        if text:
            chat.append_delta("".join(text))
