"""The one bridge between the GUI and the agent: a QObject living on its own QThread.

The rest of the UI reaches the agent only through this module: the worker, the event types it
reports (`events`), and the few calls below that the memories page makes of the agent (Reflect
now, the pinned budget). Ruff's banned-api rule (TID251) enforces it for imports; the UI calls
no agent-building method of the Workspace either.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal, Slot

from assistant.agent import events
from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.confirm import Choice, Confirmations
from assistant.agent.events import AgentEvent, Failed
from assistant.agent.prompt import unfence
from assistant.agent.tool_images import ToolImage, saved_names
from assistant.agent.turn_gate import TurnGate
from assistant.errors import AssistantError, status_of
from assistant.memory import (
    AttachedFile,
    Conversation,
    ConversationNotFoundError,
    ConversationStore,
)
from assistant.model_options import ModelOptions
from assistant.priority import lower_this_thread
from assistant.ui.conversations.list_edit import ListEdit
from assistant.workspace import Workspace

if TYPE_CHECKING:
    from assistant.agent.loop import Agent, Upkeep
    from assistant.agent.reflection import Reflection

__all__ = [
    "AgentEvent",
    "AgentWorker",
    "Reflection",
    "ToolImage",
    "events",
    "pinned_overflow",
    "reflect",
    "saved_names",
    "unfence",
    "write_edit",
]

log = logging.getLogger(__name__)

# How long a thread that wants the GIL waits before the running one must hand it over (Python's
# default is 5 ms). The worker's thread and the pool's jobs (the curator after each reply) run
# Python beside the GUI thread, which needs the GIL for each slot, event filter or paint of
# ours it runs: each could wait this long, and a reply's end runs several in one frame.
GIL_SWITCH_S = 0.001
# Memory upkeep after a reply starts this long after the GUI thread has taken in the reply's
# end: the curator's Python would otherwise compete for the GIL with the drawing of that end.
UPKEEP_AFTER_MS = 50


class AgentWorker(QObject):
    """Runs turns, the writes to conversations and embedding work off the GUI thread;
    reports through `agent_event`.

    Move it to a QThread and call its slots through queued signals (they run in the order
    sent: a branch chosen before a message is sent is the one it is answered on); `cancel()`
    and `stop()` are the methods the GUI thread calls directly (they only set flags). Memory
    upkeep after a reply (the curator) runs as a job of the global thread pool, one reply
    after another, so the next message is answered at once; only `stop()` cancels it.

    One agent serves every turn while the settings and the key stay the same, so what it
    carries from turn to turn (a question about a pinned memory that the next message
    answers) lasts as long as the app runs; new settings make a new agent.
    """

    agent_event = Signal(object)  # an AgentEvent
    busy_changed = Signal(bool)
    upkeep_changed = Signal(int)  # how many replies' memory upkeep is queued or running
    progress = Signal(str, int, int)  # what, done, total (total 0: finished)
    not_saved = Signal(str, str)  # a new chat (`create`) whose file could not be made, and why
    list_edited = Signal(object, str)  # a ListEdit (`edit_list`), and "" or why it failed
    _upkeep_queued = Signal()  # to the GUI thread, which starts the upkeep once it has drawn

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        sys.setswitchinterval(GIL_SWITCH_S)
        self._workspace = workspace
        self._cancel = CancelToken()
        self._confirmations = Confirmations()
        self._stopping = threading.Event()
        self._upkeep_cancel = CancelToken()
        self._upkeep_lock = threading.Lock()
        self._upkeep_queue: deque[Upkeep] = deque()
        self._upkeep_running = False
        self._gate = TurnGate()  # upkeep asks the model between turns, never during one
        self._agent: Agent | None = None
        self._agent_built_from: object = None  # the workspace's `agent_fingerprint`
        self._idle = threading.Event()  # no turn is running (embedding waits for it)
        self._idle.set()
        self._embed_lock = threading.Lock()
        self._embedding = False  # the background embedding job runs
        self._embed_again = False  # asked for while it ran: it goes round once more
        self._upkeep_starter = _UpkeepStarter(self._start_upkeep)  # lives in the GUI thread
        self._upkeep_queued.connect(
            self._upkeep_starter.start_soon, Qt.ConnectionType.QueuedConnection
        )

    def cancel(self) -> None:
        """Stop the running turn, not memory upkeep (safe to call from any thread)."""
        self._cancel.cancel()

    def confirm(self, call_id: str, choice: Choice) -> None:
        """The user's answer to a tool that asks before it runs (safe from any thread)."""
        self._confirmations.answer(call_id, choice)

    def stop(self) -> None:
        """Stop the running turn and background upkeep for good: the app is closing."""
        self._stopping.set()
        self._cancel.cancel()
        self._upkeep_cancel.cancel()

    @Slot(str, str, list)
    def submit(self, conversation_id: str, text: str, files: list[str]) -> None:
        """Answer `text`, carrying `files` (copied into the data dir), in the conversation."""
        self._turn(conversation_id, text, files=files)

    @Slot(str, str, str, list, list)
    def edit(
        self, conversation_id: str, message_id: str, text: str, files: list[str], kept: list[str]
    ) -> None:
        """Answer `text` as a new version of a user message (a new branch), carrying `files`
        and the files of that message named in `kept` (by id)."""
        self._turn(conversation_id, text, message_id, files=files, kept=kept)

    @Slot(str, str)
    def retry(self, conversation_id: str, message_id: str) -> None:
        """Answer a user message again (a new sibling reply); "": the branch's last one."""
        self._turn(conversation_id, None, again=message_id or None)

    @Slot(str, str)
    def choose_branch(self, conversation_id: str, leaf_id: str) -> None:
        """Make the branch that ends at `leaf_id` the one shown and continued."""
        self._write(
            "choose a branch of", conversation_id, lambda c: c.set_leaf(conversation_id, leaf_id)
        )

    @Slot(object)
    def create(self, conversation: Conversation) -> None:
        """Save a new, empty conversation (`new_conversation`), which the window shows already;
        `not_saved` says if it could not be."""
        try:
            self._workspace.conversations.save_new(conversation)
        except AssistantError as exc:
            log.warning("Could not save new conversation %s: %s", conversation.id, exc)
            self.not_saved.emit(conversation.id, str(exc))

    @Slot(object)
    def edit_list(self, edit: ListEdit) -> None:
        """Write what the conversation list asks (it shows it already); `list_edited` answers."""
        self.list_edited.emit(edit, write_edit(self._workspace.conversations, edit))

    @Slot(str, str)
    def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title."""
        self._write("rename", conversation_id, lambda c: c.rename(conversation_id, title))

    @Slot(str, object, object)
    def set_model(self, conversation_id: str, model: str | None, options: ModelOptions) -> None:
        """Choose a conversation's model (None: the settings' one) and its own options."""
        self._write(
            "change the model of",
            conversation_id,
            lambda c: c.set_model(conversation_id, model, options),
        )

    @Slot(str)
    def delete(self, conversation_id: str) -> None:
        """Delete a conversation (one left that is empty or temporary)."""
        self._write("delete", conversation_id, lambda c: c.delete(conversation_id))

    def _write(
        self, what: str, conversation_id: str, write: Callable[[ConversationStore], object]
    ) -> None:
        try:
            write(self._workspace.conversations)
        except ConversationNotFoundError:  # gone meanwhile: nothing to change
            log.info("Could not %s conversation %s: it is gone", what, conversation_id)
        except (AssistantError, ValueError) as exc:  # the disk refuses, or a stale branch
            self._emit(events.Notice(conversation_id, f"Could not {what} the conversation: {exc}"))

    def _agent_for_turn(self) -> Agent:
        """The agent, built again if the settings or the key changed since the last turn."""
        built_from = self._workspace.agent_fingerprint()
        if self._agent is None or built_from != self._agent_built_from:
            self._agent = self._workspace.agent(
                upkeep=self._schedule_upkeep, confirmations=self._confirmations, gate=self._gate
            )
            self._agent_built_from = built_from
        return self._agent

    def _turn(
        self,
        conversation_id: str,
        text: str | None,
        edited: str | None = None,
        *,
        again: str | None = None,
        files: list[str] | None = None,
        kept: list[str] | None = None,
    ) -> None:
        self._cancel = CancelToken()
        if self._stopping.is_set():  # checked after the new token: `stop()` cancels one of them
            return
        self.busy_changed.emit(True)
        self._idle.clear()
        self._gate.turn_started()
        try:
            try:
                attached = self._copy(conversation_id, files or [])
                agent = self._agent_for_turn()
            except AssistantError as exc:
                self._emit(self._not_started(conversation_id, text, edited, exc))
                return
            if text is None:
                agent.retry(conversation_id, self._emit, self._cancel, again)
            elif edited is not None:
                agent.edit(
                    conversation_id,
                    edited,
                    text,
                    self._emit,
                    self._cancel,
                    attachments=attached,
                    kept=kept or (),
                )
            else:
                agent.run(conversation_id, text, self._emit, self._cancel, attachments=attached)
        finally:
            self._gate.turn_ended()
            self._idle.set()
            self.busy_changed.emit(False)
        self.embed_missing()  # the turn's new messages and memories, for search by meaning

    def _not_started(
        self, conversation_id: str, text: str | None, edited: str | None, exc: AssistantError
    ) -> Failed:
        """A turn that could not start: a new message is kept with its failure (Retry answers
        it later); `unsaved` if it could not be, or is a new version of a message."""
        error, status = str(exc), status_of(exc)
        if text is None:
            return Failed(conversation_id, error, status)
        if edited is not None:
            return Failed(conversation_id, error, status, unsaved=True)
        store = self._workspace.conversations
        try:
            message = store.append(conversation_id, "user", text)
        except AssistantError as write_error:
            log.warning("Could not keep the message in %s: %s", conversation_id, write_error)
            return Failed(conversation_id, error, status, unsaved=True)
        try:
            store.note_failure(conversation_id, message.id, error)
        except AssistantError as write_error:  # the mark shows in this run only
            log.warning("Could not note the failure in %s: %s", conversation_id, write_error)
        return Failed(conversation_id, error, status)

    def _copy(self, conversation_id: str, files: list[str]) -> list[AttachedFile]:
        """Copy the files a message carries into the data dir; AttachmentError (nothing kept)
        if one cannot be."""
        store = self._workspace.attachments
        copied = []
        try:
            for name in files:
                copied.append(store.add(conversation_id, Path(name)))
        except AssistantError:
            for attachment in copied:
                store.remove(conversation_id, attachment.id)
            raise
        return [a.ref() for a in copied]

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
        if start:  # queued behind the reply's events: the GUI thread takes those in first
            self._upkeep_queued.emit()

    def _start_upkeep(self) -> None:
        if not self._stopping.is_set():  # closed meanwhile: the window waited for the pool
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
        if memory.embedding_status().model is not None:
            self._embed("Embedding memories", memory.embed_missing)

    def _embed_messages(self) -> None:
        conversations = self._workspace.conversations
        if conversations.pending_embeddings():
            self._embed("Embedding messages", conversations.embed_pending)

    def _embed(self, label: str, run: Callable[..., object]) -> None:
        """Run one store's embedding, its progress shown under `label`; a failure is logged."""
        try:
            run(
                lambda done, total: self.progress.emit(label, done, total),
                cancel=self._between_batches,
            )
        except AssistantError as exc:
            log.warning("%s failed: %s", label, exc)
        finally:
            self.progress.emit(label, 0, 0)


