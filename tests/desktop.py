"""The app on a data dir, pointed at the fake server: its settings, and its main window shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI


def configure(root: Path, server: FakeOpenAI, *, embeddings: bool = True, **changes: Any) -> None:
    """Settings for `server`'s chat model (and its embeddings), the curator off unless `changes`
    say otherwise."""
    values: dict[str, Any] = {"auto_memories": False, "request_timeout": 10, **changes}
    Settings(
        provider="custom",
        base_url=server.base_url,
        chat_model="chat-model",
        embedding_model="embed-model" if embeddings else "",
        **values,
    ).save(settings_file(root))


def shown_window(qtbot: QtBot, root: Path) -> MainWindow:
    """A main window on the data dir `root`, shown on screen (qtbot deletes it at the end)."""
    win = MainWindow(Workspace.open(root))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def offline_window(qtbot: QtBot, root: Path, server: FakeOpenAI) -> MainWindow:
    """A shown window on `server`'s chat model without embeddings (keyword-only memory)."""
    configure(root, server, embeddings=False)
    return shown_window(qtbot, root)


def new_saved_chat(qtbot: QtBot, win: MainWindow, temporary: bool = False) -> str:
    """A new chat of `win`, once its file is made: New chat shows it at once and has the worker
    save it, so a test that writes to the store itself waits for that."""
    cid = win.new_conversation(temporary=temporary)
    qtbot.waitUntil(lambda: win.workspace.conversations.exists(cid))
    return cid
