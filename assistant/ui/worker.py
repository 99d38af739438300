"""The one bridge between the GUI and the agent: a QObject living on its own QThread."""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QObject, Signal, Slot

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, Failed
from assistant.errors import AssistantError
from assistant.workspace import Workspace

log = logging.getLogger(__name__)


class AgentWorker(QObject):
    """Runs turns and embedding work off the GUI thread; reports through `agent_event`.

    Move it to a QThread and call its slots through queued signals; `cancel()` and `stop()`
    are the methods the GUI thread calls directly (they only set flags).
    """

    agent_event = Signal(object)  # an AgentEvent
    busy_changed = Signal(bool)
    progress = Signal(str, int, int)  # what, done, total (total 0: finished)

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self._workspace = workspace
        self._cancel = CancelToken()
        self._stopping = threading.Event()

    def cancel(self) -> None:
        """Stop the running turn (safe to call from any thread)."""
        self._cancel.cancel()

    def stop(self) -> None:
        """Stop the running turn and background upkeep for good: the app is closing."""
        self._stopping.set()
        self._cancel.cancel()

    @Slot(str, str)
    def submit(self, conversation_id: str, text: str) -> None:
        """Answer `text` in the conversation."""
        self._turn(conversation_id, text)

    @Slot(str)
    def retry(self, conversation_id: str) -> None:
        """Answer the conversation's last user message again."""
        self._turn(conversation_id, None)

    def _turn(self, conversation_id: str, text: str | None) -> None:
        self._cancel = CancelToken()
        if self._stopping.is_set():  # checked after the new token: `stop()` cancels one of them
            return
        self.busy_changed.emit(True)
        try:
            try:
                agent = self._workspace.agent()
            except AssistantError as exc:
                if text is not None:  # keep what the user wrote; Retry answers it later
                    self._workspace.conversations.append(conversation_id, "user", text)
                self._emit(Failed(conversation_id, str(exc)))
                return
            if text is None:
                agent.retry(conversation_id, self._emit, self._cancel)
            else:
                agent.run(conversation_id, text, self._emit, self._cancel)
        finally:
            self.busy_changed.emit(False)

    def _emit(self, event: AgentEvent) -> None:
        self.agent_event.emit(event)

    @Slot()
    def maintain(self) -> None:
        """At start-up: archive long-unused unimportant memories, then fill in vectors."""
        if self._stopping.is_set():
            return
        archived = self._workspace.memory.decay(days=self._workspace.settings.decay_days)
        if archived:
            log.info("Archived %d long-unused memories", len(archived))
        self.embed_missing()

    @Slot()
    def embed_missing(self) -> None:
        """Give vectors to the memories that have none (after a model change or offline)."""
        memory = self._workspace.memory
        if memory.embedding_status().model is None:
            return
        try:
            memory.embed_missing(
                lambda done, total: self.progress.emit("Embedding memories", done, total),
                cancel=self._stopping.is_set,
            )
        except AssistantError as exc:
            log.warning("Embedding memories failed: %s", exc)
        finally:
            self.progress.emit("Embedding memories", 0, 0)