def write_edit(store: ConversationStore, edit: ListEdit) -> str:
    """Write an edit of the conversation list, one conversation after another (one gone
    meanwhile has nothing to change); "" once written, else why it could not be."""
    try:
        for cid in edit.ids:
            try:
                if edit.deletes:
                    store.delete(cid)
                elif edit.title is not None:
                    store.rename(cid, edit.title)
                elif edit.moves:
                    store.set_project(cid, edit.project)
                else:
                    store.set_flags(cid, pinned=edit.pinned, archived=edit.archived)
            except ConversationNotFoundError:
                log.info("Could not %s conversation %s: it is gone", edit.what, cid)
    except (AssistantError, ValueError) as exc:  # the disk refuses, or a temporary chat
        return str(exc)
    return ""


def reflect(workspace: Workspace) -> Reflection:
    """Write insights from recent related memories now, within the daily cap (the memories
    page's "Reflect Now"); blocks: run it as a job. ProviderError if no model is set up."""
    return workspace.reflect()


def pinned_overflow(workspace: Workspace) -> tuple[int, int] | None:
    """(tokens the pinned memories need, tokens a prompt keeps for memories) if over."""
    from assistant.agent.budget import prompt_budget
    from assistant.agent.prompt import MEMORY_SHARE, pinned_tokens

    # The window the server states is learned in a turn; before one, the default budget.
    allowed = int(prompt_budget(workspace.settings.prompt_budget_tokens, None) * MEMORY_SHARE)
    used = pinned_tokens(workspace.memory.pinned())
    return (used, allowed) if used > allowed else None


class _UpkeepStarter(QObject):
    """Starts memory upkeep from the GUI thread, a moment after it took in a reply's end."""

    def __init__(self, start: Callable[[], None]) -> None:
        super().__init__()
        self._start = start

    @Slot()
    def start_soon(self) -> None:
        QTimer.singleShot(UPKEEP_AFTER_MS, self, self._start)  # none once this is gone
