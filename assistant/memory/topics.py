"""Topics: short summaries ("scenes") of related memories, kept by the curator in `topics.json`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.fileio import atomic_write_json, read_json_object, set_aside
from assistant.memory.subscribers import Subscribers
from assistant.timestamps import stamp

log = logging.getLogger(__name__)

TOPICS_VERSION = 1
TOPICS_NAME = "topics.json"


@dataclass(frozen=True)
class Topic:
    """A topic: its name, a summary of its memories, and which memories they are."""

    name: str
    summary: str
    memory_ids: tuple[str, ...]
    updated_at: str


class TopicStore:
    """Thread-safe topics in one JSON file, rewritten atomically on change."""

    def __init__(self, memory_dir: Path) -> None:
        self.path = memory_dir / TOPICS_NAME
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._subscribers: Subscribers[None] = Subscribers("topic")
        self._topics: dict[str, Topic] = self._load()

    def _load(self) -> dict[str, Topic]:
        try:
            raw = read_json_object(self.path, TOPICS_VERSION, "topics")
            if raw is None:
                return {}
            if raw.get("version") != TOPICS_VERSION:
                raise ValueError(f"unsupported version {raw.get('version')!r}")
            return {
                name: Topic(name, str(t["summary"]), tuple(t["memory_ids"]), str(t["updated_at"]))
                for name, t in raw["topics"].items()
            }
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.warnings.append(set_aside(self.path, TOPICS_NAME, exc))
            return {}

    def _save(self) -> None:
        data: dict[str, Any] = {
            "version": TOPICS_VERSION,
            "topics": {
                t.name: {
                    "summary": t.summary,
                    "memory_ids": list(t.memory_ids),
                    "updated_at": t.updated_at,
                }
                for t in self._topics.values()
            },
        }
        atomic_write_json(self.path, data)

    def all(self) -> list[Topic]:
        """Every topic, most recently updated first."""
        with self._lock:
            return sorted(self._topics.values(), key=lambda t: t.updated_at, reverse=True)

    def get(self, name: str) -> Topic | None:
        """The topic called `name`, if any."""
        with self._lock:
            return self._topics.get(normalize(name))

    def add_memory(self, name: str, memory_id: str) -> Topic:
        """File a memory under a topic (creating it); returns the topic."""
        key = normalize(name)
        with self._lock:
            old = self._topics.get(key)
            ids = old.memory_ids if old else ()
            if memory_id not in ids:
                ids = (*ids, memory_id)
            topic = Topic(key, old.summary if old else "", ids, stamp())
            self._topics[key] = topic
            self._save()
        self._subscribers.notify(None)
        return topic

    def set_summary(self, name: str, summary: str, memory_ids: tuple[str, ...]) -> None:
        """Replace a topic's summary and the memories it covers."""
        key = normalize(name)
        with self._lock:
            self._topics[key] = Topic(key, summary.strip(), memory_ids, stamp())
            self._save()
        self._subscribers.notify(None)

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` after each change; returns an unsubscribe."""
        return self._subscribers.add(lambda _: callback())


def normalize(name: str) -> str:
    """Topic names compare case- and space-insensitively."""
    return " ".join(name.lower().split())[:80] or "general"
