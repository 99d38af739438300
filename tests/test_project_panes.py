"""Projects in the panes: the conversation list grouped by project, the picker a new chat starts
in, moving a conversation, the Projects menu; the memory list's scope filter, caption and
"Make Global" / "Move to Project…"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QPushButton, QWidget
from pytestqt.qtbot import QtBot

from assistant.memory import ConversationStore
from assistant.ui.bridge import StoreBridge
from assistant.ui.conversations.group_delegate import GroupRole
from assistant.ui.conversations.pane import ConversationPane
from assistant.ui.conversations.project_actions import ProjectActions
from assistant.ui.conversations.project_dialog import ProjectDialog, ProjectValues
from assistant.ui.conversations.projects import ALL, NO_PROJECT
from assistant.ui.memory.model import GLOBAL, ScopeRole
from assistant.ui.memory.sidebar import MemorySidebar
from assistant.ui.worker import write_edit
from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.gui


@pytest.fixture
def workspace(data_dir: Path) -> Iterator[Workspace]:
    opened = Workspace.open(data_dir, embed=False)
    yield opened
    opened.close()


@pytest.fixture
def pane(qtbot: QtBot, workspace: Workspace) -> ConversationPane:
    widget = ConversationPane(workspace.conversations, None, workspace.projects)
    widget.new_chat.connect(workspace.conversations.save_new)  # as the window's worker does
    widget.edit_requested.connect(
        lambda edit: widget.on_edited(edit, write_edit(workspace.conversations, edit))
    )
    qtbot.addWidget(widget)
    return widget


def rows(pane: ConversationPane) -> list[tuple[str, str]]:
    """(group heading value, title) of each row as listed."""
    model = pane.view.model()
    return [
        (model.index(r, 0).data(GroupRole), model.index(r, 0).data())
        for r in range(model.rowCount())
    ]


def chat(workspace: Workspace, pane: ConversationPane, title: str, project: str | None) -> str:
    cid = workspace.conversations.create(title, project=project).id
    workspace.conversations.append(cid, "user", "hello")
    pane.refresh()
    return cid


def test_the_list_groups_by_project_then_no_project(
    pane: ConversationPane, workspace: Workspace, qtmodeltester: object
) -> None:
    novel = workspace.projects.create("Novel")
    garden = workspace.projects.create("Garden")
    chat(workspace, pane, "Loose", None)
    chat(workspace, pane, "Plot", novel.id)
    chat(workspace, pane, "Beds", garden.id)
    pane.projects_changed()
    listed = rows(pane)
    assert [t for _, t in listed] == ["Beds", "Plot", "Loose"]
    assert [g for g, _ in listed][:2] == ["Garden", "Novel"]
    assert listed[2][0].startswith("No project · ")
    qtmodeltester.check(pane.model)  # type: ignore[attr-defined]
    pane.show_project(novel.id)
    assert [t for _, t in rows(pane)] == ["Plot"]
    pane.show_project(NO_PROJECT)
    assert [t for _, t in rows(pane)] == ["Loose"]
    assert not rows(pane)[0][0].startswith("No project")  # one part: date headings only


def test_a_new_chat_starts_in_the_project_shown(
    pane: ConversationPane, workspace: Workspace
) -> None:
    novel = workspace.projects.create("Novel")
    pane.projects_changed()
    assert pane.picker is not None
    pane.picker.choose(novel.id)
    inside = pane.new_conversation()
    assert workspace.conversations.load(inside).project == novel.id
    assert pane.new_conversation() == inside  # the empty one is reused, in its project
    temporary = pane.new_conversation(temporary=True)
    assert workspace.conversations.load(temporary).project is None
    pane.picker.choose(ALL)
    outside = pane.new_conversation()
    assert outside != inside and workspace.conversations.load(outside).project is None


def test_moving_conversations_by_keyboard(
    qtbot: QtBot, pane: ConversationPane, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    novel = workspace.projects.create("Novel")
    pane.projects_changed()
    first = chat(workspace, pane, "First", None)
    chat(workspace, pane, "Second", None)
    pane.select(first)
    asked: list[str | None] = []

    def ask(current: str | None) -> str:
        asked.append(current)
        return novel.id

    monkeypatch.setattr(pane, "ask_project", ask)
    pane.view.setFocus()
    pane.move_action.trigger()
    qtbot.waitUntil(lambda: workspace.conversations.load(first).project == novel.id)
    assert asked == [None]
    qtbot.waitUntil(lambda: rows(pane)[0] == ("Novel", "First"))
    monkeypatch.setattr(pane, "ask_project", lambda current: NO_PROJECT)
    pane.select(first)
    pane.move_current()
    qtbot.waitUntil(lambda: workspace.conversations.load(first).project is None)


def test_the_move_menu_lists_the_projects_and_checks_the_current(
    pane: ConversationPane, workspace: Workspace
) -> None:
    from assistant.ui.conversations.projects import move_menu

    novel = workspace.projects.create("Novel")
    workspace.projects.create("Garden", isolated=True)
    moved: list[str | None] = []
    menu = move_menu(pane, workspace.projects, novel.id, moved.append)
    actions = [a for a in menu.actions() if a.text()]
    assert [a.text() for a in actions] == ["No project", "Garden (isolated)", "Novel"]
    assert [a.isChecked() for a in actions] == [False, False, True]
    actions[0].trigger()
    assert moved == [None]


@pytest.fixture
def actions(qtbot: QtBot, pane: ConversationPane, workspace: Workspace) -> ProjectActions:
    parent = QWidget()
    qtbot.addWidget(parent)
    return ProjectActions(workspace, pane, parent)


def test_new_edit_and_delete_a_project(
    qtbot: QtBot,
    actions: ProjectActions,
    pane: ConversationPane,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = [ProjectValues("Novel", "Dark tone.", False)]
    monkeypatch.setattr(actions, "ask", lambda project: answers.pop(0))
    created = actions.new_project()
    assert created is not None and created.instructions == "Dark tone."
    assert pane.picker is not None and pane.picker.choice() == created.id
    cid = pane.new_conversation()
    item = workspace.memory.add("The heroine is Ada", project=created.id)
    answers.append(ProjectValues("The Novel", "Darker.", True))
    actions.edit_project()
    changed = workspace.projects.get(created.id)
    assert changed is not None and (changed.name, changed.instructions, changed.isolated) == (
        "The Novel",
        "Darker.",
        True,
    )
    assert pane.picker.currentText() == "The Novel (isolated)"
    asked: list[tuple[int, int]] = []

    def confirm(project: object, chats: int, memories: int) -> bool:
        asked.append((chats, memories))
        return False  # delete, keeping its memories (global)

    monkeypatch.setattr(actions, "confirm_delete", confirm)
    actions.delete_project()
    qtbot.waitUntil(lambda: workspace.projects.all() == [])
    assert asked == [(1, 1)]
    assert workspace.conversations.load(cid).project is None
    assert workspace.memory.get(item.id).project is None  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: pane.picker is not None and pane.picker.choice() == ALL)


def test_a_taken_name_is_refused_with_a_message(
    actions: ProjectActions, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the name be taken after all (another window made it), the dialog comes back
    with everything written in it (it closed, and the instructions were lost)."""
    workspace.projects.create("Novel")
    warned: list[str] = []
    written = ProjectValues("novel", "Long careful instructions.", True)
    asked: list[ProjectValues | None] = []

    def ask(project: object, start: ProjectValues | None = None) -> ProjectValues | None:
        asked.append(start)
        return written if len(asked) == 1 else None  # then cancelled

    monkeypatch.setattr(actions, "ask", ask)
    monkeypatch.setattr(actions, "_warn", lambda title, text: warned.append(text))
    assert actions.new_project() is None
    assert warned and "already" in warned[0]
    assert asked == [None, written]


@pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
def test_the_project_dialog_refuses_a_taken_name_before_closing(qtbot: QtBot) -> None:
    dialog = ProjectDialog(None, taken=lambda name: name.casefold() == "falcon")
    qtbot.addWidget(dialog)
    dialog.show()
    save = dialog.buttons.button(dialog.buttons.StandardButton.Save)
    dialog.name.setText("Falcon")
    dialog.instructions.edit.setPlainText("Long careful instructions.")
    assert not save.isEnabled() and dialog.name_problem.isVisible()
    assert dialog.name_problem.text() == "There is a project called “Falcon” already."
    qtbot.keyClick(dialog.instructions.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.isVisible()
    dialog.name.setText("Falcon 2")
    assert save.isEnabled() and not dialog.name_problem.isVisible()
    qtbot.keyClick(dialog.instructions.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.result() == dialog.DialogCode.Accepted
    # Alt+S typed an "s" into the name: the Save button had no mnemonic.
    assert save.shortcut() == QKeySequence("Alt+S")


def test_the_project_dialog_needs_a_name_and_counts_the_instructions(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = ProjectDialog(None)
    qtbot.addWidget(dialog)
    save = dialog.buttons.button(dialog.buttons.StandardButton.Save)
    assert not save.isEnabled()
    dialog.name.setText("  Novel   draft ")
    dialog.instructions.edit.setPlainText("x" * 4001)
    assert not save.isEnabled() and "over the limit" in dialog.instructions.counter.text()
    dialog.instructions.edit.setPlainText("Keep it dark.")
    dialog.isolated.setChecked(True)
    assert save.isEnabled()
    folders = [str(tmp_path / "drafts"), str(tmp_path / "notes"), str(tmp_path / "drafts"), ""]
    dialog.choose_folder = lambda: folders.pop(0)  # type: ignore[method-assign]
    add = dialog.findChild(QPushButton, "projectAddFolder")
    remove = dialog.findChild(QPushButton, "projectRemoveFolder")
    assert add is not None and remove is not None
    for _ in range(4):  # the same folder once; a cancelled choice adds nothing
        add.click()
    dialog.folders.setCurrentRow(1)
    remove.click()
    assert dialog.values() == ProjectValues(
        "Novel draft", "Keep it dark.", True, (str(tmp_path / "drafts"),)
    )


def test_a_projects_folders_are_read_and_searched_in_its_chats_only(
    actions: ProjectActions, workspace: Workspace, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = str(tmp_path / "drafts")
    monkeypatch.setattr(
        actions, "ask", lambda project: ProjectValues("Novel", "", False, (folder,))
    )
    project = actions.new_project()
    assert project is not None and project.knowledge == (folder,)
    assert folder in workspace.knowledge.read_sources().folders
    assert folder not in workspace.knowledge.sources.folders  # not a global one


# -- the memory sidebar --------------------------------------------------------------------------


@pytest.fixture
def sidebar(qtbot: QtBot, workspace: Workspace) -> MemorySidebar:
    bridge = StoreBridge(workspace)
    widget = MemorySidebar(workspace, bridge)
    qtbot.addWidget(widget)
    return widget


def listed(sidebar: MemorySidebar) -> list[tuple[str, str | None]]:
    model = sidebar.memories.model
    return [
        (model.index(r, 0).data(), model.index(r, 0).data(ScopeRole))
        for r in range(model.rowCount())
    ]


def test_the_memory_list_shows_and_filters_scopes(
    qtbot: QtBot, sidebar: MemorySidebar, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    filters = sidebar.memories.filters
    workspace.memory.add("The user likes tea")
    assert listed(sidebar) == [("The user likes tea", None)]  # no projects: no scope shown
    assert filters.scope_filter.isHidden()
    novel = workspace.projects.create("Novel")
    sidebar.memories.projects_changed()
    assert not filters.scope_filter.isHidden()
    ada = workspace.memory.add("The heroine is Ada", project=novel.id)
    qtbot.waitUntil(lambda: len(listed(sidebar)) == 2)
    assert sorted(listed(sidebar)) == [
        ("The heroine is Ada", "Novel"),
        ("The user likes tea", "Global"),
    ]
    filters.scope_filter.setCurrentIndex(filters.scope_filter.findData(novel.id))
    assert listed(sidebar) == [("The heroine is Ada", "Novel")]
    filters.scope_filter.setCurrentIndex(filters.scope_filter.findData(GLOBAL))
    assert listed(sidebar) == [("The user likes tea", "Global")]

    filters.scope_filter.setCurrentIndex(0)  # all scopes
    controller = sidebar.memories.controller
    assert sidebar.memories.select(ada.id)
    sidebar.memories.context_menu(
        sidebar.memories.list_view.visualRect(sidebar.memories.model.index_of(ada.id)).center()
    )
    assert controller.make_global.isEnabled() and controller.move_to_project.isEnabled()
    controller.make_global.trigger()
    qtbot.waitUntil(lambda: workspace.memory.get(ada.id).project is None)  # type: ignore[union-attr]
    assert workspace.memory.history(ada.id)[-1].type == "moved"
    detail = sidebar.memories.detail
    qtbot.waitUntil(lambda: "Moved by you: project 'Novel' → global" in detail.toPlainText())
    assert "Scope: global (used in every chat)" in detail.toPlainText()
    tea = next(i for i in workspace.memory.all() if "tea" in i.text)
    assert sidebar.memories.select(tea.id)
    monkeypatch.setattr(controller, "ask_project", lambda current: novel.id)
    controller.move_to_project.trigger()
    qtbot.waitUntil(lambda: workspace.memory.get(tea.id).project == novel.id)  # type: ignore[union-attr]
    moved = workspace.memory.history(tea.id)[-1]
    assert (moved.type, moved.project_before, moved.project_after) == ("moved", None, novel.id)
    qtbot.waitUntil(lambda: ("The user likes tea", "Novel") in listed(sidebar))


def test_the_conversation_tab_shows_the_projects_instructions(
    sidebar: MemorySidebar, workspace: Workspace
) -> None:
    novel = workspace.projects.create("Novel", instructions="Keep the tone dark.")
    cid = workspace.conversations.create(project=novel.id).id
    sidebar.set_conversation(workspace.conversations.load(cid))
    text = sidebar.conversation_view.toPlainText()
    assert "Instructions for the project 'Novel':" in text and "Keep the tone dark." in text
    sidebar.set_conversation(workspace.conversations.load(workspace.conversations.create().id))
    assert "Keep the tone dark." not in sidebar.conversation_view.toPlainText()


def test_the_projects_keys_work_in_the_window(
    qtbot: QtBot, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtCore import Qt

    from tests.desktop import new_saved_chat, shown_window

    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: getattr(win, "projects", None) is not None)
    win.activateWindow()  # window shortcuts need the active window
    qtbot.waitUntil(win.isActiveWindow)
    monkeypatch.setattr(win.projects, "ask", lambda project: ProjectValues("Novel", "", False))
    keys = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    win.conversations.view.setFocus()
    qtbot.keyClick(win.conversations.view, Qt.Key.Key_N, keys)
    qtbot.waitUntil(lambda: [p.name for p in win.workspace.projects.all()] == ["Novel"])
    (novel,) = win.workspace.projects.all()
    cid = new_saved_chat(qtbot, win)
    assert win.workspace.conversations.load(cid).project == novel.id
    monkeypatch.setattr(win.projects, "ask", lambda project: ProjectValues("Novel", "Dark.", True))
    qtbot.keyClick(win.conversations.view, Qt.Key.Key_I, keys)
    qtbot.waitUntil(lambda: win.workspace.projects.get(novel.id).isolated)  # type: ignore[union-attr]
    names = [a.text() for a in win.menu.projects_menu.actions() if a.text()]
    assert names[:3] == ["&New Project…", "&Rename Project…", "Project &Instructions…"]
    win.close()


@pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
def test_the_import_preview_asks_merge_or_apart_and_the_import_does_it(
    qtbot: QtBot, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assistant.transfer import export_data, write_export
    from assistant.ui.transfer import dialogs as transfer_dialogs
    from assistant.ui.transfer.dialogs import import_file
    from assistant.ui.transfer.import_preview import ImportPreviewDialog

    source = Workspace.open(tmp_path / "source", embed=False)
    theirs = source.projects.create("Novel", instructions="Theirs.")
    cid = source.conversations.create("Plot", project=theirs.id).id
    source.conversations.append(cid, "user", "hello")
    path = tmp_path / "export.json"
    write_export(path, export_data(source, include_memories=True))
    source.close()
    mine = workspace.projects.create("novel")
    infos: list[str] = []
    monkeypatch.setattr(transfer_dialogs, "show_info", lambda p, t, text: infos.append(text))
    monkeypatch.setattr(transfer_dialogs, "show_error", lambda p, t, text: infos.append(text))
    parent = QWidget()
    qtbot.addWidget(parent)
    import_file(parent, workspace, str(path))
    qtbot.waitUntil(lambda: parent.findChild(ImportPreviewDialog) is not None, timeout=10_000)
    dialog = parent.findChild(ImportPreviewDialog)
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.counts_label.text() == "1 conversation, 1 message, 0 memories, 1 project"
    choice = dialog.project_choice
    assert choice is not None and choice.merge.isChecked() and choice.policy() == "merge"
    choice.apart.setChecked(True)
    dialog.import_button.click()
    qtbot.waitUntil(lambda: bool(infos), timeout=10_000)
    assert sorted(p.name for p in workspace.projects.all()) == ["Novel (imported)", "novel"]
    assert workspace.conversations.load(cid).project == theirs.id != mine.id


def test_a_new_project_shows_its_new_empty_chat_not_the_one_before(
    qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.desktop import configure, new_saved_chat, shown_window

    store = ConversationStore(data_dir)
    before = store.create("Lisbon trip").id
    store.append(before, "user", "What should I pack for Lisbon?")
    store.close()
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: "pack for Lisbon" in win.chat.toPlainText())
    monkeypatch.setattr(win.projects, "ask", lambda project: ProjectValues("Novel", "", False))
    win.projects.new.trigger()
    (novel,) = win.workspace.projects.all()
    shown = win.session.conversation_id
    assert shown is not None and shown != before
    assert win.conversations.current_id() == shown
    assert "pack for Lisbon" not in win.chat.toPlainText()
    assert win.conversations.model.rowCount() == 1  # the new chat, in the new project
    cid = new_saved_chat(qtbot, win)  # New chat: the same empty one, in the project
    assert cid == shown and win.workspace.conversations.load(cid).project == novel.id
    win.close()


@pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
def test_move_to_project_names_the_chat_and_shows_wide_enough(
    qtbot: QtBot, pane: ConversationPane, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QInputDialog

    novel = workspace.projects.create("Novel")
    cid = chat(workspace, pane, "Packing list for Lisbon", None)
    pane.projects_changed()
    pane.select(cid)
    seen: list[tuple[str, int]] = []

    def shown(dialog: QInputDialog) -> int:
        dialog.show()
        qtbot.waitExposed(dialog)
        seen.append((dialog.labelText(), dialog.width()))
        dialog.setTextValue("Novel")
        return int(QInputDialog.DialogCode.Accepted)

    monkeypatch.setattr(QInputDialog, "exec", shown)
    assert pane.ask_project(None) == novel.id
    ((label, width),) = seen
    assert label == "Move 'Packing list for Lisbon' to:" and width >= 420
