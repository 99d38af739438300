"""What one reply may change in long-term memory, and what waits for the user's answer.

A reply's tools, the curator after it and a reflection it triggers share one `ReplyBudget`;
what goes over it is offered as a suggestion. A tool that would change a pinned memory asks a
question instead. Both are kept with the conversation (`ConversationStore.add_pending`), so they
survive switching conversations and restarts, and are shown in the chat (`MemorySuggested`).
The user's next message answers the open questions: only an explicit yes lets the reply make
the change asked about, a no closes them for good, anything else leaves them open.
"""

from __future__ import annotations

from assistant.agent.builtin_tools import ToolContext
from assistant.agent.cancel import CancelToken
from assistant.agent.change_budget import ReplyBudget
from assistant.agent.chat_scope import ChatScope
from assistant.agent.consent import explicit_answer
from assistant.agent.events import EventSink, MemorySuggested
from assistant.memory import Conversation, ConversationStore, Inbox, Message
from assistant.memory.pending import PendingChange
from assistant.memory_policy import MemoryPolicy


class ReplyChanges:
    """The pending changes of one reply in one conversation."""

    def __init__(
        self, conversations: ConversationStore, conversation_id: str, on_event: EventSink
    ) -> None:
        self._conversations = conversations
        self._cid = conversation_id
        self._on_event = on_event

    def context(
        self,
        conversation: Conversation,
        user: Message,
        cancel: CancelToken,
        scope: ChatScope,
        *,
        policy: MemoryPolicy,
        inbox: Inbox | None,
    ) -> ToolContext:
        """The tools' context for a reply to `user` (seeing what the chat's `scope` sees, under
        the memory `policy`), with its budget and the open questions answered by the user's
        message."""
        context = ToolContext(
            self._cid,
            user.id,
            budget=ReplyBudget(self.offer),
            cancel=cancel,
            policy=policy,
            inbox=inbox,
            scope=scope.memory,
            sees_conversation=scope.sees_conversation,
            do_not_remember=conversation.do_not_remember,
        )
        # A retry of the message that asked answers nothing.
        questions = [
            p for p in conversation.pending if p.reason == "pinned" and p.message_id != user.id
        ]
        answer = explicit_answer(user.content) if questions else None
        if answer == "no":
            for question in questions:
                self._conversations.answer_pending(self._cid, question.id, "dismissed")
            context.declined = frozenset(q.target_id for q in questions if q.target_id)
            return context
        for question in questions:
            if question.target_id is not None:
                context.questions.setdefault(question.target_id, []).append(question)
        if answer == "yes":
            context.confirmable = frozenset(context.questions)
        return context

    def settle(self, context: ToolContext) -> None:
        """After the reply's steps: keep the new questions, close those a change answered."""
        for question in context.asked:
            self.offer(question)
        for pending_id in context.confirmed:
            self._conversations.answer_pending(self._cid, pending_id, "accepted")

    def offer(self, change: PendingChange) -> None:
        """Keep a change for the user's answer with the conversation, and show it."""
        self._conversations.add_pending(self._cid, change)
        self._on_event(MemorySuggested(self._cid, change))
