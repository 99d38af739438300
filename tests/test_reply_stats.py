"""A reply's token counts and speed: from the server's usage chunk, else estimated and marked."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QTextBrowser
from pytestqt.qtbot import QtBot

from assistant.agent.chat import ChatResponse, TokenUsage, ToolCallRequest
from assistant.agent.reply_timing import Stopwatch
from assistant.json_fields import FieldError
from assistant.memory import Message, ReplyStats
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_main_window import send, wait_idle


def tooltip_at(view: QTextBrowser, text: str) -> str:
    """The tooltip of the character format where `text` begins in the chat."""
    found = view.document().find(text)
    assert not found.isNull(), text
    cursor = QTextCursor(view.document())
    cursor.setPosition(found.selectionStart() + 1)
    return cursor.charFormat().toolTip()


@pytest.mark.gui
def test_a_reply_shows_the_servers_token_counts_and_speed(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    win = shown_window(qtbot, data_dir)
    words = " ".join(f"word{i}" for i in range(30))
    fake_openai.enqueue(Reply.text(words, chunk_delay=0.05))  # long enough for a speed
    send(qtbot, win, "Count to thirty")
    qtbot.waitUntil(lambda: "tok/s" in win.chat.toPlainText(), timeout=10_000)
    wait_idle(qtbot, win)

    (body,) = [r.body for r in fake_openai.requests_to("/v1/chat/completions")]
    assert body["stream_options"] == {"include_usage": True}
    cid = win.conversations.current_id()
    assert cid is not None
    reply = win.workspace.conversations.load(cid).messages[-1]
    stats = reply.stats
    assert stats is not None and not stats.estimated
    assert (stats.model, stats.reply_tokens) == ("chat-model", 30)  # the fake counts words
    assert stats.prompt_tokens > 0
    assert stats.writing_seconds > 0
    line = win.chat.toPlainText().splitlines()[-1]
    assert line.startswith("Copy  ·  Copy as text  ·  Regenerate  ·  chat-model · 30 tokens · ")
    assert line.endswith(" tok/s") and "≈" not in line
    details = tooltip_at(win.chat, "chat-model · 30 tokens")
    assert f"Prompt: {stats.prompt_tokens:,} tokens" in details
    assert "Reply: 30 tokens" in details
    win.close()

    again = shown_window(qtbot, data_dir)  # kept in the conversation file
    again.conversations.select(cid)
    qtbot.waitUntil(lambda: "chat-model · 30 tokens" in again.chat.toPlainText(), timeout=10_000)
    again.close()


@pytest.mark.gui
def test_without_the_servers_counts_they_are_estimated_and_marked(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    win = shown_window(qtbot, data_dir)
    fake_openai.enqueue(
        Reply.error(400, "Unrecognized request argument supplied: stream_options"),
        Reply.text("A reply of eight words, more or less."),
    )
    send(qtbot, win, "Hello")
    qtbot.waitUntil(lambda: "tokens" in win.chat.toPlainText(), timeout=10_000)
    wait_idle(qtbot, win)
    first, second = [r.body for r in fake_openai.requests_to("/v1/chat/completions")]
    assert "stream_options" in first and "stream_options" not in second  # dropped, remembered
    line = win.chat.toPlainText().splitlines()[-1]
    assert "chat-model · ≈10 tokens" in line  # 38 characters: about 10 tokens
    assert "Estimated" in tooltip_at(win.chat, "chat-model · ≈10 tokens")
    win.close()


def test_the_stopwatch_measures_from_the_first_token() -> None:
    ticks = itertools.chain([10.0, 10.5], itertools.repeat(12.5))
    watch = Stopwatch(clock=lambda: next(ticks))  # sent at 10, first token at 10.5, done at 12.5
    watch.text()
    watch.text()
    stats = watch.stats("m", ChatResponse("x" * 400, (), "stop", TokenUsage(900, 101)), 50)
    assert (stats.prompt_tokens, stats.reply_tokens, stats.estimated) == (900, 101, False)
    assert (stats.first_token_seconds, stats.writing_seconds) == (0.5, 2.0)
    assert stats.tokens_per_second == 50.0
    assert replace(stats, reply_tokens=10).tokens_per_second is None  # too few to tell
    assert replace(stats, writing_seconds=0.004).tokens_per_second is None  # came at once

    ticks = itertools.repeat(3.0)  # a whole answer: no writing time to measure a speed by
    call = ToolCallRequest("c1", "get_time", "{}")
    whole = Stopwatch(clock=lambda: next(ticks)).stats("m", ChatResponse("", (call,), None), 50)
    assert (whole.prompt_tokens, whole.estimated, whole.tokens_per_second) == (50, True, None)
    assert whole.reply_tokens == 3  # "get_time{}", estimated


def test_stats_round_trip_in_a_message_and_bad_ones_are_named() -> None:
    stats = ReplyStats("qwen", 120, 40, 0.25, 1.5, estimated=True)
    raw = {
        "id": "m1",
        "parent_id": None,
        "role": "assistant",
        "content": "hi",
        "created_at": "2026-01-01T00:00:00Z",
        "stats": stats.to_json(),
    }
    assert Message.from_json(raw).stats == stats
    assert Message.from_json(Message.from_json(raw).to_json()).stats == stats
    raw["stats"] = {**stats.to_json(), "reply_tokens": "forty"}
    with pytest.raises(FieldError, match=r"stats\.reply_tokens"):
        Message.from_json(raw)
