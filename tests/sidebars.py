"""The memory sidebar on its own, over a workspace whose memories carry hashed vectors."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from assistant.memory import MemoryItem, MemoryKind
from assistant.ui.bridge import StoreBridge
from assistant.ui.memory.sidebar import MemorySidebar
from assistant.workspace import Workspace
from tests.embedders import hashed_vector

DIM = 64  # the size of the test embedders' vectors


def remember(workspace: Workspace, text: str, kind: MemoryKind = "fact", **kw: Any) -> MemoryItem:
    """Add a memory from the test (with its vector, so no embedding call is made)."""
    return workspace.memory.add(text, kind, vector=hashed_vector(text, DIM), **kw)


def shown_sidebar(
    qtbot: QtBot, workspace: Workspace, bridge: StoreBridge, height: int = 760
) -> MemorySidebar:
    """The sidebar of `workspace`, shown at a sidebar's width (qtbot deletes it at the end)."""
    widget = MemorySidebar(workspace, bridge)
    qtbot.addWidget(widget)
    widget.resize(360, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget
