"""Keeping the knowledge index up to date in a thread of its own.

At start: load the index from its records, rescan every folder (a stat per file), read what
changed while the app was closed, give the new chunks vectors; then follow the watcher: a
changed path is read again once it has been quiet for `debounce` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from assistant.errors import AssistantError
from assistant.knowledge.library import Knowledge
from assistant.knowledge.watcher import FolderWatcher

log = logging.getLogger(__name__)

Phase = Literal["reading", "embedding", "idle"]


@dataclass(frozen=True)
class KnowledgeEvent:
    """What the service is doing: reading files or embedding chunks (done of total, and the
    file being read), or idle (after a change was applied); `problem` if something failed."""

    phase: Phase
    done: int = 0
    total: int = 0
    path: str = ""
    problem: str = ""


class KnowledgeService:
    """Runs a Knowledge's scans, reads and embedding off the caller's thread.

    `on_event` is called on the service's thread. `stop` ends the thread (and the watcher's)
    and waits for them.
    """

    def __init__(
        self,
        knowledge: Knowledge,
        on_event: Callable[[KnowledgeEvent], None],
        *,
        watch: bool = True,
        debounce: float = 0.3,
    ) -> None:
        self.knowledge = knowledge
        self._on_event = on_event
        self._debounce = debounce
        self._watcher = FolderWatcher(self.changed) if watch else None
        self._wake = threading.Condition()
        self._pending: dict[str, float] = {}  # path -> when it last changed (monotonic)
        self._rescan = True
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="knowledge", daemon=True)

    def start(self) -> None:
        """Start: load, rescan, then follow changes."""
        self._thread.start()

    def rescan(self) -> None:
        """Scan every folder again (after the folders or the rules changed)."""
        with self._wake:
            self._rescan = True
            self._wake.notify()

    def changed(self, path: str) -> None:
        """A path changed (from the watcher, or anyone who knows)."""
        with self._wake:
            self._pending[path] = time.monotonic()
            self._wake.notify()

    def stop(self) -> None:
        """End the service's work (a read under way finishes first) and its threads."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread.is_alive():
            self._thread.join()
        if self._watcher is not None:
            self._watcher.stop()

    def _cancelled(self) -> bool:
        return self._stopping

    def _run(self) -> None:
        while True:
            with self._wake:
                due = self._next()
                while not self._stopping and not self._rescan and not due:
                    self._wake.wait(self._timeout())
                    due = self._next()
                if self._stopping:
                    return
                rescan, self._rescan = self._rescan, False
            try:
                if rescan:
                    self._sync()
                    continue
                changed = [self.knowledge.refresh(path) for path in due]  # each one, not any
                if any(changed):
                    self._embed()
                    self._on_event(KnowledgeEvent("idle"))
            except Exception as exc:  # a bug must not end the service unseen
                log.exception("Updating the knowledge index failed")
                self._on_event(KnowledgeEvent("idle", problem=f"Something went wrong: {exc}"))

    def _next(self) -> list[str]:
        """The paths quiet for `debounce` seconds, taken from the pending ones."""
        now = time.monotonic()
        due = [p for p, at in self._pending.items() if now - at >= self._debounce]
        for path in due:
            del self._pending[path]
        return due

    def _timeout(self) -> float | None:
        if not self._pending:
            return None
        return max(0.0, min(self._pending.values()) + self._debounce - time.monotonic())

    def _sync(self) -> None:
        def progress(done: int, total: int, path: str) -> None:
            self._on_event(KnowledgeEvent("reading", done, total, path))

        self.knowledge.sync(progress, self._cancelled)
        if self._watcher is not None and not self._stopping:
            for folder, problem in self._watcher.watch(
                self.knowledge.read_sources().folders
            ).items():
                log.info("%s: %s", folder, problem)
        self._embed()
        self._on_event(KnowledgeEvent("idle"))

    def _embed(self) -> None:
        def progress(done: int, total: int) -> None:
            self._on_event(KnowledgeEvent("embedding", done, total))

        try:
            self.knowledge.index.embed_pending(progress, self._cancelled)
        except AssistantError as exc:
            log.warning("Embedding file chunks failed: %s", exc)
            self._on_event(KnowledgeEvent("idle", problem=f"Embedding file chunks failed: {exc}"))
        else:
            self.knowledge.index.save()
