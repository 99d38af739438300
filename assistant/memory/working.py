"""Working memory: each conversation's task, subgoal stack, scratchpad and named results."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.errors import StorageError
from assistant.fileio import atomic_write_json, copy_aside, read_json_object, set_aside
from assistant.memory.subscribers import Subscribers

log = logging.getLogger(__name__)

WORKING_VERSION = 1
FILE_NAME = "working.json"

MAX_TASK_CHARS = 1000
MAX_SUBGOALS = 20
MAX_SUBGOAL_CHARS = 500
MAX_NOTES = 20
MAX_SCRATCHPAD_CHARS = 4000
MAX_RESULTS = 20
MAX_RESULT_CHARS = 2000
TRUNCATED = " …[truncated]"


@dataclass
class WorkingMemory:
    """The working memory of one conversation; a snapshot, changed only through the store."""

    task: str = ""
    subgoals: list[str] = field(default_factory=list)
    scratchpad: list[str] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)

    def is_empty(self) -> bool:
        """Whether there is nothing in it at all."""
        return not (self.task or self.subgoals or self.scratchpad or self.results)

    def to_prompt(self) -> str:
        """A compact text block for the system prompt, or "" when empty."""
        if self.is_empty():
            return ""
        lines = ["Working memory:"]
        if self.task:
            lines.append(f"Task: {_indent(self.task)}")
        if self.subgoals:
            lines.append("Subgoals (current last):")
            lines += [f"- {_indent(s)}" for s in self.subgoals]
        if self.scratchpad:
            lines.append("Scratchpad:")
            lines += [f"- {_indent(n)}" for n in self.scratchpad]
        if self.results:
            lines.append("Results:")
            lines += [f"- {name}: {_indent(value)}" for name, value in self.results.items()]
        return "\n".join(lines)

    def copy(self) -> WorkingMemory:
        """An independent copy."""
        return WorkingMemory(
            self.task, list(self.subgoals), list(self.scratchpad), dict(self.results)
        )

    def to_json(self) -> dict[str, Any]:
        """The memory as a JSON object."""
        return {
            "task": self.task,
            "subgoals": list(self.subgoals),
            "scratchpad": list(self.scratchpad),
            "results": dict(self.results),
        }

    @classmethod
    def from_json(cls, raw: object) -> WorkingMemory:
        """Parse a JSON object, raising ValueError when a field has the wrong type."""
        if not isinstance(raw, dict):
            raise ValueError("an entry is not a JSON object")
        task = raw.get("task", "")
        subgoals = raw.get("subgoals", [])
        scratchpad = raw.get("scratchpad", [])
        results = raw.get("results", {})
        if not isinstance(task, str):
            raise ValueError("'task' is not a string")
        for name, value in (("subgoals", subgoals), ("scratchpad", scratchpad)):
            if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                raise ValueError(f"{name!r} is not a list of strings")
        if not isinstance(results, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in results.items()
        ):
            raise ValueError("'results' is not an object of strings")
        # The limits of `update` hold on loading too (the newest subgoals, notes and results).
        kept = [_clip(s, MAX_SUBGOAL_CHARS) for s in subgoals[-MAX_SUBGOALS:]]
        memory = cls(_clip(task, MAX_TASK_CHARS), kept, [], {})
        for note in scratchpad:
            _add_note(memory, note)
        for name, value in results.items():
            _set_result(memory, name, value)
        return memory


class WorkingMemoryStore:
    """All conversations' working memories in `<memory dir>/working.json`; thread-safe."""

    def __init__(self, memory_dir: Path) -> None:
        self.path = memory_dir / FILE_NAME
        self.warnings: list[str] = []
        self._lock = threading.RLock()
        self._subscribers: Subscribers[str] = Subscribers("working memory")
        self._memories = self._load()

    def _load(self) -> dict[str, WorkingMemory]:
        try:
            raw = read_json_object(self.path, WORKING_VERSION, "working memory")
            if raw is None:
                return {}
            if not isinstance(raw.get("conversations"), dict):
                raise ValueError("it has no 'conversations' object")
            if raw.get("version") != WORKING_VERSION:
                raise ValueError(f"unsupported version {raw.get('version')!r}")
            memories = {
                cid: WorkingMemory.from_json(entry) for cid, entry in raw["conversations"].items()
            }
        except ValueError as exc:
            self.warnings.append(set_aside(self.path, "Working memory file", exc))
            return {}
        if any(m.to_json() != _as_written(raw["conversations"][c]) for c, m in memories.items()):
            kept = copy_aside(self.path)
            message = (
                f"Working memory: some of it was over its limits and was shortened; the file as "
                f"found was kept as {kept.name}."
            )
            log.warning(message)
            self.warnings.append(message)
        return memories

    def get(self, conversation_id: str) -> WorkingMemory:
        """A copy of the conversation's working memory (empty if it has none)."""
        with self._lock:
            memory = self._memories.get(conversation_id)
            return memory.copy() if memory else WorkingMemory()

    def update(
        self,
        conversation_id: str,
        *,
        task: str | None = None,
        push_subgoal: str | None = None,
        pop_subgoal: bool = False,
        note: str | None = None,
        result_name: str | None = None,
        result: str | None = None,
        clear: bool = False,
    ) -> WorkingMemory:
        """Apply the changes in order (clear, task, pop, push, note, result), all or none.

        Raises ValueError for an invalid change, leaving the memory as it was.
        """
        if (result_name is None) != (result is None):
            raise ValueError("result_name and result must be given together")
        with self._lock:
            before = self._memories.get(conversation_id, WorkingMemory())
            after = WorkingMemory() if clear else before.copy()
            if task is not None:
                after.task = _clip(task.strip(), MAX_TASK_CHARS)
            if pop_subgoal:
                if not after.subgoals:
                    raise ValueError("there is no subgoal to pop")
                after.subgoals.pop()
            if push_subgoal is not None:
                _push_subgoal(after, push_subgoal)
            if note is not None:
                if not note.strip():
                    raise ValueError("a note must not be empty")
                _add_note(after, note.strip())
            if result_name is not None and result is not None:
                if not result_name.strip():
                    raise ValueError("result_name must not be empty")
                _set_result(after, result_name.strip(), result)
            changed = after != before
            if changed:
                self._commit(conversation_id, after)
            snapshot = after.copy()
        if changed:
            self._subscribers.notify(conversation_id)
        return snapshot

    def conversation_ids(self) -> list[str]:
        """The conversations that have a working memory."""
        with self._lock:
            return list(self._memories)

    def drop(self, conversation_id: str) -> None:
        """Forget the conversation's working memory (e.g. when the conversation is deleted)."""
        with self._lock:
            if conversation_id not in self._memories:
                return
            self._commit(conversation_id, WorkingMemory())
        self._subscribers.notify(conversation_id)

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(conversation_id)` after each change; returns the unsubscribe function."""
        return self._subscribers.add(callback)

    def _commit(self, conversation_id: str, memory: WorkingMemory) -> None:
        """Save the memories with `memory` in place (an empty one removes the entry)."""
        memories = dict(self._memories)
        if memory.is_empty():
            memories.pop(conversation_id, None)
        else:
            memories[conversation_id] = memory
        doc = {
            "version": WORKING_VERSION,
            "conversations": {cid: m.to_json() for cid, m in memories.items()},
        }
        try:
            atomic_write_json(self.path, doc)
        except OSError as exc:
            raise StorageError(f"Could not save working memory to {self.path}: {exc}") from exc
        self._memories = memories


def _as_written(raw: dict[str, Any]) -> dict[str, Any]:
    """A valid entry of the file with its defaults, as `WorkingMemory.to_json` writes one."""
    return {name: raw.get(name, value) for name, value in WorkingMemory().to_json().items()}


def _push_subgoal(memory: WorkingMemory, subgoal: str) -> None:
    if not subgoal.strip():
        raise ValueError("a subgoal must not be empty")
    if len(memory.subgoals) >= MAX_SUBGOALS:
        raise ValueError(f"the subgoal stack is full ({MAX_SUBGOALS}); pop one first")
    memory.subgoals.append(_clip(subgoal.strip(), MAX_SUBGOAL_CHARS))


def _add_note(memory: WorkingMemory, note: str) -> None:
    """Append a note, then drop the oldest until the scratchpad is within its bounds."""
    pad = [*memory.scratchpad, _clip(note, MAX_SCRATCHPAD_CHARS)][-MAX_NOTES:]
    total = sum(len(n) for n in pad)
    while total > MAX_SCRATCHPAD_CHARS:
        total -= len(pad.pop(0))
    memory.scratchpad = pad


def _set_result(memory: WorkingMemory, name: str, value: str) -> None:
    """Set a named result (newest last), dropping the oldest beyond the bound."""
    memory.results.pop(name, None)
    memory.results[name] = _clip(value, MAX_RESULT_CHARS)
    while len(memory.results) > MAX_RESULTS:
        del memory.results[next(iter(memory.results))]


def _clip(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with a marker if it is longer."""
    if len(text) <= limit:
        return text
    return text[: limit - len(TRUNCATED)] + TRUNCATED


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")
