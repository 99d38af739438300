"""Two projects through the real window (real worker thread, real openai client, the local fake
server): create them, chat in each, memories land in the right scope, move one, isolate a
project, export, import into a fresh data dir: everything comes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from assistant.projects import Project
from assistant.ui.conversations.project_dialog import ProjectValues
from assistant.ui.memory.model import ScopeRole
from assistant.ui.transfer import dialogs as transfer_dialogs
from assistant.ui.transfer.dialogs import ExportDialog
from assistant.ui.transfer.import_preview import ImportPreviewDialog
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, ToolCall, message_text

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


def new_project(win: MainWindow, monkeypatch: pytest.MonkeyPatch, name: str) -> Project:
    monkeypatch.setattr(win.projects, "ask", lambda project: ProjectValues(name, "", False))
    project = win.projects.new_project()
    assert project is not None
    return project


def chat(qtbot: QtBot, win: MainWindow, server: FakeOpenAI, text: str) -> str:
    """Send `text` in a new chat of the project shown; the system prompt the model got."""
    win.menu.new.trigger()
    win.input.setPlainText(text)
    qtbot.keyClick(win.input, Qt.Key.Key_Return)
    qtbot.waitUntil(win.send_button.isEnabled, timeout=20_000)
    for request in reversed(server.requests_to("/chat/completions")):
        messages = request.body["messages"]
        if any(m.get("role") == "user" and message_text(m) == text for m in messages):
            return message_text(messages[0])
    raise AssertionError(f"no request for {text!r}")


def remember(*memories: dict[str, object]) -> Reply:
    return Reply.tool_calls(*(ToolCall("remember", json.dumps(m)) for m in memories))


def scopes(win: MainWindow) -> dict[str, str | None]:
    """Each active memory's text and the scope the sidebar shows for it."""
    model = win.sidebar.memories.model
    return {
        model.index(r, 0).data(): model.index(r, 0).data(ScopeRole) for r in range(model.rowCount())
    }


