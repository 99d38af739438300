"""What each server and model was found to support, learned as requests fail and fall back.

The provider is rebuilt for every turn; this memory outlives it (the workspace keeps one), so the
next turn goes straight to what works. Keys are (base URL, model).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

Key = tuple[str, str]


def server_key(base_url: str) -> str:
    """A server's part of a key, from its base URL written as in the settings: the URL as the
    `openai` client holds it (`openai_errors.server_url`: scheme and host in lower case, no
    trailing slash), so settings and providers name a server alike."""
    parts = urlsplit(base_url.strip())
    url = urlunsplit((parts.scheme.lower(), parts.netloc.lower(), *parts[2:]))
    return url.rstrip("/")


@dataclass(frozen=True)
class Capabilities:
    """What a server does with one model; the defaults are what OpenAI does."""

    stream: bool = True  # streams plain replies
    stream_tools: bool = True  # streams replies to requests that offer tools
    dropped: frozenset[str] = frozenset()  # optional request fields the server rejects
    max_completion_tokens: bool = False  # wants `max_completion_tokens` instead of `max_tokens`
    context_tokens: int | None = None  # the model's context window, in the server's tokens
    context_probed: bool = False  # the server's info endpoints were asked already
    token_ratio: float = 1.0  # the server's tokens per token of our estimate
    images: bool = True  # takes image parts in messages (learned False when refused)


class CapabilityMemory:
    """Thread-safe capabilities per (base URL, model); `notify` hears each lesson's notice once."""

    def __init__(self, notify: Callable[[str], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._known: dict[Key, Capabilities] = {}
        self._notify = notify

    def get(self, key: Key) -> Capabilities:
        """What is known of `key` (the defaults when nothing is)."""
        with self._lock:
            return self._known.get(key, Capabilities())

    def learn(self, key: Key, notice: str | None = None, **changes: Any) -> Capabilities:
        """Record `changes` for `key`; `notice` is told the user if they changed anything."""
        with self._lock:
            old = self._known.get(key, Capabilities())
            new = dataclasses.replace(old, **changes)
            self._known[key] = new
        if notice is not None and new != old and self._notify is not None:
            self._notify(notice)
        return new
