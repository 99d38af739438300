"""Export and import dialogs: the preview, importing as copies, bad files, writing an export."""

from __future__ import annotations

import base64
import json
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QDialogButtonBox,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from assistant.instructions import Instructions
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.transfer import ImportCancelledError, export_data, write_export
from assistant.ui.transfer import dialogs as transfer_dialogs
from assistant.ui.transfer.dialogs import (
    ExportDialog,
    export_conversations,
    import_file,
    import_folder,
)
from assistant.ui.transfer.drop import ImportDropFilter, dropped_export
from assistant.ui.transfer.import_preview import ImportPreviewDialog
from assistant.ui.transfer.import_progress import Phases
from assistant.ui.wording import number
from assistant.workspace import Workspace
from tests.data.exports import HERE as EXPORTS
from tests.store_set import StoreSet
from tests.test_transfer import fill, offline_settings, snapshot

pytestmark = [
    pytest.mark.gui,
    # The offscreen platform says so whenever a dialog is shown; it is not a problem of ours.
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


@dataclass
class Hooks:
    """What the dialogs asked and told the user, and the file names they will get."""

    save_name: str = ""
    open_name: str = ""
    asked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    infos: list[str] = field(default_factory=list)


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> Hooks:
    recorded = Hooks()

    def save(parent: QWidget, caption: str, path: str, filters: str) -> str:
        recorded.asked.append(path)
        return recorded.save_name

    def open_(parent: QWidget, caption: str, directory: str, filters: str) -> str:
        recorded.asked.append(directory)
        return recorded.open_name

    monkeypatch.setattr(transfer_dialogs, "get_save_file_name", save)
    monkeypatch.setattr(transfer_dialogs, "get_open_file_name", open_)
    monkeypatch.setattr(
        transfer_dialogs, "show_error", lambda parent, title, text: recorded.errors.append(text)
    )
    monkeypatch.setattr(
        transfer_dialogs, "show_info", lambda parent, title, text: recorded.infos.append(text)
    )
    return recorded


@pytest.fixture
def workspace(data_dir: Path) -> Iterator[Workspace]:
    offline_settings(data_dir)
    ws = Workspace.open(data_dir)
    yield ws
    ws.close()


@pytest.fixture
def parent(qtbot: QtBot) -> QWidget:
    widget = QWidget()
    qtbot.addWidget(widget)
    return widget


@pytest.fixture
def export_file(workspace: Workspace, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An export of two conversations and three memories; only "Trip planning" is still here."""
    stores = StoreSet(workspace.conversations, workspace.memory)
    ids = fill(stores)
    path = tmp_path / "in.json"
    write_export(path, export_data(stores, [ids["trip"], ids["tea"]], include_memories=True))
    workspace.conversations.delete(ids["tea"])
    return path, ids


def preview_dialog(qtbot: QtBot, parent: QWidget) -> ImportPreviewDialog:
    qtbot.waitUntil(lambda: parent.findChild(ImportPreviewDialog) is not None)
    dialog = parent.findChild(ImportPreviewDialog)
    assert isinstance(dialog, ImportPreviewDialog)
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def test_preview_shows_counts_and_conflicts(
    qtbot: QtBot,
    *,
    parent: QWidget,
    workspace: Workspace,
    data_dir: Path,
    export_file: tuple[Path, dict[str, str]],
    hooks: Hooks,
) -> None:
    path, _ = export_file
    workspace.conversations.all()  # settle the listing cache before taking the snapshot
    before = snapshot(data_dir)
    import_file(parent, workspace, str(path))
    dialog = preview_dialog(qtbot, parent)
    assert dialog.objectName() == "importPreviewDialog"
    assert dialog.format_label.text() == "Format: Assistant export"
    assert dialog.counts_label.text() == "2 conversations, 5 messages, 3 memories"
    assert dialog.conflicts_label.text().startswith(
        "1 conversation is already here and 3 memories are already here."
    )
    assert [dialog.conflict_list.item(i).text() for i in range(dialog.conflict_list.count())] == [
        "Trip planning"
    ]
    assert dialog.skip_radio.isChecked() and dialog.copy_radio.isEnabled()
    assert dialog.skip_radio.text() == "Skip conversations that already exist"
    assert dialog.copy_radio.text() == "Import them as copies"
    dialog.reject()
    qtbot.wait(50)
    assert hooks.errors == [] and hooks.infos == []
    assert snapshot(data_dir) == before


def test_preview_says_up_front_a_forgotten_memory_is_not_imported(
    qtbot: QtBot,
    parent: QWidget,
    workspace: Workspace,
    export_file: tuple[Path, dict[str, str]],
) -> None:
    path, _ = export_file
    first = workspace.memory.all()[0]
    workspace.memory.forget(first.id)
    import_file(parent, workspace, str(path))
    dialog = preview_dialog(qtbot, parent)
    said = dialog.conflicts_label.text()
    assert said.startswith("1 conversation is already here and 2 memories are already here.")
    assert said.endswith(" 1 you asked to forget: not imported.")
    dialog.reject()


def test_import_as_copies_through_the_dialog(
    qtbot: QtBot,
    parent: QWidget,
    workspace: Workspace,
    export_file: tuple[Path, dict[str, str]],
    hooks: Hooks,
) -> None:
    path, ids = export_file
    hooks.open_name = str(path)
    import_file(parent, workspace)  # no path: the open-file hook picks it
    dialog = preview_dialog(qtbot, parent)
    dialog.copy_radio.setChecked(True)
    assert dialog.policy() == "copy"
    dialog.import_button.click()
    progress = parent.findChild(QProgressDialog, "importProgressDialog")
    assert progress is not None and progress.maximum() == 5  # 2 conversations, 3 memories
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors), timeout=10_000)
    assert hooks.errors == []
    assert hooks.infos == [
        "Imported 2 conversations (1 as a copy) and 0 memories (3 skipped as already present)"
    ]
    titles = sorted(c.title for c in workspace.conversations.all())
    assert titles == ["Scratch", "Tea", "Trip planning", "Trip planning (imported)"]
    tea = next(c for c in workspace.conversations.all() if c.title == "Tea")
    assert tea.id == ids["tea"]  # not a conflict: imported under its own id
    assert len(workspace.memory.all(None)) == 3 + 1  # never copied; forgotten one until close
    qtbot.waitUntil(lambda: all(not p.isVisible() for p in parent.findChildren(QProgressDialog)))


def test_a_bad_file_shows_the_error_and_changes_nothing(
    qtbot: QtBot,
    *,
    parent: QWidget,
    workspace: Workspace,
    data_dir: Path,
    export_file: tuple[Path, dict[str, str]],
    hooks: Hooks,
    tmp_path: Path,
) -> None:
    path, _ = export_file
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["conversations"][1]["messages"][0]["role"] = "narrator"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    workspace.conversations.all()
    before = snapshot(data_dir)
    import_file(parent, workspace, str(bad))
    qtbot.waitUntil(lambda: bool(hooks.errors))
    (message,) = hooks.errors
    assert message.startswith(
        "bad.json can't be imported: the “role” of message 1 in conversation 2 (“Tea”) is wrong: "
        "it must be one of user, assistant, tool, system, not 'narrator' "
        "(at conversations[1].messages[0].role). The file may have been edited or damaged: "
        "export it again from the app that made it, or correct that entry."
    )
    assert message.endswith("\n\nNothing was changed.")
    assert parent.findChild(ImportPreviewDialog) is None
    assert snapshot(data_dir) == before


def test_cancelling_the_file_dialog_does_nothing(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks
) -> None:
    import_file(parent, workspace)
    qtbot.wait(50)
    assert len(hooks.asked) == 1
    assert parent.findChild(ImportPreviewDialog) is None
    assert hooks.errors == [] and hooks.infos == []


def _export_dialog(qtbot: QtBot, parent: QWidget) -> ExportDialog:
    qtbot.waitUntil(lambda: parent.findChild(ExportDialog, "exportDialog") is not None)
    dialog = parent.findChild(ExportDialog, "exportDialog")
    assert isinstance(dialog, ExportDialog)
    return dialog


def _press_export(dialog: ExportDialog) -> None:
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons is not None
    buttons.button(QDialogButtonBox.StandardButton.Ok).click()


def test_export_writes_a_file(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks, tmp_path: Path
) -> None:
    ids = fill(StoreSet(workspace.conversations, workspace.memory))
    hooks.save_name = str(tmp_path / "all")  # no suffix: .json is added
    export_conversations(parent, workspace, ids["tea"])
    dialog = _export_dialog(qtbot, parent)
    assert dialog.current_radio.isChecked() and dialog.current_radio.isEnabled()
    dialog.all_radio.setChecked(True)
    dialog.memories_check.setChecked(True)
    _press_export(dialog)
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors))
    assert hooks.errors == []
    assert hooks.infos == ["Exported 2 conversations and 3 memories to all.json"]
    assert hooks.asked[0].endswith(f"assistant-export-{date.today().isoformat()}.json")
    data = json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))
    assert [c["title"] for c in data["conversations"]] == ["Trip planning", "Tea"]
    assert len(data["memories"]) == 3


def test_export_of_the_current_conversation(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks, tmp_path: Path
) -> None:
    ids = fill(StoreSet(workspace.conversations, workspace.memory))
    hooks.save_name = str(tmp_path / "one.json")
    export_conversations(parent, workspace, ids["tea"])
    _press_export(_export_dialog(qtbot, parent))
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors))
    assert hooks.infos == ["Exported 1 conversation to one.json"]
    data = json.loads((tmp_path / "one.json").read_text(encoding="utf-8"))
    assert [c["id"] for c in data["conversations"]] == [ids["tea"]]
    assert "memories" not in data


def test_export_of_a_conversation_can_include_its_attached_files(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks, tmp_path: Path
) -> None:
    cid = workspace.conversations.create().id
    note = tmp_path / "note.md"
    note.write_text("# Hangar\n\n9,000 euros.\n")
    attached = workspace.attachments.add(cid, note).ref()
    workspace.conversations.append(cid, "user", "See the note.", attachments=[attached])
    for name, include in (("with.json", True), ("without.json", False)):
        hooks.save_name = str(tmp_path / name)
        export_conversations(parent, workspace, cid)
        dialog = _export_dialog(qtbot, parent)
        dialog.attachments_check.setChecked(include)
        _press_export(dialog)
        qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors))
        assert hooks.errors == []
        hooks.infos.clear()
        qtbot.waitUntil(lambda: parent.findChild(ExportDialog, "exportDialog") is None)
    entry = {"id": attached.id, "name": "note.md", "size": note.stat().st_size, "kind": "markdown"}
    for name, extra in (("with.json", {"data": base64.b64encode(note.read_bytes()).decode()}),
                        ("without.json", {})):  # fmt: skip
        data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
        assert data["conversations"][0]["messages"][0]["attachments"] == [{**entry, **extra}]


def test_export_without_a_current_conversation_exports_all(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks, tmp_path: Path
) -> None:
    export_conversations(parent, workspace, None)
    dialog = _export_dialog(qtbot, parent)
    assert not dialog.current_radio.isEnabled() and dialog.all_radio.isChecked()
    hooks.save_name = ""  # the user cancels the file dialog
    _press_export(dialog)
    qtbot.wait(50)
    assert hooks.infos == [] and hooks.errors == []
    assert list(tmp_path.glob("*.json")) == []


def test_export_error_is_shown(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    hooks.save_name = str(blocker / "out.json")
    export_conversations(parent, workspace, None)
    _press_export(_export_dialog(qtbot, parent))
    qtbot.waitUntil(lambda: bool(hooks.errors))
    assert "Could not write" in hooks.errors[0]


# -- other apps' exports ---------------------------------------------------------------------------


def test_the_open_dialog_offers_zip_files(
    parent: QWidget, workspace: Workspace, hooks: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    filters: list[str] = []
    monkeypatch.setattr(
        transfer_dialogs,
        "get_open_file_name",
        lambda parent, caption, directory, f: filters.append(f) or "",
    )
    import_file(parent, workspace)
    assert filters[0].startswith("ChatGPT export (*.zip *.json)")


def test_a_sharded_zip_previews_summed_with_what_is_left_out(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks
) -> None:
    import_file(parent, workspace, str(EXPORTS / "chatgpt-sharded.zip"))
    dialog = preview_dialog(qtbot, parent)
    assert dialog.format_label.text() == "Format: ChatGPT export"
    assert dialog.counts_label.text() == "7 conversations, 19 messages, from 3 files"
    labels = [label.text() for label in dialog.findChildren(QLabel)]
    assert any(t.startswith("Left out as they cannot be shown as text") for t in labels)
    checks = dialog.findChildren(QCheckBox, "importSuggestionCheck")
    assert [c.text() for c in checks] == [
        "I live in Porto and work as a nurse on night shifts.",
        "Answer briefly, in British English.",
    ]
    assert not any(c.isChecked() for c in checks)  # unticked by default
    assert not dialog.unreadable_list.isVisibleTo(dialog)
    checks[1].setChecked(True)
    assert [s.text for s in dialog.chosen_suggestions()] == ["Answer briefly, in British English."]
    dialog.import_button.click()
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors), timeout=10_000)
    assert hooks.infos == ["Imported 7 conversations and 1 memory"]
    (memory,) = workspace.memory.all(None)
    assert memory.tags == ("Imported from ChatGPT",) and memory.kind == "preference"


def test_unreadable_conversations_are_listed_in_the_preview(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks
) -> None:
    import_file(parent, workspace, str(EXPORTS / "chatgpt-bad-entries.json"))
    dialog = preview_dialog(qtbot, parent)
    label = dialog.findChild(QLabel, "importUnreadableLabel")
    assert label is not None
    assert label.text() == "4 conversations could not be read and will be left out:"
    rows = [dialog.unreadable_list.item(i).text() for i in range(dialog.unreadable_list.count())]
    assert rows[0] == (
        "Lost mapping: is neither a ChatGPT conversation (it has no “mapping”) nor a Claude one "
        "(no “chat_messages”)"
    )
    assert len(rows) == 4 and dialog.import_button.isEnabled()
    dialog.import_button.click()
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors), timeout=10_000)
    assert hooks.infos == [
        "Imported 2 conversations and 0 memories; 4 conversations could not be read"
    ]


def test_an_export_folder_can_be_chosen(
    qtbot: QtBot,
    *,
    parent: QWidget,
    workspace: Workspace,
    hooks: Hooks,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "chatgpt"
    with zipfile.ZipFile(EXPORTS / "chatgpt-sharded.zip") as archive:
        archive.extractall(folder)
    monkeypatch.setattr(
        transfer_dialogs, "get_existing_directory", lambda parent, caption, d: str(folder)
    )
    import_folder(parent, workspace)
    dialog = preview_dialog(qtbot, parent)
    assert dialog.counts_label.text() == "7 conversations, 19 messages, from 3 files"
    dialog.reject()


def test_reading_shows_progress_and_can_be_cancelled(
    qtbot: QtBot,
    *,
    parent: QWidget,
    workspace: Workspace,
    data_dir: Path,
    hooks: Hooks,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started = threading.Event()

    def slow_read(path: Path, progress: Any, cancel: Any) -> Any:
        progress(1_000_000, 4_000_000)  # the first MB of four
        started.set()
        while not cancel():
            time.sleep(0.01)
        raise ImportCancelledError

    monkeypatch.setattr(transfer_dialogs, "load_import", slow_read)
    workspace.conversations.all()
    before = snapshot(data_dir)
    import_file(parent, workspace, str(EXPORTS / "chatgpt-realistic.json"))
    progress = parent.findChild(QProgressDialog, "importReadProgressDialog")
    assert progress is not None
    qtbot.waitUntil(lambda: progress.value() == 1000 and progress.maximum() == 4000)  # kB
    assert started.is_set()
    qtbot.waitUntil(progress.isVisible)
    (cancel_button,) = progress.findChildren(QPushButton)
    assert cancel_button.text() == "Cancel"
    cancel_button.click()
    qtbot.waitUntil(lambda: not progress.isVisible())
    # The read stops and the flow ends without a word.
    flow = transfer_dialogs._ImportFlow
    qtbot.waitUntil(lambda: parent.findChild(flow) is None)
    assert hooks.errors == [] and hooks.infos == []
    assert parent.findChild(ImportPreviewDialog) is None
    assert snapshot(data_dir) == before


def test_dropping_an_export_on_the_window_imports_it(qtbot: QtBot, tmp_path: Path) -> None:
    window = QMainWindow()
    child = QTextEdit(window)
    window.setCentralWidget(child)
    qtbot.addWidget(window)
    dropped: list[Path] = []
    ImportDropFilter(window, dropped.append)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(EXPORTS / "chatgpt-classic.zip"))])
    point = QPointF(5, 5)
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    # As the platform does: to the window's QWindow, which passes a drag on to the widget under it.
    handle = window.windowHandle()
    enter = QDragEnterEvent(point.toPoint(), Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(handle, enter)
    assert enter.isAccepted()
    drop = QDropEvent(point, Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(handle, drop)
    assert dropped == [EXPORTS / "chatgpt-classic.zip"]
    assert child.toPlainText() == ""  # the path was not pasted
    other = QMimeData()
    other.setUrls([QUrl.fromLocalFile(str(tmp_path / "notes.txt"))])
    assert dropped_export(other) is None
    text = QMimeData()
    text.setText("hello")
    assert dropped_export(text) is None


def test_importing_can_be_cancelled_and_keeps_what_was_done(
    qtbot: QtBot,
    parent: QWidget,
    workspace: Workspace,
    hooks: Hooks,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_apply = transfer_dialogs.apply_import

    def slow_apply(plan: Any, stores: Any, policy: Any, progress: Any, **options: Any) -> Any:
        cancel = options["cancel"]
        progress(1, plan.total)
        while not cancel():
            time.sleep(0.01)
        return real_apply(plan, stores, policy, progress, **options)

    monkeypatch.setattr(transfer_dialogs, "apply_import", slow_apply)
    import_file(parent, workspace, str(EXPORTS / "chatgpt-realistic.json"))
    preview_dialog(qtbot, parent).import_button.click()
    progress = parent.findChild(QProgressDialog, "importProgressDialog")
    assert progress is not None
    qtbot.waitUntil(lambda: progress.value() == 1 and progress.maximum() == 7)
    (cancel_button,) = progress.findChildren(QPushButton)
    cancel_button.click()
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors), timeout=10_000)
    assert hooks.errors == []
    assert hooks.infos == ["Import cancelled; what was imported before was kept."]
    assert workspace.conversations.all() == []


def test_chatgpt_custom_instructions_can_become_the_instructions(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks
) -> None:
    set_too: list[bool] = []
    import_file(
        parent, workspace, str(EXPORTS / "chatgpt-sharded.zip"), lambda: set_too.append(True)
    )
    dialog = preview_dialog(qtbot, parent)
    choice = dialog.findChild(QCheckBox, "importAsInstructions")
    assert choice is not None and not choice.isChecked()  # unticked by default
    assert choice.text() == "Use them as your custom instructions instead"
    checks = dialog.findChildren(QCheckBox, "importSuggestionCheck")
    checks[0].setChecked(True)
    choice.setChecked(True)  # instead: the memories are unticked and cannot be ticked
    assert not any(c.isChecked() or c.isEnabled() for c in checks)
    assert dialog.chosen_suggestions() == ()
    dialog.import_button.click()
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors), timeout=10_000)
    assert hooks.infos == ["Imported 7 conversations and 0 memories; custom instructions set"]
    assert workspace.settings.instructions() == Instructions(
        "I live in Porto and work as a nurse on night shifts.",
        "Answer briefly, in British English.",
    )
    saved, _ = Settings.load(settings_file(workspace.root))
    assert saved.instructions() == workspace.settings.instructions()
    assert workspace.memory.all(None) == [] and set_too == [True]


def test_importing_instructions_says_it_replaces_the_ones_there(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks
) -> None:
    workspace.set_instructions(Instructions(answer="Answer in French."))
    import_file(parent, workspace, str(EXPORTS / "chatgpt-sharded.zip"))
    dialog = preview_dialog(qtbot, parent)
    choice = dialog.findChild(QCheckBox, "importAsInstructions")
    assert choice is not None and not choice.isChecked()
    assert choice.text().endswith("(replaces the ones you have)")
    dialog.import_button.click()  # left unticked: the instructions stay
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors), timeout=10_000)
    assert hooks.infos == ["Imported 7 conversations and 0 memories"]
    assert workspace.settings.instructions() == Instructions(answer="Answer in French.")


# -- an import's progress in numbers, and its result ---------------------------------------


def test_the_phases_are_told_in_numbers() -> None:
    phases = Phases(memories=3, conversations=1204, suggestions=2)
    many = number(1204)  # as the locale writes it
    assert phases.describe(0) == "Memories 0 of 3"
    assert phases.describe(3) == f"Conversations 0 of {many} (memories: 3 done)"
    assert phases.describe(123) == f"Conversations 120 of {many} (memories: 3 done)"
    assert phases.describe(1207) == "Suggested memories 0 of 2"
    assert Phases(0, 5, 0).describe(5) == "Conversations 5 of 5"


def test_reading_says_how_much_of_the_file_is_read(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks, monkeypatch: Any
) -> None:
    def slow_read(path: Path, progress: Any, cancel: Any) -> Any:
        progress(3_000_000, 122_000_000)
        while not cancel():
            time.sleep(0.01)
        raise ImportCancelledError

    monkeypatch.setattr(transfer_dialogs, "load_import", slow_read)
    import_file(parent, workspace, str(EXPORTS / "chatgpt-realistic.json"))
    progress = parent.findChild(QProgressDialog, "importReadProgressDialog")
    assert progress is not None
    qtbot.waitUntil(lambda: "3.0 of 122.0 MB" in progress.labelText())
    assert progress.labelText().startswith("Reading chatgpt-realistic.json…")
    (cancel_button,) = progress.findChildren(QPushButton)
    cancel_button.click()  # the read stops: no thread is left reading
    flow = transfer_dialogs._ImportFlow
    qtbot.waitUntil(lambda: parent.findChild(flow) is None)


def test_importing_shows_numbers_and_then_a_result_that_stays(
    qtbot: QtBot,
    parent: QWidget,
    workspace: Workspace,
    hooks: Hooks,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_apply = transfer_dialogs.apply_import
    go_on = threading.Event()

    def paused_apply(plan: Any, stores: Any, policy: Any, progress: Any, **options: Any) -> Any:
        progress(2, plan.total)
        go_on.wait(10)
        return real_apply(plan, stores, policy, progress, **options)

    monkeypatch.setattr(transfer_dialogs, "apply_import", paused_apply)
    import_file(parent, workspace, str(EXPORTS / "chatgpt-realistic.json"))
    preview_dialog(qtbot, parent).import_button.click()
    progress = parent.findChild(QProgressDialog, "importProgressDialog")
    assert progress is not None
    qtbot.waitUntil(lambda: "Conversations 2 of 7" in progress.labelText())
    go_on.set()
    qtbot.waitUntil(lambda: parent.findChild(QMessageBox, "importResultBox") is not None)
    box = parent.findChild(QMessageBox, "importResultBox")
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert box.text().startswith("Imported 7 conversations")
    assert box.text() == hooks.infos[0] + "."  # the status bar says the same
    # Never under or over a progress dialog: they are all gone.
    assert all(not p.isVisible() for p in parent.findChildren(QProgressDialog))
    box.close()


def test_importing_through_the_dialog_restores_the_attached_files(
    qtbot: QtBot, parent: QWidget, workspace: Workspace, hooks: Hooks, tmp_path: Path
) -> None:
    from tests.test_attachment_import import exported, restored

    path, files = exported(tmp_path)
    import_file(parent, workspace, str(path))
    preview_dialog(qtbot, parent).import_button.click()
    qtbot.waitUntil(lambda: bool(hooks.infos or hooks.errors), timeout=10_000)
    assert hooks.errors == []
    assert hooks.infos[0].endswith("; 3 attached files restored")
    (conversation,) = workspace.conversations.all()
    assert restored(workspace, conversation.id) == files
    qtbot.waitUntil(lambda: all(not p.isVisible() for p in parent.findChildren(QProgressDialog)))