def test_two_projects_from_creation_to_a_fresh_data_dir(
    qtbot: QtBot,
    tmp_path: Path,
    data_dir: Path,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure(data_dir, fake_openai, embeddings=False)
    win = shown_window(qtbot, data_dir)
    novel = new_project(win, monkeypatch, "Novel")
    garden = new_project(win, monkeypatch, "Garden")
    picker = win.conversations.picker
    assert picker is not None and picker.choice() == garden.id  # a new project is shown

    picker.choose(novel.id)
    fake_openai.enqueue(
        remember(
            {"text": "The novel's heroine is called Ada"},
            {"text": "The user writes in the mornings", "personal": True},
        ),
        Reply.text("Noted both."),
    )
    chat(qtbot, win, fake_openai, "My heroine is Ada. I write in the mornings.")
    picker.choose(garden.id)
    fake_openai.enqueue(
        remember({"text": "The tomatoes go by the south wall"}), Reply.text("Good spot.")
    )
    chat(qtbot, win, fake_openai, "The tomatoes go by the south wall.")
    qtbot.waitUntil(lambda: len(scopes(win)) == 3)
    assert scopes(win) == {
        "The novel's heroine is called Ada": "Novel",
        "The user writes in the mornings": "Global",
        "The tomatoes go by the south wall": "Garden",
    }
    chats = [c.project for c in win.workspace.conversations.all() if not c.empty]
    assert sorted(chats) == sorted([novel.id, garden.id])

    # Move one: the global memory into the novel, from the sidebar.
    memories = win.sidebar.memories
    mornings = next(i for i in win.workspace.memory.all() if "mornings" in i.text)
    assert memories.select(mornings.id)
    monkeypatch.setattr(memories.controller, "ask_project", lambda current: novel.id)
    memories.controller.move_to_project.trigger()
    qtbot.waitUntil(lambda: scopes(win)["The user writes in the mornings"] == "Novel")
    moved = win.workspace.memory.history(mornings.id)[-1]
    assert (moved.type, moved.project_before, moved.project_after) == ("moved", None, novel.id)
    memories.controller.make_global.trigger()
    qtbot.waitUntil(lambda: scopes(win)["The user writes in the mornings"] == "Global")

    # Isolate the garden: its chats see its memories only.
    win.conversations.select(
        next(c.id for c in win.workspace.conversations.all() if c.project == garden.id)
    )
    monkeypatch.setattr(win.projects, "ask", lambda project: ProjectValues("Garden", "", True))
    win.projects.edit_project()
    assert win.workspace.projects.get(garden.id).isolated  # type: ignore[union-attr]
    fake_openai.enqueue(Reply.text("By the wall, in the mornings."))
    walled = chat(qtbot, win, fake_openai, "When and where do the tomatoes and Ada go, mornings?")
    assert "The tomatoes go by the south wall" in walled
    assert "The user writes in the mornings" not in walled  # global: not in an isolated project
    assert "Ada" not in walled
    picker.choose(novel.id)
    fake_openai.enqueue(Reply.text("Ada, in the mornings."))
    open_ = chat(qtbot, win, fake_openai, "Ada writes in the mornings by the tomatoes?")
    assert "The novel's heroine is called Ada" in open_
    assert "The user writes in the mornings" in open_
    assert "tomatoes go by the south wall" not in open_

    # Export through File > Export, then import into a fresh data dir through File > Import.
    exported = tmp_path / "projects.json"
    monkeypatch.setattr(transfer_dialogs, "get_save_file_name", lambda *a: str(exported))
    infos: list[str] = []
    monkeypatch.setattr(transfer_dialogs, "show_info", lambda p, t, text: infos.append(text))
    monkeypatch.setattr(transfer_dialogs, "show_error", lambda p, t, text: infos.append(text))
    win.menu.export.trigger()
    qtbot.waitUntil(lambda: win.findChild(ExportDialog, "exportDialog") is not None)
    export_dialog = win.findChild(ExportDialog, "exportDialog")
    assert export_dialog is not None
    export_dialog.all_radio.setChecked(True)
    export_dialog.memories_check.setChecked(True)
    buttons = export_dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: bool(infos), timeout=10_000)
    assert infos[-1].endswith("3 memories and 2 projects to projects.json")
    before = {
        "projects": win.workspace.projects.all(),
        "conversations": {c.id: c.project for c in win.workspace.conversations.all()},
        "memories": {i.id: i.project for i in win.workspace.memory.all()},
    }
    win.close()

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    configure(fresh, fake_openai, embeddings=False)
    again = shown_window(qtbot, fresh)
    monkeypatch.setattr(transfer_dialogs, "get_open_file_name", lambda *a: str(exported))
    again.menu.import_.trigger()
    qtbot.waitUntil(lambda: again.findChild(ImportPreviewDialog) is not None, timeout=10_000)
    preview = again.findChild(ImportPreviewDialog)
    assert preview is not None and preview.project_choice is None  # no project of that name
    qtbot.waitUntil(preview.isVisible)
    preview.import_button.click()
    qtbot.waitUntil(lambda: len(infos) == 2, timeout=20_000)
    assert "2 projects" in infos[-1]
    workspace = again.workspace
    assert workspace.projects.all() == before["projects"]
    assert {c.id: c.project for c in workspace.conversations.all()} == before["conversations"]
    assert {i.id: i.project for i in workspace.memory.all()} == before["memories"]
    qtbot.waitUntil(lambda: len(scopes(again)) == 3)
    assert scopes(again)["The tomatoes go by the south wall"] == "Garden"
    again_picker = again.conversations.picker
    assert again_picker is not None
    assert [again_picker.itemText(i) for i in range(again_picker.count())] == [
        "All conversations",
        "Garden (isolated)",
        "Novel",
        "No project",
    ]
    again.close()
