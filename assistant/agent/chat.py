"""What the agent needs of a chat model: the `ChatProvider` protocol and its results."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from assistant.agent.cancel import CancelToken


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for; `arguments` is its raw JSON string, maybe invalid."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatResponse:
    """The model's answer: its text ("" when none), tool calls and why it stopped."""

    content: str
    tool_calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None


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
    ) -> ChatResponse:
        """Answer `messages`; text is passed to `on_text` as it arrives."""
        ...
