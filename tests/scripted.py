"""A scripted `ChatProvider` for loop and UI tests: replies are queued by the test."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assistant.agent.cancel import CancelToken
from assistant.agent.chat import ChatResponse, ToolCallRequest

Script = ChatResponse | str | Exception | Callable[[list[dict[str, Any]]], "ChatResponse | str"]


def text(content: str) -> ChatResponse:
    """A final text reply."""
    return ChatResponse(content, (), "stop")


def calls(*requests: tuple[str, dict[str, Any] | str], content: str = "") -> ChatResponse:
    """A reply asking for tools: (name, arguments as a dict or a raw string) pairs."""
    made = tuple(
        ToolCallRequest(f"call_{i}", name, args if isinstance(args, str) else json.dumps(args))
        for i, (name, args) in enumerate(requests)
    )
    return ChatResponse(content, made, "tool_calls")


class ScriptedProvider:
    """Pops one scripted reply per call and records what it was asked."""

    model = "scripted"

    def __init__(self, *replies: Script, default: str = "OK.") -> None:
        self.replies: deque[Script] = deque(replies)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.streaming = threading.Event()  # set while streaming; tests cancel on it
        self.chunk_pause = 0.0

    def enqueue(self, *replies: Script) -> None:
        """Queue more replies."""
        self.replies.extend(replies)

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
        json_mode: bool = False,
    ) -> ChatResponse:
        listed = [dict(m) for m in messages]
        self.requests.append({"messages": listed, "tools": tools, "json_mode": json_mode})
        script = self.replies.popleft() if self.replies else self.default
        if isinstance(script, Exception):
            raise script
        reply = script(listed) if callable(script) else script
        response = text(reply) if isinstance(reply, str) else reply
        if on_text is not None:
            for piece in _pieces(response.content):
                if cancel is not None:
                    cancel.raise_if_cancelled()
                on_text(piece)
                self.streaming.set()
                if self.chunk_pause and cancel is not None:
                    cancel.wait(self.chunk_pause)
        return response


def _pieces(content: str) -> list[str]:
    """The text in word-sized chunks, as a server would stream it."""
    words = content.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]] if content else []
