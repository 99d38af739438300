"""What the agent needs of a chat model: the `ChatProvider` protocol and its results."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assistant.agent.cancel import CancelToken


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for; `arguments` is its raw JSON string, maybe invalid."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class TokenUsage:
    """The tokens of a request as the server counted them."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class ChatResponse:
    """The model's answer: its text ("" when none), tool calls, why it stopped and the tokens
    it took (when the server said)."""

    content: str
    tool_calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None
    # What the answer cost, not what it says: two answers that say the same are equal.
    usage: TokenUsage | None = field(default=None, compare=False)

    @property
    def is_empty(self) -> bool:
        """Whether the model said nothing and called no tool."""
        return not self.content.strip() and not self.tool_calls

    @property
    def cut_off(self) -> bool:
        """Whether the answer stopped at the length limit (`max_tokens` or the context)."""
        return self.finish_reason == "length"


class ChatProvider(Protocol):
    """A chat model that answers a list of messages, optionally calling tools."""

    model: str

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
        json_mode: bool = False,
        max_tokens: int | None = None,
        on_wait: Callable[[float], None] | None = None,
    ) -> ChatResponse:
        """Answer `messages` in at most `max_tokens`; text is passed to `on_text` as it arrives.

        `on_wait(seconds)` hears how long the server has been silent before answering.
        """
        ...

    def context_window(self) -> int | None:
        """The model's context window in estimated tokens, if the server tells or told it."""
        ...
