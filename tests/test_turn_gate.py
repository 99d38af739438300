"""Memory upkeep gives way to the user's turns on a server that answers one request at a time."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.agent.turn_gate import GivingWayProvider, TurnGate
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply
from tests.scripted import ScriptedProvider
from tests.test_main_window import send, wait_idle

MEMORY = {"text": "The user keeps bees", "kind": "fact", "importance": 0.7}


def curator_replies() -> Any:
    """The server's answers: the curator's first request is long and slow (a small model on a
    slow machine), its later ones quick; the user's turns are echoed."""
    asked = 0

    def reply(request: dict[str, Any]) -> Reply:
        nonlocal asked
        if "response_format" not in request:  # a turn of the user's
            return Reply.text(f"You said: {request['messages'][-1]['content']}")
        asked += 1
        if asked == 1:
            padding = " ".join(["word"] * 5000)  # 100 s at this pace: the test would time out
            return Reply.text(json.dumps({"memories": [], "note": padding}), chunk_delay=0.02)
        return Reply.text(json.dumps({"memories": [MEMORY] if asked == 2 else []}))

    return reply


@pytest.mark.gui
def test_the_next_turn_is_not_queued_behind_the_curator(qtbot: QtBot, data_dir: Path) -> None:
    with FakeOpenAI(slots=1, default_reply=curator_replies()) as server:
        configure(data_dir, server, embeddings=False, auto_memories=True)
        win = shown_window(qtbot, data_dir)
        send(qtbot, win, "I keep bees in the garden")
        chats = lambda: server.requests_to("/v1/chat/completions")  # noqa: E731
        # The reply is done and the curator's request holds the server's only slot.
        qtbot.waitUntil(lambda: len(chats()) == 2, timeout=20_000)
        assert "response_format" in chats()[1].body
        wait_idle(qtbot, win)  # the turn is over for the window too: it takes the next message

        send(qtbot, win, "What is the weather like?")
        qtbot.waitUntil(
            lambda: "You said: What is the weather" in win.chat.toPlainText(), timeout=30_000
        )

        # The curator's request gave the slot up (the server saw its client go), and was asked
        # again after the turn: the memory is there.
        assert [r.get("response_format") is not None for r in server.abandoned] == [True]
        qtbot.waitUntil(
            lambda: any("bees" in i.text for i in win.workspace.memory.all()), timeout=20_000
        )
        turn = next(i for i, r in enumerate(chats()) if "weather" in json.dumps(r.body))
        retry = [i for i, r in enumerate(chats()) if "response_format" in r.body][1]
        assert retry > turn
        win.close()


def test_a_request_a_turn_cuts_short_is_asked_again_after_it() -> None:
    gate = TurnGate()

    def turn_begins(_messages: list[dict[str, Any]]) -> str:
        gate.turn_started()  # while the request runs: it is cancelled
        threading.Thread(target=gate.turn_ended).start()  # the turn ends some time later
        return "cut short"

    provider = ScriptedProvider(turn_begins, "asked again")
    giving_way = GivingWayProvider(provider, gate)
    heard: list[str] = []
    response = giving_way.chat([{"role": "user", "content": "hi"}], on_text=heard.append)
    assert response.content == "asked again"
    assert heard == ["asked again"]  # nothing of the try that was cut short
    assert gate.yielded == 1
    provider.assert_all_used()


def test_quitting_while_waiting_for_a_turn() -> None:
    gate = TurnGate()
    giving_way = GivingWayProvider(ScriptedProvider(), gate)
    cancel = CancelToken()
    gate.turn_started()
    cancel.cancel()
    with pytest.raises(OperationCancelledError):
        giving_way.chat([{"role": "user", "content": "hi"}], cancel=cancel)
