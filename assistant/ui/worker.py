"""The one bridge between the GUI and the agent: a QObject living on its own QThread.

The rest of the UI reaches the agent only through this module: the worker, and the event
types it reports (`events`). Ruff's banned-api rule (TID251) enforces it.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThreadPool, Signal, Slot

from assistant.agent import events
from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.events import AgentEvent, Failed
from assistant.errors import AssistantError
from assistant.priority import lower_this_thread
from assistant.workspace import Workspace

if TYPE_CHECKING:
    from assistant.agent.loop import Upkeep

__all__ = ["AgentEvent", "AgentWorker", "events"]

log = logging.getLogger(__name__)


class AgentWorker(QObject):
    """Runs turns and embedding work off the GUI thread; reports through `agent_event`.

    Move it to a QThread and call its slots through queued signals; `cancel()` and `stop()`
    are the methods the GUI thread calls directly (they only set flags). Memory upkeep after
    a reply (the curator) runs as a job of the global thread pool, one reply after another,
    so the next message is answered at once; only `stop()` cancels it.
    """

    agent_event = Signal(object)  # an AgentEvent
    busy_changed = Signal(bool)
    upkeep_changed = Signal(int)  # how many replies' memory upkeep is queued or running
    progress = Signal(str, int, int)  # what, done, total (total 0: finished)

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self._workspace = workspace
        self._cancel = CancelToken()
        self._stopping = threading.Event()
        self._upkeep_cancel = CancelToken()
        self._upkeep_lock = threading.Lock()
        self._upkeep_queue: deque[Upkeep] = deque()
        self._upkeep_running = False
        self._idle = threading.Event()  # no turn is running (embedding waits for it)
        self._idle.set()
        self._embed_lock = threading.Lock()
        self._embedding = False  # the background embedding job runs
        self._embed_again = False  # asked for while it ran: it goes round once more

    def cancel(self) -> None:
        """Stop the running turn, not memory upkeep (safe to call from any thread)."""
        self._cancel.cancel()

    def stop(self) -> None:
        """Stop the running turn and background upkeep for good: the app is closing."""
        self._stopping.set()
        self._cancel.cancel()
        self._upkeep_cancel.cancel()

    @Slot(str, str)
    def submit(self, conversation_id: str, text: str) -> None:
        """Answer `text` in the conversation."""
        self._turn(conversation_id, text)

    @Slot(str, str, str)
    def edit(self, conversation_id: str, message_id: str, text: str) -> None:
        """Answer `text` as a new version of a user message (a new branch)."""
        self._turn(conversation_id, text, message_id)

    @Slot(str)
    def retry(self, conversation_id: str) -> None:
        """Answer the branch's last user message again (a new sibling reply)."""
        self._turn(conversation_id, None)

    def _turn(self, conversation_id: str, text: str | None, edited: str | None = None) -> None:
        self._cancel = CancelToken()
        if self._stopping.is_set():  # checked after the new token: `stop()` cancels one of them
            return
        self.busy_changed.emit(True)
        self._idle.clear()
        try:
            try:
                agent = self._workspace.agent(upkeep=self._schedule_upkeep)
            except AssistantError as exc:
                if text is not None and edited is None:  # keep it; Retry answers it later
                    self._workspace.conversations.append(conversation_id, "user", text)
                self._emit(Failed(conversation_id, str(exc)))
                return
            if text is None:
                agent.retry(conversation_id, self._emit, self._cancel)
            elif edited is not None:
                agent.edit(conversation_id, edited, text, self._emit, self._cancel)
            else:
                agent.run(conversation_id, text, self._emit, self._cancel)
        finally:
            self._idle.set()
            self.busy_changed.emit(False)
        self.embed_missing()  # the turn's new messages and memories, for search by meaning

    def _emit(self, event: AgentEvent) -> None:
        self.agent_event.emit(event)

    def _schedule_upkeep(self, job: Upkeep) -> None:
        """Queue memory upkeep; the turn goes on without waiting for it."""
        with self._upkeep_lock:
            if self._stopping.is_set():
                return
            self._upkeep_queue.append(job)
            pending = len(self._upkeep_queue) + self._upkeep_running
            start = not self._upkeep_running
            self._upkeep_running = True
        self.upkeep_changed.emit(pending)
        if start:
            QThreadPool.globalInstance().start(self._run_upkeep)

    def _run_upkeep(self) -> None:
        """Run the queued upkeep jobs in order (a thread-pool job: closing waits for it)."""
        while True:
            with self._upkeep_lock:
                if not self._upkeep_queue or self._stopping.is_set():
                    self._upkeep_queue.clear()
                    self._upkeep_running = False
                    pending = 0
                else:
                    job = self._upkeep_queue.popleft()
                    pending = len(self._upkeep_queue) + 1
            if not pending:
                self.upkeep_changed.emit(0)
                return
            try:
                job(self._upkeep_cancel)
            except OperationCancelledError:
                log.info("Memory upkeep stopped: the app is closing")
            except Exception:  # a bug must not end upkeep unseen
                log.exception("Memory upkeep failed")
            self.upkeep_changed.emit(pending - 1)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run a memory request of `assistant mcp` (from any thread but the GUI's: it may wait
        for the model); the answer as a JSON object for its socket."""
        from assistant.mcp_server.operations import answer

        if self._stopping.is_set():
            return {"ok": False, "retry": True, "error": "Assistant is closing."}
        try:
            return {"ok": True, "text": answer(self._workspace, request)}
        except AssistantError as exc:
            return {"ok": False, "error": str(exc)}

    @Slot()
    def maintain(self) -> None:
        """At start-up: read the memories' histories, let unused memories fade (archiving the
        faded), then fill in vectors."""
        if self._stopping.is_set():
            return
        settings = self._workspace.settings
        self._workspace.memory.load_history()
        events = self._workspace.memory.decay(half_life_days=settings.decay_half_life_days)
        if self._workspace.memory.clock_warning is not None:
            self._workspace.notices.say(self._workspace.memory.clock_warning)
        if events:
            archived = sum(e.type == "archived" for e in events)
            log.info("Decay: %d memories faded, %d archived", len(events) - archived, archived)
        self.embed_missing()

    @Slot()
    def embed_missing(self) -> None:
        """Give vectors to the memories and past messages that have none (after an import, a
        model change, offline work), in the background (see `_embed_all`)."""
        with self._embed_lock:
            if self._embedding:
                self._embed_again = True
                return
            self._embedding = True
        QThreadPool.globalInstance().start(self._run_embedding)

    def _run_embedding(self) -> None:
        """A thread-pool job (closing waits for it) that runs the embedding on a thread of its
        own: its low priority stays with that thread, not with a pooled one."""
        thread = threading.Thread(target=self._embed_all, name="background-embedding")
        thread.start()
        thread.join()

    def _embed_all(self) -> None:
        """Embed what has no vector, at a low priority, waiting while a reply is written; again
        if more was asked for meanwhile. Resumable: what was embedded is cached as it goes."""
        lower_this_thread()
        while not self._stopping.is_set():
            self._embed_memories()
            self._embed_messages()
            with self._embed_lock:
                if not self._embed_again or self._stopping.is_set():
                    self._embedding = False
                    return
                self._embed_again = False
        with self._embed_lock:
            self._embedding = False

    def _between_batches(self) -> bool:
        """Wait while a turn runs (its reply has the machine); True once the app is closing."""
        while not self._idle.wait(0.2):
            if self._stopping.is_set():
                return True
        return self._stopping.is_set()

    def _embed_memories(self) -> None:
        memory = self._workspace.memory
        if memory.embedding_status().model is None:
            return
        try:
            memory.embed_missing(
                lambda done, total: self.progress.emit("Embedding memories", done, total),
                cancel=self._between_batches,
            )
        except AssistantError as exc:
            log.warning("Embedding memories failed: %s", exc)
        finally:
            self.progress.emit("Embedding memories", 0, 0)

    def _embed_messages(self) -> None:
        conversations = self._workspace.conversations
        if not conversations.pending_embeddings():
            return
        try:
            conversations.embed_pending(
                lambda done, total: self.progress.emit("Embedding messages", done, total),
                cancel=self._between_batches,
            )
        except AssistantError as exc:
            log.warning("Embedding messages failed: %s", exc)
        finally:
            self.progress.emit("Embedding messages", 0, 0)
