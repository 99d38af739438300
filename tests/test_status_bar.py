"""The status bar keeps room for messages: long texts in its permanent labels are cut."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from assistant.ui.window.status_bar import MODEL_WIDTH, StatusBar, time_left
from assistant.ui.wording import number

pytestmark = pytest.mark.gui


def test_a_long_model_name_is_cut_in_the_middle_and_whole_on_hover(qtbot: QtBot) -> None:
    bar = StatusBar()
    qtbot.addWidget(bar)
    name = "Custom · /home/me/models/mistral-7b-instruct-v0.3.Q4_K_M-really-long-name.gguf"
    bar.provider_label.setText(name)
    shown = bar.provider_label.text()
    assert "…" in shown and shown.startswith("Custom") and shown.endswith(".gguf")
    assert bar.provider_label.fontMetrics().horizontalAdvance(shown) <= MODEL_WIDTH
    assert bar.provider_label.toolTip() == name == bar.provider_label.full_text()
    bar.provider_label.setText("OpenAI · gpt-4o")
    assert bar.provider_label.text() == "OpenAI · gpt-4o"
    assert bar.provider_label.toolTip() == ""


def test_background_work_shows_its_numbers_and_the_time_left(qtbot: QtBot) -> None:
    now = [100.0]
    bar = StatusBar(clock=lambda: now[0])
    qtbot.addWidget(bar)
    bar.set_progress("Embedding messages", 0, 9000)
    all_of = number(9000)  # as the locale writes it
    assert bar.progress_label.text() == f"Embedding messages 0 of {all_of}"
    now[0] += 2
    bar.set_progress("Embedding messages", 600, 9000)
    assert bar.progress_label.text() == f"Embedding messages 600 of {all_of}"  # too soon to tell
    now[0] += 8  # 1,200 in 10 s: 7,800 more take 65 s
    bar.set_progress("Embedding messages", 1200, 9000)
    done = number(1200)
    assert bar.progress_label.text() == f"Embedding messages {done} of {all_of} · about 1 min left"
    now[0] += 50
    bar.set_progress("Embedding messages", 7200, 9000)
    assert bar.progress_label.text().endswith("· about 15 s left")
    bar.set_progress("Embedding messages", 0, 0)
    assert bar.progress_label.isHidden()
    bar.set_progress("Embedding memories", 10, 500)  # other work: its own rate
    assert bar.progress_label.text() == "Embedding memories 10 of 500"


def test_time_left_in_words() -> None:
    assert time_left(3) == "about 5 s left"
    assert time_left(42) == "about 40 s left"
    assert time_left(12 * 60 + 10) == "about 12 min left"
    assert time_left(2 * 3600 + 5 * 60) == "about 2 h 5 min left"
