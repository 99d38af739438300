"""The agent: one turn is a bounded loop of model calls and tool calls, persisted as it goes."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from assistant.agent.attached import TurnFiles, turn_files
from assistant.agent.budget import prompt_budget, reply_limit
from assistant.agent.builtin_tools import builtin_registry
from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.chat import ChatProvider, ChatResponse
from assistant.agent.chat_scope import chat_scope
from assistant.agent.confirm import Confirmations
from assistant.agent.curator import Curator
from assistant.agent.events import (
    Cancelled,
    EventSink,
    Failed,
    Finished,
    MemoryEdited,
    Notice,
    TextDelta,
    Waiting,
)
from assistant.agent.model_choice import ModelChooser, TurnModel
from assistant.agent.prompt import Prompt, build_prompt
from assistant.agent.reflection import Reflector
from assistant.agent.reply_changes import ReplyChanges
from assistant.agent.reply_timing import Stopwatch
from assistant.agent.summary import (
    EMPTY_REPLY,
    SummaryFailedError,
    fold_into_summary,
)
from assistant.agent.tool_images import estimate_message_tokens
from assistant.agent.tool_step import ToolStep
from assistant.agent.tools import ToolRegistry, ToolSource
from assistant.agent.turn import Turn
from assistant.errors import (
    AssistantError,
    ContextOverflowError,
    ImagesRefusedError,
    ProviderError,
    status_of,
)
from assistant.instructions import NO_INSTRUCTIONS, Instructions
from assistant.memory import (
    AttachedFile,
    Conversation,
    ConversationStore,
    Inbox,
    MemoryEdit,
    MemoryItem,
    Message,
    SemanticMemory,
    Source,
    WorkingMemoryStore,
    estimate_tokens,
)
from assistant.memory_policy import AUTOMATIC, POLICY_MODES, MemoryPolicy, PolicyMode
from assistant.notices import Notices
from assistant.timestamps import now_utc

if TYPE_CHECKING:
    from assistant.knowledge import AttachmentStore, Knowledge
    from assistant.projects import Project, ProjectStore

log = logging.getLogger(__name__)

STEP_LIMIT_NOTE = (
    "You have used all your tool steps for this message. Answer the user now with what you "
    "have, and say what is left to do."
)
FILES_REPLY = "(An answer drawn from the user's files; nothing in it is about the user.)"
# How often a turn rebuilds a smaller prompt after the server says it does not fit.
OVERFLOW_RETRIES = 2
# Tools are offered only while their schemas take at most this share of the prompt budget.
TOOLS_SHARE = 0.5
EXTRA_TOOLS_LEFT_OUT_NOTICE = (
    "The model's context window is too small for the MCP servers' tools as well: it has only "
    "Assistant's own tools (memory, dates, files) for this message."
)
NO_TOOLS_NOTICE = (
    "The model's context window is too small for tools: it answers without them "
    "(memories are still saved after each reply)."
)
INSTRUCTIONS_LEFT_OUT_NOTICE = (
    "Your custom instructions do not fit the model's prompt budget: they were left out "
    "(shorten them, or raise the prompt budget in Settings)."
)

Upkeep = Callable[[CancelToken], object]  # memory upkeep after a reply, cancelled on quit
UpkeepRunner = Callable[[Upkeep], None]  # runs (or queues) upkeep; the turn does not wait


def run_now(job: Upkeep) -> None:
    """Run memory upkeep at once, in the turn (when nobody runs it in the background)."""
    job(CancelToken())


@dataclass
class AgentConfig:
    """How much a turn may do; a prompt budget of 0 is a share of the model's context window."""

    max_steps: int = 8
    memories_per_prompt: int = 6
    prompt_budget_tokens: int = 0
    reply_max_tokens: int = 4096
    auto_memories: bool = True
    instructions: Instructions = NO_INSTRUCTIONS  # the user's custom instructions, in every chat
    memory_policy: MemoryPolicy = AUTOMATIC  # what the user lets be remembered

    def policy_for(self, project: Project | None) -> MemoryPolicy:
        """The memory policy of a chat in `project` (None: in no project): the project's mode
        if it has one, the never-topics of the settings."""
        mode = project.memory_policy if project is not None else ""
        if mode in POLICY_MODES:
            return replace(self.memory_policy, mode=cast(PolicyMode, mode))
        return self.memory_policy


