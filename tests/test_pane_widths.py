"""The chat comes first: at 1024 px the side panes' first or saved widths left it the narrowest
pane (430 px beside 240 and 340); they now give up room (the list down to its minimum width,
the memory pane to where its filters still show whole) until it has half the width at least,
and saved widths that leave it that much are kept as they were."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.ui.window.main_window import LIST_MIN_WIDTH, SIDEBAR_GIVES_DOWN_TO, MainWindow
from assistant.workspace import Workspace
from tests.desktop import configure
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.gui


def opened(qtbot: QtBot, root: Path, width: int) -> MainWindow:
    """A window on `root`, `width` px wide, its three panes shown."""
    window = MainWindow(Workspace.open(root))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.resize(width, 700)
    qtbot.waitUntil(lambda: 0 not in window.splitter.sizes())
    return window


def assert_chat_first(sizes: list[int]) -> None:
    listed, chat, memory = sizes
    assert chat > max(listed, memory), sizes
    assert listed >= LIST_MIN_WIDTH and memory >= SIDEBAR_GIVES_DOWN_TO, sizes
    given_all = (listed, memory) == (LIST_MIN_WIDTH, SIDEBAR_GIVES_DOWN_TO)
    assert chat >= sum(sizes) // 2 or given_all, sizes


@pytest.mark.parametrize("width", [1024, 1366])
def test_the_chat_is_the_widest_pane_from_the_first_start(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, width: int
) -> None:
    configure(data_dir, fake_openai)
    window = opened(qtbot, data_dir, width)
    assert_chat_first(window.splitter.sizes())
    window.close()


def test_saved_widths_come_back_where_they_fit_and_give_way_where_not(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    configure(data_dir, fake_openai)
    first = opened(qtbot, data_dir, 1366)
    first.splitter.setSizes([280, 720, 358])  # the chat's half, and a little more
    saved = first.splitter.sizes()
    first.close()

    again = opened(qtbot, data_dir, 1366)
    assert again.splitter.sizes() == saved
    again.resize(1024, 700)  # the side panes give way
    qtbot.waitUntil(lambda: again.splitter.sizes()[0] == LIST_MIN_WIDTH)
    assert_chat_first(again.splitter.sizes())
    again.close()

    narrow = opened(qtbot, data_dir, 1024)  # saved at 1366: too wide for the chat's half here
    assert_chat_first(narrow.splitter.sizes())
    narrow.close()
