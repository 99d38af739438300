"""The tools every conversation gets: memory, working memory, conversation search, math, time."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from assistant.agent import calculator as calc
from assistant.agent.cancel import CancelToken
from assistant.agent.change_budget import MAX_CHANGES_PER_REPLY, ReplyBudget
from assistant.agent.prompt import fence, memory_line
from assistant.agent.tools import Tool, ToolRegistry, tool
from assistant.errors import ToolError
from assistant.memory import (
    EVERYWHERE,
    Change,
    ConversationStore,
    ForgottenFactError,
    Inbox,
    MemoryEdit,
    MemoryItem,
    MemoryKind,
    MemoryScope,
    Proposal,
    SemanticMemory,
    Source,
    WorkingMemoryStore,
)
from assistant.memory.pending import PendingAction, PendingChange, PendingReason
from assistant.memory.resembling import Screened, hold, screen
from assistant.memory_policy import AUTOMATIC, MemoryPolicy
from assistant.timestamps import now_utc

if TYPE_CHECKING:
    from assistant.knowledge import Knowledge

MAX_CHANGES_PER_TURN = MAX_CHANGES_PER_REPLY  # the name tests and older callers know
DO_NOT_REMEMBER_ANSWER = (
    "Not saved: this conversation is set not to be remembered (it was imported as "
    "do-not-remember), so nothing from it is kept. Tell the user; they can add it themselves "
    "in the memory panel."
)


@dataclass
class ToolContext:
    """What tools know about the turn they run in, and what they changed in it."""

    conversation_id: str
    message_id: str | None
    recalled: list[str] = field(default_factory=list)  # memory ids the tools showed the model
    read_files: bool = False  # the model was shown passages of the user's files
    edits: list[MemoryEdit] = field(default_factory=list)  # taken by the loop after each tool
    budget: ReplyBudget = field(default_factory=ReplyBudget)  # shared with the curator
    # Open questions about pinned memories (of this conversation), by the memory's id; the
    # user answered them with an explicit yes when their ids are in `confirmable`.
    questions: dict[str, list[PendingChange]] = field(default_factory=dict)
    confirmable: frozenset[str] = frozenset()
    declined: frozenset[str] = frozenset()  # the user said no to these in this message
    asked: list[PendingChange] = field(default_factory=list)  # new questions, kept by the loop
    confirmed: list[str] = field(default_factory=list)  # questions answered by a change made
    cancel: CancelToken = field(default_factory=CancelToken)  # the turn's: tools that wait stop
    revealed: set[str] = field(default_factory=set)  # hidden tools a search found, to offer
    policy: MemoryPolicy = AUTOMATIC  # what the user lets be remembered in this conversation
    inbox: Inbox | None = None  # where `remember` proposes when the policy is "ask first"
    scope: MemoryScope = EVERYWHERE  # the memories the chat sees (its project's and global)
    sees_conversation: Callable[[str], bool] | None = None  # None: every one (see chat_scope)
    do_not_remember: bool = False  # imported as do-not-remember: `remember` saves nothing

    def allow_change(
        self, tool_name: str, item: MemoryItem, action: PendingAction, **fields: Any
    ) -> None:
        """Raise ToolError unless this existing memory may change now.

        A pinned memory changes only after an explicit yes of the user to a question about it
        (asked in the chat, kept with the conversation); the reply's budget caps the changes,
        and what is over it is offered to the user instead.
        """
        if item.pinned and item.id in self.declined:
            raise ToolError(
                f"{tool_name}: memory {item.id} is pinned and the user said no: leave it as it is."
            )
        if item.pinned and item.id not in self.confirmable:
            self._ask(action, item, fields)
            raise ToolError(
                f"{tool_name}: memory {item.id} is pinned ({item.text[:80]!r}). Pinned memories "
                "change only when the user confirms: the chat asks them (Yes / No); ask the "
                f"user in your reply too, and if they say yes, call {tool_name} again in your "
                "next reply."
            )
        if not self.budget.take(action):
            self.budget.offer(self.change(action, "budget", item, **fields))
            raise ToolError(
                f"{tool_name}: at most {self.budget.max_changes} existing memories can be "
                "changed or forgotten per reply. The rest is offered to the user as a "
                "suggestion in the chat; tell them what else you would change."
            )
        self.confirmed.extend(q.id for q in self.questions.pop(item.id, []))

    def allow_add(
        self, text: str, kind: MemoryKind, importance: float, project: str | None
    ) -> None:
        """Raise ToolError if the reply may add no more memories (the add, to `project`, is
        offered instead)."""
        if not self.budget.take("remember"):
            fields = {"text": text, "kind": kind, "importance": importance, "project": project}
            self.budget.offer(self.change("remember", "budget", None, **fields))
            raise ToolError(
                f"remember: at most {self.budget.max_adds} memories can be added per reply. "
                "The rest is offered to the user as a suggestion in the chat."
            )

    def change(
        self,
        action: PendingAction,
        reason: PendingReason,
        item: MemoryItem | None,
        **fields: Any,
    ) -> PendingChange:
        """A change of `item` asked for by a tool in this reply, for the user to answer."""
        if item is not None:
            fields |= {"target_id": item.id, "target_text": item.text}
        return PendingChange.new(action, reason, "tool", message_id=self.message_id, **fields)

    def _ask(self, action: PendingAction, item: MemoryItem, fields: dict[str, Any]) -> None:
        """Ask about a pinned memory, unless the same is asked already."""
        open_ = [*self.questions.get(item.id, []), *self.asked]
        if any(q.target_id == item.id and q.action == action for q in open_):
            return
        self.asked.append(self.change(action, "pinned", item, **fields))


@tool
def remember(
    text: str,
    context: ToolContext,
    memory: SemanticMemory,
    *,
    kind: MemoryKind = "fact",
    importance: float = 0.5,
    replaces: str | None = None,
    personal: bool = False,
) -> str:
    """Save something worth knowing in future conversations to long-term memory.

    Args:
        text: One self-contained sentence, e.g. "The user's daughter is called Mia."
        kind: What sort of memory this is.
        importance: 0 to 1; how bad it would be to forget it.
        replaces: The id of a memory that no longer holds because of this one (the user
            moved, changed jobs or changed their mind); it is kept in the history.
        personal: In a project's chat: true for a fact about the user themselves or a
            preference that holds everywhere (remembered outside the project too), false
            for a fact about the project's work (kept in the project).
    """
    if not 0 <= importance <= 1:
        raise ToolError("remember: 'importance' must be between 0 and 1.")
    if context.do_not_remember:
        return DO_NOT_REMEMBER_ANSWER
    topic = context.policy.blocked_by(text)
    if topic is not None:
        raise ToolError(
            f"remember: not saved. The user asked never to remember anything about {topic}. "
            "If they want it kept all the same, they can add it themselves in the memory panel."
        )
    source = Source(context.conversation_id, context.message_id)
    change: Change = "replace" if replaces is not None else "add"
    project = context.scope.home(personal)
    proposed = Proposal(
        text,
        kind,
        importance,
        source=source,
        by="tool",
        change=change,
        target=replaces,
        project=project,
    )
    screened = screen(memory, context.inbox, proposed)
    if screened != "clear":
        return _not_remembered(screened)
    if context.policy.mode == "ask" and context.inbox is not None:
        if not context.inbox.propose([proposed]):
            return "Already waiting for the user's review."
        return (
            "Proposed, not saved yet: the user reviews new memories first (their setting), in "
            "the Review tab of the memory panel. Tell them it waits there."
        )
    if replaces is not None:
        old = _existing(memory, context, replaces)
        if not old.is_current:
            raise ToolError(
                f"remember: memory {replaces} already no longer holds (replaced or archived)."
            )
        context.allow_change(
            "remember", old, "supersede", text=text, kind=kind, importance=importance
        )  # a ToolError if it may not
        try:
            item = memory.supersede(
                old.id, text, kind, importance, by="tool", source=source, reason="the user said so"
            )
        except ForgottenFactError as exc:  # forgotten meanwhile
            return _not_remembered(_held(exc, context.inbox, proposed))
        context.edits.append(MemoryEdit("superseded", old, item))
        return f"Remembered as {item.id}, replacing {old.id} (it said: {old.text!r})."

    def may_change(old: MemoryItem) -> bool:
        context.budget.give_back("remember")  # a merge, not an add
        fields = {"text": text, "kind": kind, "importance": importance}
        context.allow_change("remember", old, "update", **fields)  # a ToolError if it may not
        return True

    context.allow_add(text, kind, importance, project)
    try:
        item, before = memory.save(
            text,
            kind,
            importance,
            source=source,
            may_change=may_change,
            origin="tool",
            project=project,
            scopes=context.scope.visible,
        )
    except ForgottenFactError as exc:  # merged into a memory: its new text resembles one
        context.budget.give_back("remember")
        return _not_remembered(_held(exc, context.inbox, proposed))
    if before is item:
        context.budget.give_back("remember")  # said already: nothing added
        return f"Already remembered as {item.id}."
    if before is not None:
        context.edits.append(MemoryEdit("updated", before, item))
        return f"Updated the existing memory {item.id} (it said: {before.text!r})."
    context.edits.append(MemoryEdit("remembered", None, item))
    return f"Remembered as {item.id}."


def _held(exc: ForgottenFactError, inbox: Inbox | None, proposed: Proposal) -> Screened:
    """What became of a memory the store refused as forgotten (`exc`): held for the user's yes
    if it only resembles a forgotten fact."""
    if exc.resemblance == "forgotten":
        return "forgotten"
    hold(inbox, proposed)
    return "held"


def _not_remembered(screened: Screened) -> str:
    """The tool's answer for a memory that resembles (held) or says (forgotten) a fact the user
    made the assistant forget; ToolError for the latter."""
    if screened == "forgotten":
        raise ToolError(
            "remember: not saved. The user made you forget this; only they can add it again, "
            "in the memory panel."
        )
    return (
        "Not saved yet: it resembles something the user asked you to forget, so it waits for "
        "their yes in the Review tab of the memory panel. Tell them it waits there."
    )


@tool
def recall(
    query: str,
    context: ToolContext,
    memory: SemanticMemory,
    k: int = 5,
    include_history: bool = False,
) -> str:
    """Search long-term memory for memories about something.

    Args:
        query: What to look for, in a few words.
        k: How many memories to return at most (1 to 20).
        include_history: Also find what no longer holds (replaced or archived), with when
            each fact held: for questions about the past ("where did I live before?").
    """
    hits = memory.search(
        query,
        k=max(1, min(k, 20)),
        include_history=include_history,
        scopes=context.scope.visible,
    )
    hits = context.scope.first(hits, lambda hit: hit.item)
    if not hits:
        return "No matching memories."
    context.recalled.extend(h.item.id for h in hits)
    lines = [memory_line(h.item) + (held(h.item) if include_history else "") for h in hits]
    return fence("recalled memories", "\n".join(lines))


def held(item: MemoryItem) -> str:
    """When a memory's fact held, in words: ` (current, since 2026-03-03)`, ` (held until
    2026-03-03; replaced by [id])`."""
    since = f" from {_day(item.valid_from)}" if item.valid_from else ""
    learned = f"learned {_day(item.created_at)}"
    if item.is_current:
        return f" (current{since}; {learned})"
    if item.valid_to is not None:
        replaced = f"; replaced by [{item.superseded_by}]" if item.superseded_by else ""
        return f" (held{since} until {_day(item.valid_to)}{replaced}; {learned})"
    return f" (archived {_day(item.updated_at)}; {learned})"


def _day(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d")


@tool
def forget(memory_id: str, context: ToolContext, memory: SemanticMemory) -> str:
    """Forget a memory, when the user asks for it or it is wrong (at most 3 per reply).

    Args:
        memory_id: The id of the memory, as shown in brackets.
    """
    old = _existing(memory, context, memory_id)
    context.allow_change("forget", old, "forget")
    item = memory.forget(memory_id)
    context.edits.append(MemoryEdit("forgot", old, item))
    return f"Forgot {memory_id}."


@tool
def pin(memory_id: str, context: ToolContext, memory: SemanticMemory, pinned: bool = True) -> str:
    """Pin a memory so it is in every prompt, or unpin it (unpinning needs the user's consent).

    Args:
        memory_id: The id of the memory, as shown in brackets.
        pinned: True to pin, False to unpin.
    """
    old = _existing(memory, context, memory_id)
    if old.pinned == pinned:
        return f"{memory_id} is already {'pinned' if pinned else 'not pinned'}."
    context.allow_change("pin", old, "pin" if pinned else "unpin")
    item = memory.pin(memory_id, pinned)
    context.edits.append(MemoryEdit("pinned" if pinned else "unpinned", old, item))
    return f"{'Pinned' if pinned else 'Unpinned'} {memory_id}."


def _existing(memory: SemanticMemory, context: ToolContext, memory_id: str) -> MemoryItem:
    """The memory with this id, if the chat may see it (its scope)."""
    item = memory.get(memory_id)
    if item is None or item.state == "forgotten" or not context.scope.sees(item):
        raise ToolError(f"There is no memory with id {memory_id!r}.")
    return item


@tool
def update_working_memory(
    context: ToolContext,
    working: WorkingMemoryStore,
    *,
    task: str | None = None,
    push_subgoal: str | None = None,
    pop_subgoal: bool = False,
    note: str | None = None,
    result_name: str | None = None,
    result: str | None = None,
) -> str:
    """Update the working memory of the current task; give only the fields to change.

    Args:
        task: The task being worked on (replaces the current one).
        push_subgoal: A subgoal to start on top of the subgoal stack.
        pop_subgoal: True when the current subgoal is done.
        note: A line for the scratchpad.
        result_name: Name of an intermediate result to store (with result).
        result: The value of the intermediate result.
    """
    try:
        state = working.update(
            context.conversation_id,
            task=task,
            push_subgoal=push_subgoal,
            pop_subgoal=pop_subgoal,
            note=note,
            result_name=result_name,
            result=result,
        )
    except ValueError as exc:
        raise ToolError(f"update_working_memory: {exc}") from None
    return state.to_prompt() or "Working memory is empty."


@tool
def search_conversations(
    query: str, context: ToolContext, conversations: ConversationStore, k: int = 5
) -> str:
    """Search the text of all past conversations.

    Args:
        query: Words to look for.
        k: How many messages to return at most (1 to 20).
    """
    limit = max(1, min(k, 20))
    sees = context.sees_conversation
    if sees is None:
        hits = conversations.search(query, k=limit)
    else:  # isolated projects' chats are left out (in one, all others): look further
        found = conversations.search(query, k=limit * 4)
        hits = [h for h in found if sees(h.conversation_id)][:limit]
    if not hits:
        return "No matching messages."
    return json.dumps(
        [{"conversation": h.title, "time": h.created_at, "snippet": h.snippet} for h in hits],
        ensure_ascii=False,
    )


@tool
def search_files(query: str, context: ToolContext, knowledge: Knowledge, k: int = 5) -> str:
    """Search the user's own files (their knowledge folders: notes, documents, PDFs, code) for
    passages about something. Cite the file and page or lines you used.

    Args:
        query: Words to look for.
        k: How many passages to return at most (1 to 10).
    """
    from assistant.knowledge import passages

    hits = knowledge.search(query, k=max(1, min(k, 10)), project=context.scope.project)
    if not hits:
        return "No matching passages in the user's files."
    context.read_files = True
    return fence("file passages", passages(hits))


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly, e.g. "sqrt(2) * (3 + 4) ** 2".

    Args:
        expression: The expression; + - * / // % **, parentheses and math functions.
    """
    return calc.format_result(calc.evaluate(expression))


@tool
def current_datetime() -> str:
    """The current local date and time, with the time zone."""
    now = now_utc().astimezone()
    return now.strftime("%A, %d %B %Y, %H:%M:%S %Z (UTC%z)")


MEMORY_TOOLS = (remember, recall, forget, pin)
OTHER_TOOLS = (update_working_memory, search_conversations, calculator, current_datetime)


def builtin_registry(*, long_term_memory: bool = True, files: bool = False) -> ToolRegistry:
    """The built-in tools; temporary chats (no long-term memory) get no memory tools, and
    `search_files` is there when the user has files in knowledge folders."""
    registry = ToolRegistry()
    tools: tuple[Tool, ...] = (MEMORY_TOOLS if long_term_memory else ()) + OTHER_TOOLS
    tools += (search_files,) if files else ()
    for t in tools:
        registry.register(t)
    return registry
