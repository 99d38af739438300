"""The conversation on screen: held in memory, answered through the worker, kept up to date
by what the agent and the store report.

The session is the one listener of the agent's events and of the writes to conversations. It
holds the conversation shown (and the one being answered) and applies each record the store
writes to it, so a turn never reads a conversation file on the GUI thread; it asks the worker
for every turn and every write (a new chat's file, title, branch, deletion), which run there in
the order asked (a new chat is held and shown before its file is made);
it streams the reply into the chat and keeps what the reply showed so far, so that a user who
comes back mid-reply sees it again. The window hears what it needs by signals.

Events reach their handler through one table (`_handlers`): a new kind of event (a question
the chat asks the user, say) is a new row and a method.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from assistant.errors import AssistantError
from assistant.knowledge.attachments import check, label
from assistant.memory import (
    DEFAULT_TITLE,
    Conversation,
    ConversationNotFoundError,
    ConversationStore,
    ConversationWrite,
)
from assistant.ui.chat.document import ERROR_MARK
from assistant.ui.chat.memory_edit_lines import MemoryEditLines
from assistant.ui.chat.suggestion_lines import SuggestionLines
from assistant.ui.chat.view import ChatView
from assistant.ui.debounce import Debounced
from assistant.ui.wording import shorten
from assistant.ui.worker import AgentEvent, AgentWorker, events

log = logging.getLogger(__name__)

TITLE_WORDS = 7
TEXT_FLUSH_MS = 30  # streamed text is shown in batches at most this often
ARGUMENTS_CHARS = 80  # of a tool's arguments, in the question before it runs
# What a reply showed, shown again when its conversation is shown again mid-reply (a question
# waiting for the user's answer too, until it is answered).
_REPLAYED = (
    events.TextDelta
    | events.ToolCallStarted
    | events.ToolCallFinished
    | events.ConfirmationRequested
)
_ENDS = events.Finished | events.Failed | events.Cancelled
UNSENT_BACK = "Your message is back in the message box: send it again."


class ChatSession(QObject):
    """The conversation shown in `chat` and the turns asked of `worker` about it."""

    conversation_changed = Signal(object)  # the Conversation shown (None: none), after a change
    busy_changed = Signal(bool)  # a reply is being written (in any conversation)
    connection = Signal(str, str)  # what the connection label says, and its tooltip ("": keep)
    notice = Signal(str)  # for the status bar
    listing_changed = Signal()  # a conversation was written: the list shows it anew
    saved_new = Signal(str)  # the file of a new chat (`hold_new`) was made: it is listed
    # A new chat (Conversation) whose file could not be made, why, and the message sent in it.
    new_chat_lost = Signal(object, str, str)
    asked = Signal(str)  # a turn was asked in this conversation (it is not empty now)
    # A message that could not be saved (so not sent): its Conversation, text and files (Path).
    unsent = Signal(object, str, list)

    # The worker's slots, queued: they run on its thread in the order sent.
    _create = Signal(object)
    _submit = Signal(str, str, list)
    _edit = Signal(str, str, str, list, list)
    _retry = Signal(str, str)
    _choose_branch = Signal(str, str)
    _rename = Signal(str, str)
    _delete = Signal(str)

    def __init__(
        self,
        worker: AgentWorker,
        store: ConversationStore,
        chat: ChatView,
        memory_edits: MemoryEditLines,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._worker = worker
        self._store = store
        self._chat = chat
        self._memory_edits = memory_edits
        self._suggestions = SuggestionLines(chat, store, memory_edits, self)
        self._held: dict[str, Conversation] = {}  # the one shown and the one being answered
        self._shown: str | None = None
        self._answering: str | None = None
        self._busy = False
        self._reply: list[AgentEvent] = []  # what the reply being written has shown so far
        self._asked: tuple[str, list[Path]] | None = None  # the message it answers, as sent
        self._leave_later: set[str] = set()  # to delete once its reply has ended
        self._saving: dict[str, Conversation] = {}  # new chats whose file the worker makes
        self._sent_unsaved: dict[str, str] = {}  # of those, the message sent in it
        self._pending_text: list[str] = []
        self._flush_text = Debounced(TEXT_FLUSH_MS, self._show_pending_text, self, throttled=True)
        self._handlers: dict[type[Any], Callable[[Any], None]] = {
            events.Waiting: self._on_waiting,
            events.TextDelta: self._on_text,
            events.ToolCallStarted: self._on_tool_started,
            events.ToolCallFinished: self._on_tool_finished,
            events.ConfirmationRequested: self._on_confirmation,
            events.MemoryEdited: self._on_memory_edited,
            events.MemorySuggested: self._on_memory_suggested,
            events.ToolsTurnedOff: self._on_tools_turned_off,
            events.Finished: self._on_ended,
            events.Failed: self._on_ended,
            events.Cancelled: self._on_ended,
        }
        self._create.connect(worker.create)
        self._submit.connect(worker.submit)
        self._edit.connect(worker.edit)
        self._retry.connect(worker.retry)
        self._choose_branch.connect(worker.choose_branch)
        self._rename.connect(worker.rename)
        self._delete.connect(worker.delete)
        worker.agent_event.connect(self._on_agent_event)
        worker.busy_changed.connect(self._on_busy)
        worker.not_saved.connect(self._on_not_saved)
        # Direct: the worker's thread is blocked in the turn that waits for this answer.
        chat.confirmation_answered.connect(worker.confirm, Qt.ConnectionType.DirectConnection)
        chat.confirmation_answered.connect(self._on_answered)
        chat.retry_requested.connect(self.regenerate)
        chat.regenerate_requested.connect(self.regenerate)
        chat.branch_requested.connect(self.choose_branch)
        chat.rendered.connect(self._on_rendered)

    # -- what is shown ---------------------------------------------------------------------------

    @property
    def conversation_id(self) -> str | None:
        """The id of the conversation shown."""
        return self._shown

    @property
    def conversation(self) -> Conversation | None:
        """The conversation shown, as saved (and being saved)."""
        return None if self._shown is None else self._held.get(self._shown)

    @property
    def busy(self) -> bool:
        """Whether a reply is being written."""
        return self._busy

    def is_answering(self, conversation_id: str | None) -> bool:
        """Whether a reply is being written in this conversation."""
        return self._busy and conversation_id is not None and conversation_id == self._answering

    def open(self, conversation_id: str | None) -> Conversation | None:
        """Show a conversation (None: none); the one left is deleted if empty or temporary.

        The file is read here, once, unless the session holds it already (its reply is being
        written); from then on it is kept up to date from the store's writes.
        """
        previous = self._shown
        self._pending_text.clear()
        if previous is not None and previous != conversation_id:
            self.leave(previous)
        self._shown = conversation_id
        conversation = self._hold(conversation_id)
        if conversation is not None and self.is_answering(conversation_id):
            self._show_reply_so_far(conversation)
        else:
            self._chat.show_conversation(conversation)
        if self._busy:
            self.connection.emit(self._busy_text(), "")
        self.conversation_changed.emit(conversation)
        return conversation

    def hold_new(self, conversation: Conversation) -> None:
        """Hold a new, empty chat (`new_conversation`) about to be opened, and have the worker
        save it: nothing is written on the GUI thread, and what is asked of the worker next
        (its first message, leaving it) comes after."""
        self._held[conversation.id] = conversation
        self._saving[conversation.id] = conversation
        self._create.emit(conversation)

    def _hold(self, conversation_id: str | None) -> Conversation | None:
        """The conversation, read from its file unless held; the others held are let go."""
        keep = {self._shown, self._answering} - {None}
        self._held = {cid: c for cid, c in self._held.items() if cid in keep}
        if conversation_id is None:
            return None
        conversation = self._held.get(conversation_id)
        if conversation is None:
            try:
                conversation = self._store.load(conversation_id)
            except ConversationNotFoundError:  # deleted meanwhile
                return None
            except AssistantError as exc:  # unreadable: the list says so too
                self.notice.emit(str(exc))
                return None
            self._held[conversation_id] = conversation
        return conversation

    def show_message(self, message_id: str) -> bool:
        """Bring a message of the conversation shown into view, choosing the branch that holds
        it if need be; False if it is not there (or the branch cannot change now)."""
        if self._chat.scroll_to_message(message_id):
            return True
        conversation = self.conversation
        if conversation is None or self._busy:
            return False
        if all(m.id != message_id for m in conversation.messages):
            return False
        self._show_branch(conversation, conversation.newest_leaf_under(message_id))
        return self._chat.scroll_to_message(message_id)

    def choose_branch(self, message_id: str) -> None:
        """Show the branch through a sibling message (its newest continuation)."""
        conversation = self.conversation
        if conversation is not None and not self._busy:
            position = self._chat.verticalScrollBar().value()
            self._show_branch(conversation, conversation.newest_leaf_under(message_id))
            self._chat.verticalScrollBar().setValue(position)

    def _show_branch(self, conversation: Conversation, leaf_id: str) -> None:
        chosen = dataclasses.replace(conversation, leaf_id=leaf_id)
        self._held[conversation.id] = chosen  # as the worker is about to save it
        self._choose_branch.emit(conversation.id, leaf_id)
        self._chat.show_conversation(chosen)

    # -- turns -----------------------------------------------------------------------------------

    def send(self, text: str, attachments: Sequence[Path] = ()) -> bool:
        """Answer `text` in the conversation shown; False if a reply is being written.

        `attachments`: files the message carries (copied into the data dir as it is sent);
        AttachmentError, before anything is shown or sent, if one cannot be attached.
        """
        conversation = self.conversation
        if self._busy or conversation is None:
            return False
        files = _checked(attachments)
        cid = conversation.id
        if conversation.title == DEFAULT_TITLE and not conversation.messages:
            self._rename.emit(cid, title_from(text or " ".join(p.name for p in attachments)))
        if cid in self._saving:  # kept if its file cannot be made
            self._sent_unsaved[cid] = text
        self._start_reply(cid, None, text, files)
        self._asked = (text, list(attachments))
        self._submit.emit(cid, text, [str(p) for p in attachments])
        return True

    def edit(
        self,
        message_id: str,
        text: str,
        attachments: Sequence[Path] = (),
        kept: Sequence[str] = (),
    ) -> bool:
        """Answer `text` as a new version of a user message (a new branch) that carries the
        files of it named in `kept` (by id) and `attachments`; False if that message is not in
        the conversation shown or a reply is being written (AttachmentError as `send`)."""
        conversation = self.conversation
        if self._busy or conversation is None:
            return False
        edited = next((m for m in conversation.messages if m.id == message_id), None)
        if edited is None:
            return False
        files = [label(a.name, a.size, a.pages) for a in edited.attachments if a.id in kept]
        files += _checked(attachments)
        shown = dataclasses.replace(conversation, leaf_id=edited.parent_id)
        self._start_reply(conversation.id, shown, text, files)
        self._asked = (text, list(attachments))
        new = [str(p) for p in attachments]
        self._edit.emit(conversation.id, message_id, text, new, list(kept))
        return True

    def regenerate(self, user_message_id: str) -> None:
        """Write a new reply to a user message; the earlier reply stays as a branch."""
        conversation = self.conversation
        if self._busy or conversation is None:
            return
        if all(m.id != user_message_id for m in conversation.messages):
            return
        shown = dataclasses.replace(conversation, leaf_id=user_message_id)
        self._start_reply(conversation.id, shown)
        self._retry.emit(conversation.id, user_message_id)  # the agent chooses the branch

    def stop(self) -> None:
        """Cancel the reply being written (memory upkeep goes on)."""
        if self._busy:
            self._worker.cancel()

    def stop_if_answering(self, conversation_ids: Sequence[str]) -> None:
        """Conversations are deleted: a reply written in one of them stops (nothing is left to
        show it in, and the server would go on writing it)."""
        if self._busy and self._answering in conversation_ids:
            self._worker.cancel()

    def answering_elsewhere(self) -> str | None:
        """The title of the conversation a reply is being written in, if another is shown."""
        if not self._busy or self._answering is None or self._answering == self._shown:
            return None
        held = self._held.get(self._answering)
        return DEFAULT_TITLE if held is None else held.title

    def explain_busy(self) -> None:
        """Say why nothing can be sent now (a reply is being written)."""
        elsewhere = self.answering_elsewhere()
        if elsewhere is None:
            self.notice.emit("Wait for the reply, or Stop it (Esc), to send the next message.")
        else:
            self.notice.emit(
                f"Assistant is answering in “{elsewhere}”: wait for that reply, or Stop it "
                "(Esc), to send here."
            )

    def _busy_text(self) -> str:
        elsewhere = self.answering_elsewhere()
        return "Thinking…" if elsewhere is None else f"Answering in “{elsewhere}”…"

    def _start_reply(
        self,
        cid: str,
        shown: Conversation | None,
        user_text: str | None = None,
        files: Sequence[str] = (),
    ) -> None:
        """Show the conversation as it will be answered (the user's message with the labels
        of its `files`), then wait for the reply."""
        if shown is not None:
            self._chat.show_conversation(shown, replying=user_text is None)
        if user_text is not None:
            self._chat.add_user_message(user_text, files)
        else:
            self._chat.start_reply()
        self._answering = cid
        self._reply = []
        self._asked = None
        self._on_busy(True)
        self.asked.emit(cid)

    def _on_busy(self, busy: bool) -> None:
        if busy == self._busy:
            return
        self._busy = busy
        self.busy_changed.emit(busy)
        if busy:
            self.connection.emit(self._busy_text(), "")
            return
        self._answering = None
        for cid in list(self._leave_later):
            self._leave_later.discard(cid)
            if cid != self._shown:
                self._delete.emit(cid)

    # -- leaving ---------------------------------------------------------------------------------

    def leave(self, conversation_id: str) -> None:
        """Leaving a conversation: a temporary or empty one is deleted (after its reply)."""
        conversation = self._held.get(conversation_id)
        if conversation is None or not (conversation.temporary or _is_empty(conversation)):
            return
        if self.is_answering(conversation_id):
            self._leave_later.add(conversation_id)
        else:
            self._delete.emit(conversation_id)

    def leftovers(self) -> list[str]:
        """At quit, once the worker has stopped: the conversations to delete now (the one
        shown if it is temporary or empty, and those left during their reply)."""
        shown = self.conversation
        leftovers = set(self._leave_later)
        if shown is not None and (shown.temporary or _is_empty(shown)):
            leftovers.add(shown.id)
        return sorted(leftovers)

    # -- what the store and the agent report -----------------------------------------------------

    def on_written(self, write: ConversationWrite) -> None:
        """A conversation file was written (on any thread; heard here on the GUI thread)."""
        self.listing_changed.emit()
        if write.conversation_id in self._saving:  # a new chat made as held: listed now
            del self._saving[write.conversation_id]
            self._sent_unsaved.pop(write.conversation_id, None)
            self.saved_new.emit(write.conversation_id)
            return
        held = self._held.get(write.conversation_id)
        if held is None:
            return
        if write.record is None:  # made whole or deleted: read again when next opened
            del self._held[write.conversation_id]
            return
        try:
            self._held[write.conversation_id] = held.with_record(write.record)
        except ValueError:  # the store wrote it, so it parses; if not, read the file again
            log.exception("A record of conversation %s did not apply", write.conversation_id)
            del self._held[write.conversation_id]
            self._hold(write.conversation_id)
        if write.conversation_id == self._shown:
            self.conversation_changed.emit(self._held.get(write.conversation_id))

    def _on_not_saved(self, conversation_id: str, error: str) -> None:
        """The file of a new chat could not be made: it is let go (its turn, if one was asked,
        fails for want of it); the window hears what was sent in it."""
        conversation = self._saving.pop(conversation_id, None)
        if conversation is None:
            return
        self._held.pop(conversation_id, None)
        self._leave_later.discard(conversation_id)
        text = self._sent_unsaved.pop(conversation_id, "")
        self.new_chat_lost.emit(conversation, error, text)

    def _on_agent_event(self, event: AgentEvent) -> None:
        if isinstance(event, events.Notice):
            self.notice.emit(event.text)
            return
        if event.conversation_id == self._answering:
            if isinstance(event, _REPLAYED):
                self._reply.append(event)
            elif isinstance(event, _ENDS):
                self._reply = []
                if isinstance(event, events.Failed) and event.unsaved:
                    self._give_back(event.conversation_id)
        if event.conversation_id != self._shown:
            if isinstance(event, _ENDS):
                self._say_ended(event, elsewhere=True)
            elif isinstance(event, events.MemoryEdited):  # its line shows with the conversation
                self._memory_edits.record(event.conversation_id, event.edit, event.turn_id)
            elif isinstance(event, events.ConfirmationRequested):  # asked there when shown
                held = self._held.get(event.conversation_id)
                where = f" in “{held.title}”" if held is not None else ""
                self.notice.emit(f"{event.server} · {event.tool} waits for your answer{where}.")
            return
        if not isinstance(event, events.TextDelta | events.Waiting):
            self._show_pending_text()
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    def _give_back(self, conversation_id: str) -> None:
        """The message sent could not be saved: it goes back to the user, nothing is lost."""
        asked, self._asked = self._asked, None
        held = self._held.get(conversation_id)  # None: a new chat lost (`new_chat_lost`)
        if held is not None and asked is not None and (asked[0].strip() or asked[1]):
            self.unsent.emit(held, *asked)

    def _on_tools_turned_off(self, event: events.ToolsTurnedOff) -> None:
        self._chat.add_line(
            f"{event.model} kept repeating the same tool call: it answers without tools from now "
            "on (its tool use is Auto) · ",
            ("Turn tools back on", f"tools-on:{event.model}"),
        )

    def _on_waiting(self, event: events.Waiting) -> None:
        self.connection.emit(f"Waiting for the model… {event.seconds:.0f} s", "")

    def _on_text(self, event: events.TextDelta) -> None:
        self.connection.emit("Thinking…", "")
        # Chunks can arrive faster than the screen refreshes: show them in batches.
        self._pending_text.append(event.text)
        self._flush_text.trigger()

    def _on_tool_started(self, event: events.ToolCallStarted) -> None:
        self._chat.start_tool_call(event.call_id, event.name, event.arguments)

    def _on_tool_finished(self, event: events.ToolCallFinished) -> None:
        self._chat.finish_tool_call(event.call_id, event.result, event.ok, event.images)

    def _on_confirmation(self, event: events.ConfirmationRequested) -> None:
        """A tool of an MCP server may change things: the reply waits for the user's answer."""
        arguments = shorten(" ".join(event.arguments.split()), ARGUMENTS_CHARS)
        self.connection.emit("Waiting for your answer…", "")
        self._chat.ask_to_run(
            event.call_id,
            f"⚠ {event.server} · {event.tool} may change things ({arguments}). Run it?",
            [("Allow once", "once"), ("Always allow this tool", "always"), ("Deny", "deny")],
        )

    def _on_answered(self, call_id: str, _choice: str) -> None:
        """A question was answered: shown again, the reply no longer asks it."""
        self.connection.emit("Thinking…", "")
        self._reply = [
            e
            for e in self._reply
            if not (isinstance(e, events.ConfirmationRequested) and e.call_id == call_id)
        ]

    def _on_memory_edited(self, event: events.MemoryEdited) -> None:
        self._memory_edits.show(event.conversation_id, event.edit, event.turn_id)

    def _on_memory_suggested(self, event: events.MemorySuggested) -> None:
        self._suggestions.show(event.conversation_id, event.change)

    def _on_rendered(self, conversation_id: str) -> None:
        """The chat drew a conversation anew: the changes waiting in it show again (a change
        suggested in a conversation not shown waits in its file, and shows when it opens)."""
        conversation = self._held.get(conversation_id)
        if conversation is not None:
            self._suggestions.show_waiting(conversation)

    def _on_ended(self, event: events.Finished | events.Failed | events.Cancelled) -> None:
        saved = self._held.get(event.conversation_id)
        if saved is None:  # deleted meanwhile
            return
        error = event.error if isinstance(event, events.Failed) else None
        if isinstance(event, events.Failed) and event.unsaved:  # shown without it, and why
            self._chat.show_conversation(saved)
            self._chat.add_line(f"{ERROR_MARK} Not sent: {error} {UNSENT_BACK}")
        else:
            self._chat.finish_reply(saved, error)
        self._say_ended(event)

    def _say_ended(
        self, event: events.Finished | events.Failed | events.Cancelled, elsewhere: bool = False
    ) -> None:
        """The status bar after a reply (`elsewhere`: in a conversation not shown, whose
        failure is said in words too: its mark shows when it is opened)."""
        if isinstance(event, events.Finished):
            self.connection.emit("Connected", "")
        elif isinstance(event, events.Failed):
            tip = "" if event.status == "Connected" else event.error
            self.connection.emit(event.status, tip)
            held = self._held.get(event.conversation_id)
            if elsewhere and held is not None:
                self.notice.emit(f"The reply in “{held.title}” failed: {event.error}")
        else:
            self.connection.emit("Stopped", "")

    def _show_pending_text(self) -> None:
        self._flush_text.cancel()
        if self._pending_text:
            self._chat.append_delta("".join(self._pending_text))
            self._pending_text.clear()

    def _show_reply_so_far(self, conversation: Conversation) -> None:
        """Show `conversation` up to the question being answered, then the reply so far (the
        rest streams in)."""
        branch = conversation.branch()
        question = next((m for m in reversed(branch) if m.role == "user"), None)
        if question is not None:  # what the turn saved so far comes again from the events
            conversation = dataclasses.replace(conversation, leaf_id=question.id)
        self._chat.show_conversation(conversation, replying=True)
        self._chat.start_reply(resumed=True)
        text: list[str] = []
        for event in self._reply:
            if isinstance(event, events.TextDelta):
                text.append(event.text)
                continue
            if text:
                self._chat.append_delta("".join(text))
                text = []
            if isinstance(event, events.ToolCallStarted):
                self._chat.start_tool_call(event.call_id, event.name, event.arguments)
            elif isinstance(event, events.ToolCallFinished):
                self._chat.finish_tool_call(event.call_id, event.result, event.ok, event.images)
            elif isinstance(event, events.ConfirmationRequested):
                self._on_confirmation(event)
        if text:
            self._chat.append_delta("".join(text))


def _checked(attachments: Sequence[Path]) -> list[str]:
    """The chip labels of files about to be sent; AttachmentError if one cannot be (it went,
    or grew past the limit, since it was attached)."""
    labels = []
    for path in attachments:
        labels.append(label(path.name, check(path)[1], None))
    return labels


def _is_empty(conversation: Conversation) -> bool:
    """Nothing in it: no message, nor records this version cannot read (those are kept)."""
    return not conversation.messages and not conversation.unread


def title_from(text: str) -> str:
    """A new conversation's title: the first words of its first message."""
    words = text.split()
    title = " ".join(words[:TITLE_WORDS])
    return title + ("…" if len(words) > TITLE_WORDS else "")
