"""The one debounce helper: a burst of triggers makes one call, debounced or throttled."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from assistant.ui.debounce import Debounced

pytestmark = pytest.mark.gui


def test_a_burst_makes_one_call_after_it(qtbot: QtBot) -> None:
    calls: list[int] = []
    debounced = Debounced(20, lambda: calls.append(1))
    for _ in range(5):
        debounced.trigger("any", "signal", "arguments")
    assert debounced.pending and calls == []
    qtbot.waitUntil(lambda: calls == [1])
    assert not debounced.pending


def test_flush_calls_now_and_cancel_drops_the_call(qtbot: QtBot) -> None:
    calls: list[int] = []
    debounced = Debounced(10_000, lambda: calls.append(1))
    debounced.flush()  # nothing scheduled: no call
    assert calls == []
    debounced.trigger()
    debounced.flush()
    assert calls == [1] and not debounced.pending
    debounced.trigger()
    debounced.cancel()
    assert not debounced.pending
    assert calls == [1]


def test_throttled_calls_come_while_triggers_keep_coming(qtbot: QtBot) -> None:
    calls: list[int] = []
    throttled = Debounced(30, lambda: calls.append(1), throttled=True)

    def keep_triggering() -> bool:  # a steady stream: a debounced call would wait for its end
        throttled.trigger()
        return len(calls) >= 2

    qtbot.waitUntil(keep_triggering, timeout=10_000)
