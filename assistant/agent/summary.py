"""The rolling summary: messages that no longer fit the prompt, folded into one text."""

from __future__ import annotations

from collections.abc import Sequence

from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.chat import ChatProvider
from assistant.errors import AssistantError, ContextOverflowError
from assistant.memory import ConversationStore, Message, estimate_tokens

SUMMARY_PROMPT = """\
You keep the running summary of a conversation between a user and their assistant. Merge the \
previous summary and the new messages into one updated summary of at most 200 words: what was \
discussed, decided and left open. Answer with the summary only."""
EMPTY_REPLY = "The model sent an empty reply."
# A summary is at most 200 words; this bounds what the model may write.
SUMMARY_MAX_TOKENS = 400
MIN_SUMMARY_CHUNK = 100
# The summary request's own words and each message's role and separators, in tokens.
SUMMARY_OVERHEAD = 40


class SummaryFailedError(AssistantError):
    """The summary could not be updated; the older messages leave the prompt unsummarized."""


def fold_into_summary(
    provider: ChatProvider,
    conversations: ConversationStore,
    cid: str,
    overflow: Sequence[Message],
    *,
    budget: int,
    cancel: CancelToken,
) -> None:
    """Fold `overflow` into the conversation's summary, in requests that fit `budget`.

    Raises SummaryFailedError with the reason when the model could not do it.
    """
    conversation = conversations.load(cid)
    summary = conversation.summary
    pending = [m for m in overflow if m.content and m.role != "tool"]
    while pending:
        used = estimate_tokens(SUMMARY_PROMPT + summary) + SUMMARY_OVERHEAD
        room = max(MIN_SUMMARY_CHUNK, budget - used)
        chunk = _summary_chunk(pending, room)
        lines = "\n".join(f"{m.role}: {_clip(m.content, room)}" for m in chunk)
        request = f"Previous summary:\n{summary or '(none)'}\n\nNew messages:\n{lines}"
        try:
            response = provider.chat(
                [
                    {"role": "system", "content": SUMMARY_PROMPT},
                    {"role": "user", "content": request},
                ],
                cancel=cancel,
                max_tokens=SUMMARY_MAX_TOKENS,
            )
        except OperationCancelledError:
            raise
        except ContextOverflowError as exc:
            if budget <= MIN_SUMMARY_CHUNK * 2:
                raise SummaryFailedError("the messages do not fit the model") from exc
            budget //= 2  # the window may now be known; else guess smaller
            continue
        except AssistantError as exc:
            raise SummaryFailedError(str(exc)) from exc
        if not response.content.strip():
            raise SummaryFailedError(EMPTY_REPLY)
        summary = response.content.strip()
        conversations.set_summary(cid, summary, chunk[-1].id)
        pending = pending[len(chunk) :]
    if summary and overflow and overflow[-1].id != conversation.summary_upto:
        # Tool results and empty messages after the last summarized one are covered too.
        conversations.set_summary(cid, summary, overflow[-1].id)


def _summary_chunk(messages: Sequence[Message], tokens: int) -> list[Message]:
    """The first messages whose text fits `tokens` (at least one, clipped when summarized)."""
    chunk: list[Message] = []
    used = 0
    for message in messages:
        cost = min(tokens, estimate_tokens(message.content)) + 8
        if chunk and used + cost > tokens:
            break
        chunk.append(message)
        used += cost
    return chunk


def _clip(text: str, tokens: int) -> str:
    """`text` cut to about `tokens`, keeping its beginning and its end."""
    chars = tokens * 4
    if len(text) <= chars:
        return text
    half = chars // 2 - 2
    return f"{text[:half]} … {text[-half:]}"
