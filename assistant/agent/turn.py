"""The state of one turn of the agent loop."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from assistant.agent.attached import TurnFiles
from assistant.agent.builtin_tools import ToolContext
from assistant.agent.cancel import CancelToken
from assistant.agent.chat import ToolCallRequest
from assistant.agent.chat_scope import ChatScope
from assistant.agent.events import EventSink, Notice, ToolsTurnedOff
from assistant.agent.model_choice import TurnModel
from assistant.agent.tools import ToolRegistry
from assistant.memory import Conversation, Message, ReplyStats
from assistant.memory.messages import call_key

LOOPING_NOTICE = "The model kept repeating the same tool call; it answered without tools."


@dataclass
class Turn:
    """The state of one turn."""

    conversation: Conversation
    user: Message
    on_event: EventSink
    cancel: CancelToken
    context: ToolContext
    registry: ToolRegistry
    model: TurnModel  # the model asked, with its options
    memory_ids: list[str] = field(default_factory=list)
    shrink: float = 1.0  # the budget's factor after overflows with no window stated
    use_tools: bool = True  # False when the tool schemas would take too much of the budget
    prompt_tokens: int = 0  # the estimated size of the last prompt built
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)  # by name and arguments
    files: TurnFiles | None = None  # the attached files' part of the prompt
    files_read: bool = False  # `files` is set (they are read once a turn)
    scope: ChatScope = field(default_factory=ChatScope)  # its project, and the memories it sees
    stats: ReplyStats | None = None  # of the last model call: its tokens and speed

    @property
    def cid(self) -> str:
        return self.conversation.id

    @property
    def long_term(self) -> bool:
        return not self.conversation.temporary

    def count_call(self, call: ToolCallRequest) -> int:
        """How often this turn has asked for this call (this time included)."""
        key = call_key(call.name, call.arguments)
        self.calls[key] += 1
        return self.calls[key]

    def looped_on_tools(self) -> None:
        """The model repeats a tool call: no more tools this turn, and with "auto" tool use,
        none for this model from now on (said in the chat)."""
        self.use_tools = False
        model = self.model
        if model.options.tools == "auto" and model.tools_looped is not None:
            model.tools_looped(model.provider.model)
            self.on_event(ToolsTurnedOff(self.cid, model.provider.model))
        else:
            self.on_event(Notice(self.cid, LOOPING_NOTICE))