class Agent:
    """Runs turns against a provider, the memories and the conversation store."""

    def __init__(
        self,
        provider: ChatProvider,
        memory: SemanticMemory,
        conversations: ConversationStore,
        working: WorkingMemoryStore,
        *,
        config: AgentConfig | None = None,
        curator: Curator | None = None,
        reflector: Reflector | None = None,
        upkeep: UpkeepRunner = run_now,
        clock: Callable[[], datetime] = now_utc,
        notices: Notices | None = None,
        extra_tools: ToolSource | None = None,
        confirmations: Confirmations | None = None,
        knowledge: Knowledge | None = None,
        inbox: Inbox | None = None,
        attachments: AttachmentStore | None = None,
        choose_model: ModelChooser | None = None,
        projects: ProjectStore | None = None,
    ) -> None:
        self.provider = provider
        self.memory = memory
        self.conversations = conversations
        self.working = working
        self.config = config or AgentConfig()
        self.curator = curator
        self.reflector = reflector
        self.upkeep = upkeep
        self.clock = clock
        self.notices = notices  # said once per run of the app; else notices are turn events
        self.extra_tools = extra_tools  # tools from MCP servers
        self.confirmations = confirmations  # the user's answers when a tool asks first
        self.knowledge = knowledge  # the user's files, searched by the `search_files` tool
        self.inbox = inbox  # where `remember` proposes when the policy is "ask first"
        self.attachments = attachments  # the files attached to messages (None: not sent)
        self.choose_model = choose_model  # a conversation's model; None: always `provider`
        self.projects = projects  # a chat in a project sees its memories and instructions

    def run(
        self,
        conversation_id: str,
        user_text: str,
        on_event: EventSink,
        cancel: CancelToken,
        *,
        attachments: Sequence[AttachedFile] = (),
    ) -> None:
        """Answer `user_text` (carrying `attachments`, copied into the data dir) in the
        conversation; reports through `on_event`, never raises."""

        def start() -> Message:
            return self.conversations.append(
                conversation_id, "user", user_text, attachments=attachments
            )

        self._guarded(conversation_id, start, on_event, cancel)

    def edit(
        self,
        conversation_id: str,
        message_id: str,
        user_text: str,
        on_event: EventSink,
        cancel: CancelToken,
        *,
        attachments: Sequence[AttachedFile] = (),
        kept: Collection[str] = (),
    ) -> None:
        """Answer `user_text` as a new version of a user message; the old one stays a branch.
        The new version carries the old one's attachments named in `kept` (by id), then
        `attachments`."""

        def start() -> Message:
            conversation = self.conversations.load(conversation_id)
            edited = next((m for m in conversation.messages if m.id == message_id), None)
            if edited is None or edited.role != "user":
                raise AssistantError("That message is no longer in the conversation.")
            self.conversations.set_leaf(conversation_id, edited.parent_id)
            carried = (*(a for a in edited.attachments if a.id in kept), *attachments)
            return self.conversations.append(
                conversation_id, "user", user_text, attachments=carried
            )

        self._guarded(conversation_id, start, on_event, cancel)

    def retry(
        self,
        conversation_id: str,
        on_event: EventSink,
        cancel: CancelToken,
        message_id: str | None = None,
    ) -> None:
        """Answer a user message again (`message_id`, or the branch's last one); an earlier
        answer stays as a sibling. The agent chooses the branch: nobody else writes it."""

        def question() -> Message:
            conversation = self.conversations.load(conversation_id)
            if message_id is None:
                asked = [m for m in conversation.branch() if m.role == "user"]
                missing = "There is no message to answer."
            else:
                asked = [m for m in conversation.messages if m.id == message_id]
                missing = "That message is no longer in the conversation."
            if not asked or asked[-1].role != "user":
                raise AssistantError(missing)
            if conversation.leaf_id != asked[-1].id:
                self.conversations.set_leaf(conversation_id, asked[-1].id)
            return asked[-1]

        self._guarded(conversation_id, question, on_event, cancel, new=False)

    def _guarded(
        self,
        conversation_id: str,
        user_message: Callable[[], Message],
        on_event: EventSink,
        cancel: CancelToken,
        *,
        new: bool = True,
    ) -> None:
        """Run a turn on the user message `user_message()` writes (`new`) or finds."""
        user: Message | None = None
        try:
            user = user_message()
            self._turn(conversation_id, user, on_event, cancel)
        except OperationCancelledError:
            on_event(Cancelled(conversation_id))
        except AssistantError as exc:
            on_event(self._failed(conversation_id, user, str(exc), status_of(exc), new))
        except Exception as exc:  # a bug must not kill the worker thread
            log.exception("The turn failed")
            why = f"Something went wrong: {exc}"
            on_event(self._failed(conversation_id, user, why, "Reply failed", new))

    def _failed(
        self, conversation_id: str, user: Message | None, error: str, status: str, new: bool
    ) -> Failed:
        """The failure of a turn, noted under the user's message so that it shows after a
        restart too (`unsaved` if a `new` message could not be written)."""
        if user is not None:
            try:
                self.conversations.note_failure(conversation_id, user.id, error)
            except AssistantError as exc:  # the disk refuses: the mark shows in this run only
                log.warning("Could not note the failure in %s: %s", conversation_id, exc)
        return Failed(conversation_id, error, status, unsaved=new and user is None)

    def _turn(
        self, conversation_id: str, user: Message, on_event: EventSink, cancel: CancelToken
    ) -> None:
        conversation = self.conversations.load(conversation_id)
        scope = chat_scope(self.projects, conversation, self.conversations)
        changes = ReplyChanges(self.conversations, conversation_id, on_event)
        context = changes.context(
            conversation,
            user,
            cancel,
            scope,
            policy=self.config.policy_for(scope.project),
            inbox=self.inbox,
        )
        model = self.choose_model(conversation) if self.choose_model else TurnModel(self.provider)
        turn = Turn(
            conversation=conversation,
            user=user,
            on_event=on_event,
            cancel=cancel,
            context=context,
            registry=self._registry(conversation, user.content),
            model=model,
            scope=scope,
        )
        turn.use_tools = model.options.uses_tools
        try:
            self._steps(turn)
        finally:
            changes.settle(context)

    def _registry(self, conversation: Conversation, query: str) -> ToolRegistry:
        """The built-in tools, then the extra ones for `query`."""
        registry = builtin_registry(
            long_term_memory=not conversation.temporary,
            files=self.knowledge is not None and bool(self.knowledge.read_sources().folders),
        )
        if self.extra_tools is not None:
            registry.add_extra(*self.extra_tools.tools_for(query))
        return registry

    def _steps(self, turn: Turn) -> None:
        cancel = turn.cancel
        messages = self._prompt(turn)
        for _ in range(self.config.max_steps):
            cancel.raise_if_cancelled()
            response = self._call_model(turn, messages, tools=True)
            if not response.tool_calls:
                self._finish(turn, response)
                return
            self._tool_step(turn).run(turn, messages, response)
        response = self._call_model(turn, messages, tools=False, note=STEP_LIMIT_NOTE)
        self._finish(turn, response)

    def _budget(self, turn: Turn) -> int:
        """The prompt budget for this turn, tool schemas not included."""
        budget = prompt_budget(self.config.prompt_budget_tokens, turn.model.window())
        return int(budget * turn.shrink)

    def _prompt(self, turn: Turn) -> list[dict[str, Any]]:
        """Summarize what no longer fits, choose the memories, build the messages."""
        pinned: list[MemoryItem] = []
        relevant: list[MemoryItem] = []
        if turn.long_term:
            pinned = turn.scope.pinned(self.memory)
            relevant = self._relevant(turn, {i.id for i in pinned})
        working = self.working.get(turn.cid).to_prompt()
        budget = self._budget(turn)
        tools = _tokens_of(turn.registry.schemas())
        if tools > budget * TOOLS_SHARE and turn.registry.drop_extra():  # its own tools first
            if turn.use_tools:
                self._say_once(turn, EXTRA_TOOLS_LEFT_OUT_NOTICE)
            tools = _tokens_of(turn.registry.schemas())
        if tools > budget * TOOLS_SHARE:
            if turn.use_tools:
                self._say_once(turn, NO_TOOLS_NOTICE)
            turn.use_tools, tools = False, 0
        if not turn.files_read:
            turn.files = self._files(turn, budget - tools)
            turn.files_read = True

        def build() -> Prompt:
            return build_prompt(
                turn.conversation,
                now=self.clock().astimezone(),
                pinned=pinned,
                relevant=relevant,
                working=working,
                budget_tokens=budget - tools,
                instructions=turn.scope.instructions(self.config.instructions),
                policy=turn.context.policy,
                files=turn.files,
            )

        prompt = build()
        if prompt.overflow:
            self._summarize(turn, prompt.overflow, budget)
            turn.conversation = self.conversations.load(turn.cid)
            prompt = build()
        if prompt.instructions_left_out:
            self._say_once(turn, INSTRUCTIONS_LEFT_OUT_NOTICE)
        turn.memory_ids[:] = dict.fromkeys([*turn.memory_ids, *prompt.memory_ids])
        turn.prompt_tokens = estimate_message_tokens(prompt.messages) + tools
        return prompt.messages

    def _files(self, turn: Turn, budget: int) -> TurnFiles | None:
        """The attached files' part of the prompt; what was cut or not sent is said."""
        if self.attachments is None:
            return None
        files = turn_files(self.attachments, turn.conversation, turn.user, budget)
        for note in files.notes if files is not None else ():
            turn.on_event(Notice(turn.cid, note))
        return files

    def _relevant(self, turn: Turn, exclude: set[str]) -> list[MemoryItem]:
        """Memories of the chat's scopes for the user's text first, then for the previous
        reply; the project's before the global ones."""
        k = self.config.memories_per_prompt
        found: dict[str, MemoryItem] = {}
        queries = [turn.user.content]
        previous = [m for m in turn.conversation.branch() if m.role == "assistant" and m.content]
        if previous:
            queries.append(previous[-1].content[-500:])
        scopes = turn.scope.memory.visible
        for query, limit in zip(queries, (k, max(1, k // 3)), strict=False):
            for hit in self.memory.search(query, k=limit, scopes=scopes):  # current facts only
                if hit.item.is_current and hit.item.id not in exclude and len(found) < k:
                    found.setdefault(hit.item.id, hit.item)
        return turn.scope.first(list(found.values()))

    def _summarize(self, turn: Turn, overflow: list[Message], budget: int) -> None:
        """Fold messages that no longer fit into the rolling summary."""
        try:
            fold_into_summary(
                self.provider,
                self.conversations,
                turn.cid,
                overflow,
                budget=budget,
                cancel=turn.cancel,
            )
        except SummaryFailedError as exc:
            log.warning("Could not update the summary; older messages leave the prompt: %s", exc)
            turn.on_event(
                Notice(
                    turn.cid,
                    f"Could not summarize older messages ({exc}); they are left out of the prompt.",
                )
            )

    def _say_once(self, turn: Turn, text: str) -> None:
        if self.notices is None:
            turn.on_event(Notice(turn.cid, text))
        else:
            self.notices.say(text)

    def _call_model(
        self,
        turn: Turn,
        messages: list[dict[str, Any]],
        *,
        tools: bool,
        note: str | None = None,
    ) -> ChatResponse:
        """One model call, streaming text out; partial text is saved if the call dies.

        `note` is a system message after the conversation. When the server says the prompt is
        too long, a smaller one is built (the window is known by then, or guessed smaller).
        """
        shown: list[str] = []
        watch = Stopwatch()  # each try starts its own

        def on_text(text: str) -> None:
            watch.text()
            shown.append(text)
            turn.on_event(TextDelta(turn.cid, text))

        def on_wait(seconds: float) -> None:
            turn.on_event(Waiting(turn.cid, seconds))

        for retry in range(OVERFLOW_RETRIES + 1):
            sent = [*messages, {"role": "system", "content": note}] if note else messages
            schemas = turn.registry.schemas() if tools and turn.use_tools else None
            # What is sent now: the tool steps of this turn have grown the prompt.
            turn.prompt_tokens = estimate_message_tokens(sent) + _tokens_of(schemas)
            try:
                watch = Stopwatch()
                model = turn.model
                response = model.provider.chat(
                    sent,
                    tools=schemas,
                    on_text=on_text,
                    cancel=turn.cancel,
                    max_tokens=reply_limit(
                        model.options.max_tokens or self.config.reply_max_tokens,
                        model.window(),
                        turn.prompt_tokens,
                    ),
                    on_wait=on_wait,
                )
                turn.stats = watch.stats(model.provider.model, response, turn.prompt_tokens)
                return response
            except ContextOverflowError as exc:
                if shown or retry == OVERFLOW_RETRIES:
                    self._save_partial(turn, shown, "failed")
                    raise ProviderError(
                        f"{exc} {_overflow_advice(exc)}", status=exc.status
                    ) from exc
                if exc.context_tokens is None:
                    turn.shrink /= 2
                log.info("The prompt did not fit; building a smaller one: %s", exc)
                before = turn.prompt_tokens
                turn.conversation = self.conversations.load(turn.cid)
                messages[:] = self._prompt(turn)
                if turn.prompt_tokens >= before:
                    # Nothing more could be left out: the message itself is too long.
                    raise ProviderError(
                        f"{exc} {_overflow_advice(exc)}", status=exc.status
                    ) from exc
                turn.on_event(Notice(turn.cid, "The prompt was too long for the model; shortened."))
            except ImagesRefusedError as exc:  # before any text: the message stays for Retry
                names = tuple(a.name for a in turn.user.attachments if a.kind == "image")
                raise ImagesRefusedError(exc.model, names) from exc
            except (OperationCancelledError, AssistantError) as exc:
                stopped = isinstance(exc, OperationCancelledError)
                self._save_partial(turn, shown, "stopped" if stopped else "failed")
                raise
        raise AssertionError("unreachable")  # the loop returns or raises

    def _save_partial(self, turn: Turn, shown: list[str], stop_reason: str) -> None:
        """Keep what was shown of a reply that ended early, marked with why; a reply stopped
        by the user before its first word is kept empty, so the chat says "Stopped" (and not
        that it did not finish) after its tool calls, also after a restart."""
        if shown or stop_reason == "stopped":
            self.conversations.append(
                turn.cid,
                "assistant",
                "".join(shown),
                memory_ids=turn.memory_ids,
                stop_reason=stop_reason,
            )

    def _tool_step(self, turn: Turn) -> ToolStep:
        """The tool calls of a step, with what the tools of this turn may use."""
        scope = {
            "memory": self.memory,
            "working": self.working,
            "conversations": self.conversations,
            "context": turn.context,
        }
        if self.knowledge is not None:
            scope["knowledge"] = self.knowledge
        return ToolStep(self.conversations, scope, self.confirmations, self.extra_tools)

    def _finish(self, turn: Turn, response: ChatResponse) -> None:
        """Save the final reply with the memories it saw, then hand the curator its work
        (`upkeep` runs it; the turn does not wait).

        An empty reply is a failure (the user can retry); a cut-off one is saved marked.
        """
        if response.is_empty:
            raise ProviderError(EMPTY_REPLY, status="Empty reply")
        text = response.content
        ids = tuple(dict.fromkeys([*turn.memory_ids, *turn.context.recalled]))
        reply = self.conversations.append(
            turn.cid, "assistant", text, memory_ids=ids, cut_off=response.cut_off, stats=turn.stats
        )
        if turn.long_term and ids:
            self.memory.mark_used(ids, reply=Source(turn.cid, reply.id))
        turn.on_event(
            Finished(turn.cid, reply.id, text, ids, cut_off=response.cut_off, stats=turn.stats)
        )
        learns = turn.long_term and not turn.conversation.do_not_remember
        upkeep = self.curator is not None or self.reflector is not None
        if learns and self.config.auto_memories and upkeep:
            # What a reply read in the user's files is not a memory: the curator learns from
            # what the user said in such a turn (a chunk becomes one when the user asks).
            learned = replace(reply, content=FILES_REPLY) if turn.context.read_files else reply
            self.upkeep(self._learning(turn, learned))

    def _learning(self, turn: Turn, reply: Message) -> Upkeep:
        """The memory upkeep after a reply: the curator, then a reflection if one is due; both
        draw on what is left of the reply's budget."""
        cid, user, report, scope = turn.cid, turn.user, turn.on_event, turn.scope
        policy, budget = turn.context.policy, turn.context.budget
        curator, reflector = self.curator, self.reflector

        def on_edit(edit: MemoryEdit) -> None:
            report(MemoryEdited(cid, edit, user.id))

        def job(cancel: CancelToken) -> None:
            if curator is not None:
                curator.process(
                    cid,
                    user,
                    reply,
                    on_edit=on_edit,
                    cancel=cancel,
                    scope=scope,
                    policy=policy,
                    budget=budget,
                )
            if reflector is not None:
                reflector.reflect_if_due(on_edit, cancel=cancel, budget=budget)

        return job


def _tokens_of(schemas: Sequence[Mapping[str, Any]] | None) -> int:
    """The estimated prompt tokens of tool schemas."""
    return estimate_tokens(json.dumps(schemas)) if schemas else 0


def _overflow_advice(exc: ContextOverflowError) -> str:
    window = f" of {exc.context_tokens:,} tokens" if exc.context_tokens else ""
    return (
        f"The message and what it needs do not fit the model's context window{window}: "
        "shorten the message, lower the prompt budget in Settings, or use a model with a "
        "larger context."
    )
