"""One modal window at a time during imports: a progress dialog never opens over (or under) a
message box, and an import asked for while another runs waits for its turn, so that its error
box never opens beside the other's progress dialog (each would block the other: the window
froze and had to be killed)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QProgressDialog, QWidget
from pytestqt.qtbot import QtBot

from assistant.transfer import ImportCancelledError
from assistant.ui.transfer import dialogs as transfer_dialogs
from assistant.ui.transfer import import_progress
from assistant.ui.transfer.dialogs import import_file
from assistant.ui.transfer.import_preview import ImportPreviewDialog
from assistant.workspace import Workspace
from tests.data.exports import HERE as EXPORTS
from tests.test_transfer import offline_settings

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]


def progress_dialogs() -> list[QProgressDialog]:
    """The import progress dialogs shown anywhere."""
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, QProgressDialog) and w.isVisible()
    ]


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
    widget.show()
    return widget


@pytest.fixture
def held_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Reading the first import waits for this (or its cancel); later ones read as usual."""
    release = threading.Event()
    real = transfer_dialogs.prepare_import
    calls: list[int] = []

    def read(path: Path, workspace: Workspace, progress: Any, cancel: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            while not release.wait(0.01):
                if cancel():
                    raise ImportCancelledError
        return real(path, workspace, progress, cancel)

    monkeypatch.setattr(transfer_dialogs, "prepare_import", read)
    yield release
    release.set()


def test_the_progress_waits_until_a_message_box_has_closed(
    qtbot: QtBot,
    parent: QWidget,
    workspace: Workspace,
    held_read: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reveals: list[int] = []
    reveal = import_progress.ImportProgress._reveal

    def counted(self: import_progress.ImportProgress) -> None:
        reveals.append(1)
        reveal(self)

    monkeypatch.setattr(import_progress.ImportProgress, "_reveal", counted)
    box = QMessageBox(QMessageBox.Icon.Warning, "Something else", "An error", parent=parent)
    box.setWindowModality(Qt.WindowModality.ApplicationModal)
    box.show()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is box, timeout=5000)
    import_file(parent, workspace, str(EXPORTS / "chatgpt-realistic.json"))
    qtbot.waitUntil(lambda: len(reveals) >= 3, timeout=10000)  # it looked, several times
    assert progress_dialogs() == []
    box.close()
    qtbot.waitUntil(lambda: len(progress_dialogs()) == 1, timeout=10000)
    held_read.set()
    qtbot.waitUntil(lambda: parent.findChild(ImportPreviewDialog) is not None, timeout=10000)
    assert progress_dialogs() == []
    preview = parent.findChild(ImportPreviewDialog)
    assert preview is not None
    preview.reject()


def test_an_import_asked_for_while_another_runs_waits_for_its_turn(
    qtbot: QtBot,
    parent: QWidget,
    workspace: Workspace,
    held_read: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    errors: list[tuple[str, list[QProgressDialog]]] = []

    def show_error(parent: QWidget, title: str, text: str) -> None:
        errors.append((text, progress_dialogs()))  # what else is on screen then

    monkeypatch.setattr(transfer_dialogs, "show_error", show_error)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    import_file(parent, workspace, str(EXPORTS / "chatgpt-realistic.json"))
    qtbot.waitUntil(lambda: len(progress_dialogs()) == 1, timeout=10000)  # the first reads
    import_file(parent, workspace, str(bad))  # dropped meanwhile: it would fail at once
    held_read.set()
    qtbot.waitUntil(lambda: parent.findChild(ImportPreviewDialog) is not None, timeout=10000)
    assert errors == []  # the first one's preview is open: not its turn yet
    preview = parent.findChild(ImportPreviewDialog)
    assert preview is not None
    preview.reject()
    qtbot.waitUntil(lambda: bool(errors), timeout=10000)
    ((text, shown),) = errors
    assert text.startswith("bad.json is not valid JSON: ")
    assert shown == []  # no progress dialog beside the message box
