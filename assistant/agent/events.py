"""What the agent reports while it works: frozen events, each tagged with its `type`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from assistant.agent.tool_images import ToolImage
    from assistant.memory import MemoryEdit, ReplyStats
    from assistant.memory.pending import PendingChange


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's reply, as it streams in."""

    conversation_id: str
    text: str
    type: Literal["text_delta"] = field(default="text_delta", init=False)


@dataclass(frozen=True)
class ToolCallStarted:
    """The model asked for a tool; it is about to run."""

    conversation_id: str
    call_id: str
    name: str
    arguments: str
    type: Literal["tool_call_started"] = field(default="tool_call_started", init=False)


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool ran; `result` is what the model is told (an error message when `ok` is False)."""

    conversation_id: str
    call_id: str
    name: str
    result: str
    ok: bool
    images: tuple[ToolImage, ...] = ()  # shown to the model after the step's results
    type: Literal["tool_call_finished"] = field(default="tool_call_finished", init=False)


@dataclass(frozen=True)
class ConfirmationRequested:
    """A tool from an MCP server may change things: the turn waits until the user answers
    through the worker's `confirm(call_id, "once" | "always" | "deny")`, or stops the reply."""

    conversation_id: str
    call_id: str
    name: str  # as the model calls it
    server: str
    tool: str  # the server's own name of the tool
    arguments: str
    type: Literal["confirmation_requested"] = field(default="confirmation_requested", init=False)


@dataclass(frozen=True)
class MemorySuggested:
    """A change to memory waits for the user (over the reply's budget, or a pinned memory):
    the chat shows `change.describe()` with Accept / Dismiss (Yes / No for a question)."""

    conversation_id: str
    change: PendingChange
    type: Literal["memory_suggested"] = field(default="memory_suggested", init=False)


@dataclass(frozen=True)
class MemoryEdited:
    """A tool changed long-term memory; the chat shows `edit.describe()` with Undo, under the
    turn that asked `turn_id` (the user message answered; None: not known)."""

    conversation_id: str
    edit: MemoryEdit
    turn_id: str | None = None
    type: Literal["memory_edited"] = field(default="memory_edited", init=False)


@dataclass(frozen=True)
class Finished:
    """The turn is over; `message_id` is the saved final reply, `memory_ids` the long-term
    memories it saw (put in its prompt or recalled by a tool)."""

    conversation_id: str
    message_id: str
    text: str
    memory_ids: tuple[str, ...]
    cut_off: bool = False  # the reply stopped at the length limit
    stats: ReplyStats | None = None  # the model, token counts and speed of the reply
    type: Literal["finished"] = field(default="finished", init=False)


@dataclass(frozen=True)
class ToolsTurnedOff:
    """The model kept repeating tool calls and its tool use is "auto": it gets no tools from
    now on, until the user turns them back on."""

    conversation_id: str
    model: str
    type: Literal["tools_turned_off"] = field(default="tools_turned_off", init=False)


@dataclass(frozen=True)
class Waiting:
    """The model has not started answering for `seconds` (a slow or loaded server)."""

    conversation_id: str
    seconds: float
    type: Literal["waiting"] = field(default="waiting", init=False)


@dataclass(frozen=True)
class Notice:
    """Something the user should know that does not stop the turn, for the status bar."""

    conversation_id: str
    text: str
    type: Literal["notice"] = field(default="notice", init=False)


@dataclass(frozen=True)
class Failed:
    """The turn failed; `error` is a message for the user. What was shown is saved.
    `status`: what failed in a few words, for the status bar ("Request refused (HTTP 400)",
    "Connection problem"; "Connected" when nothing was sent and the connection is fine).
    `unsaved`: the user's new message could not be written, so it is not in the conversation."""

    conversation_id: str
    error: str
    status: str = "Reply failed"
    unsaved: bool = False
    type: Literal["failed"] = field(default="failed", init=False)


@dataclass(frozen=True)
class Cancelled:
    """The user stopped the turn; partial text is saved."""

    conversation_id: str
    type: Literal["cancelled"] = field(default="cancelled", init=False)


AgentEvent = (
    TextDelta
    | ToolCallStarted
    | ToolCallFinished
    | ConfirmationRequested
    | MemoryEdited
    | MemorySuggested
    | Waiting
    | ToolsTurnedOff
    | Notice
    | Finished
    | Failed
    | Cancelled
)
EventSink = Callable[[AgentEvent], None]
