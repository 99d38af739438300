"""One step's tool calls: saved, asked about when a tool asks first, run, their results saved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assistant.agent.cancel import OperationCancelledError
from assistant.agent.chat import ChatResponse, ToolCallRequest
from assistant.agent.confirm import Confirmations
from assistant.agent.events import (
    ConfirmationRequested,
    MemoryEdited,
    ToolCallFinished,
    ToolCallStarted,
)
from assistant.agent.tool_images import ToolImage, images_message
from assistant.agent.tools import Tool, ToolOutput, ToolSource
from assistant.agent.turn import Turn
from assistant.errors import ToolError
from assistant.memory import ConversationStore

CANCELLED_TOOL_RESULT = "Not run: the user stopped the turn."
DENIED_TOOL_RESULT = "Not run: the user did not allow this tool to run this time."
NOBODY_TO_ASK = "Not run: this tool may change things and nobody is here to allow it."
# The same tool call (name and arguments) runs at most this often in a turn; small models can
# call the date tool eight times a turn. A repeat past it is refused, and the turn goes on
# without tools.
REPEAT_LIMIT = 2
REPEATED_RESULT = (
    "Not run: this exact call was already made {times} times for this message. Use the results "
    "you have and answer the user."
)


@dataclass
class ToolStep:
    """Runs the tool calls of one model response in a turn."""

    conversations: ConversationStore
    scope: dict[str, Any]  # what the tools may take: the stores, the turn's context
    confirmations: Confirmations | None  # the user's answers when a tool asks first
    extra_tools: ToolSource | None  # tools from MCP servers ("always" is remembered there)

    def run(self, turn: Turn, messages: list[dict[str, Any]], response: ChatResponse) -> None:
        """Save the assistant's tool calls, run each and save its result; the images they
        returned follow the results (the API takes images only in user messages)."""
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls
        ]
        saved = self.conversations.append(turn.cid, "assistant", response.content, tool_calls=calls)
        messages.append(saved.to_openai())
        images: list[tuple[str, ToolImage]] = []
        for index, call in enumerate(response.tool_calls):
            if turn.cancel.cancelled:
                # Every call needs a result, or the conversation can't be sent again.
                for skipped in response.tool_calls[index:]:
                    self._result(
                        turn, messages, skipped, CANCELLED_TOOL_RESULT, stop_reason="stopped"
                    )
                raise OperationCancelledError
            turn.on_event(ToolCallStarted(turn.cid, call.id, call.name, call.arguments))
            times = turn.count_call(call)
            if times > REPEAT_LIMIT:
                output, ok = ToolOutput(REPEATED_RESULT.format(times=times - 1)), False
                if turn.use_tools:
                    turn.looped_on_tools()  # the next model call is offered no tools
            else:
                try:
                    output, ok = self._run_tool(turn, call)
                except OperationCancelledError:
                    # A tool that waited (for the user, or a server) was stopped: every call of
                    # the reply still needs a result.
                    for skipped in response.tool_calls[index:]:
                        self._result(
                            turn, messages, skipped, CANCELLED_TOOL_RESULT, stop_reason="stopped"
                        )
                    raise
            self._result(turn, messages, call, output.text, ok=ok)
            images.extend((call.name, image) for image in output.images)
            turn.on_event(
                ToolCallFinished(turn.cid, call.id, call.name, output.text, ok, output.images)
            )
            for edit in turn.context.edits:
                turn.on_event(MemoryEdited(turn.cid, edit, turn.user.id))
            turn.context.edits.clear()
            turn.registry.reveal(turn.context.revealed)
        if images:
            messages.append(images_message(images))

    def _run_tool(self, turn: Turn, call: ToolCallRequest) -> tuple[ToolOutput, bool]:
        """Run one call (once allowed, if it asks first): its result and whether it worked."""
        refusal = self._ask_first(turn, call)
        if refusal is not None:
            return ToolOutput(refusal), False
        try:
            return turn.registry.run(call.name, call.arguments, self.scope), True
        except ToolError as exc:
            return ToolOutput(f"Error: {exc}"), False

    def _ask_first(self, turn: Turn, call: ToolCallRequest) -> str | None:
        """Ask the user before a tool that may change things; the result if it may not run.

        "Always" is remembered by the tool source (in settings), so the tool asks no more.
        """
        found: Tool | None = turn.registry.get(call.name)
        external = found.external if found is not None else None
        if found is None or external is None or not external.asks:
            return None
        if self.confirmations is None:
            return NOBODY_TO_ASK
        request = ConfirmationRequested(
            turn.cid, call.id, call.name, external.server, external.name, call.arguments
        )
        choice = self.confirmations.ask(call.id, lambda: turn.on_event(request), turn.cancel)
        if choice == "deny":
            return DENIED_TOOL_RESULT
        if choice == "always" and self.extra_tools is not None:
            self.extra_tools.trust(found)
        return None

    def _result(
        self,
        turn: Turn,
        messages: list[dict[str, Any]],
        call: ToolCallRequest,
        result: str,
        *,
        ok: bool = True,
        stop_reason: str | None = None,
    ) -> None:
        saved = self.conversations.append(
            turn.cid,
            "tool",
            result,
            tool_call_id=call.id,
            name=call.name,
            stop_reason=stop_reason,
            ok=ok,
        )
        messages.append(saved.to_openai())
