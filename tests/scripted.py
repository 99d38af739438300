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


class UnscriptedCallError(AssertionError):
    """The code under test called the model more often than the test scripted."""


class ScriptedProvider:
    """Pops one scripted reply per call and records what it was asked.

    Strict: a call with nothing scripted raises `UnscriptedCallError` (and is recorded, in case
    the code under test catches it), and `assert_all_used()` fails if there was such a call or
    if a scripted reply was never asked for.
    """

    model = "scripted"

    def __init__(self, *replies: Script) -> None:
        self.replies: deque[Script] = deque(replies)
        self.requests: list[dict[str, Any]] = []
        self.unscripted: list[str] = []
        self.standing: list[tuple[Callable[[list[dict[str, Any]]], bool], Script]] = []
        self.streaming = threading.Event()  # set while streaming; tests cancel on it
        self.chunk_pause = 0.0
        self.window: int | None = None  # what `context_window()` says

    def context_window(self) -> int | None:
        """The context window the test set, in estimated tokens."""
        return self.window

    def enqueue(self, *replies: Script) -> None:
        """Queue more replies."""
        self.replies.extend(replies)

    def always(self, when: Callable[[list[dict[str, Any]]], bool], script: Script) -> None:
        """Answer every call whose messages match `when` with `script` (it is not used up)."""
        self.standing.append((when, script))

    def assert_all_used(self) -> None:
        """Fail if the model was called unscripted, or a scripted reply was never asked for."""
        assert not self.unscripted, f"unscripted model calls: {self.unscripted}"
        assert not self.replies, f"{len(self.replies)} scripted replies were never used"

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
        listed = [dict(m) for m in messages]
        self.requests.append(
            {"messages": listed, "tools": tools, "json_mode": json_mode, "max_tokens": max_tokens}
        )
        standing = [script for when, script in self.standing if when(listed)]
        if standing:
            script = standing[0]
        elif self.replies:
            script = self.replies.popleft()
        else:
            asked = listed[-1].get("content") if listed else None
            self.unscripted.append(f"call #{len(self.requests)}: {asked!r}")
            raise UnscriptedCallError(f"model call #{len(self.requests)} was not scripted")
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
