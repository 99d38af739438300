"""The import preview offers an export's memory policy: ticked where the user's is the default,
unticked (saying what it replaces) where they set their own; the import applies the choice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QCheckBox, QWidget
from pytestqt.qtbot import QtBot

from assistant.memory_policy import MemoryPolicy
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.transfer import dialogs as transfer_dialogs
from assistant.ui.transfer.dialogs import import_file
from assistant.ui.transfer.import_preview import ImportPreviewDialog
from assistant.workspace import Workspace
from tests.test_transfer import _valid_doc, offline_settings

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]

EXPORTED = MemoryPolicy("ask", ("health",), ("my ex",))
OWN = MemoryPolicy("on_request")


@pytest.fixture
def workspace(data_dir: Path) -> Iterator[Workspace]:
    offline_settings(data_dir)
    ws = Workspace.open(data_dir)
    yield ws
    ws.close()


@pytest.fixture
def infos(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    told: list[str] = []
    monkeypatch.setattr(transfer_dialogs, "show_info", lambda p, t, text: told.append(text))
    monkeypatch.setattr(transfer_dialogs, "show_error", lambda p, t, text: told.append(text))
    return told


@pytest.fixture
def export(tmp_path: Path) -> Path:
    doc = {**_valid_doc(), "memory_policy": EXPORTED.to_json()}
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _preview(qtbot: QtBot, workspace: Workspace, path: Path) -> ImportPreviewDialog:
    parent = QWidget()
    qtbot.addWidget(parent)
    import_file(parent, workspace, str(path))
    qtbot.waitUntil(lambda: parent.findChild(ImportPreviewDialog) is not None, timeout=10_000)
    dialog = parent.findChild(ImportPreviewDialog)
    assert isinstance(dialog, ImportPreviewDialog)
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def _import(qtbot: QtBot, dialog: ImportPreviewDialog, infos: list[str]) -> str:
    dialog.import_button.click()
    qtbot.waitUntil(lambda: bool(infos), timeout=10_000)
    return infos[0]


def _saved(workspace: Workspace) -> MemoryPolicy:
    settings, _ = Settings.load(settings_file(workspace.root))
    return settings.policy()


def test_the_policy_is_taken_where_none_is_set(
    qtbot: QtBot, workspace: Workspace, export: Path, infos: list[str]
) -> None:
    dialog = _preview(qtbot, workspace, export)
    check = dialog.findChild(QCheckBox, "importPolicyCheck")
    assert check is not None and check.isChecked()  # as instructions: taken where there are none
    assert check.text() == "Use the export's memory policy: Ask first; never: Health, “my ex”"
    text = _import(qtbot, dialog, infos)
    assert text.endswith("; memory policy: Ask first; never: Health, “my ex”")
    assert workspace.settings.policy() == EXPORTED == _saved(workspace)


@pytest.mark.parametrize("ticked", [False, True])
def test_a_policy_set_here_is_replaced_only_when_chosen(
    qtbot: QtBot, workspace: Workspace, export: Path, infos: list[str], ticked: bool
) -> None:
    workspace.set_policy(OWN)
    dialog = _preview(qtbot, workspace, export)
    check = dialog.findChild(QCheckBox, "importPolicyCheck")
    assert check is not None and not check.isChecked()
    assert check.text().endswith("(replaces yours: Only when asked to remember)")
    check.setChecked(ticked)
    text = _import(qtbot, dialog, infos)
    assert ("memory policy" in text) is ticked
    assert workspace.settings.policy() == (EXPORTED if ticked else OWN) == _saved(workspace)


def test_no_choice_when_the_policy_is_the_same(
    qtbot: QtBot, workspace: Workspace, export: Path, infos: list[str]
) -> None:
    workspace.set_policy(EXPORTED)
    dialog = _preview(qtbot, workspace, export)
    assert dialog.findChild(QCheckBox, "importPolicyCheck") is None
    assert dialog.chosen_policy() is None
    assert not _import(qtbot, dialog, infos).count("memory policy")
    assert workspace.settings.policy() == EXPORTED


def test_an_older_export_without_a_policy_offers_none(
    qtbot: QtBot, workspace: Workspace, tmp_path: Path, infos: list[str]
) -> None:
    workspace.set_policy(OWN)
    older = tmp_path / "older.json"
    older.write_text(json.dumps(_valid_doc()), encoding="utf-8")
    dialog = _preview(qtbot, workspace, older)
    assert dialog.findChild(QCheckBox, "importPolicyCheck") is None
    _import(qtbot, dialog, infos)
    assert workspace.settings.policy() == OWN
