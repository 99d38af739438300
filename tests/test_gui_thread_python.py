"""How often the GUI thread enters Python while Qt paints the window: a few times a frame,
not once a widget. Each entry takes the GIL, and waits for it (up to the interpreter's switch
interval) while a worker thread runs Python, as the curator does after every reply: an
application-wide Python event filter, called for every widget painted, made that wait the
GUI thread's longest stall (the stall itself is measured by `tests/bench/ui_bench.py`)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.test_main_window import send, wait_idle

pytestmark = pytest.mark.gui

ENTRIES_PER_REPAINT = 4  # a widget of our own that paints itself (the focus ring), say


def entries_while_repainting(window: MainWindow) -> Counter[str]:
    """The Python functions Qt called (from C++) while repainting all of `window` once."""
    entered: Counter[str] = Counter()
    here = sys._getframe()

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_back is here:
            entered[f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"] += 1

    sys.setprofile(profile)
    try:
        window.repaint()
    finally:
        sys.setprofile(None)
    return entered


def test_painting_the_window_enters_python_a_few_times_not_once_a_widget(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    window = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: not window.conversations.refreshing)
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("calculator", json.dumps({"expression": "2**10"}))),
        Reply.text("It is 1024:\n\n```python\nprint(2**10)\n```"),
    )
    send(qtbot, window, "What is 2**10?")
    wait_idle(qtbot, window)
    painted = [w for w in window.findChildren(QWidget) if w.isVisible()]
    entered = entries_while_repainting(window)
    print(f"{sum(entered.values())} entries into Python for {len(painted)} widgets: {entered}")
    assert len(painted) > 4 * ENTRIES_PER_REPAINT  # so that once a widget would show
    assert sum(entered.values()) <= ENTRIES_PER_REPAINT, entered
    window.close()
