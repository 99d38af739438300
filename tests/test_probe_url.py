"""Settings' connection probe: a server URL without `/v1` whose `/v1` answers is suggested."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI
from tests.test_settings_dialog import child, open_dialog, point_at, result_label

pytestmark = pytest.mark.gui


@pytest.fixture
def workspace(data_dir: Path) -> Iterator[Workspace]:
    ws = Workspace.open(data_dir)
    yield ws
    ws.close()


def probe(qtbot: QtBot, workspace: Workspace, url: str) -> str:
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, url)
    qtbot.mouseClick(child(dialog, QPushButton, "testConnectionButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Contacting" not in result_label(dialog).text(), timeout=10_000)
    return result_label(dialog).text().replace("\u200b", "")  # break chances in a long URL


def test_a_url_without_v1_is_corrected_when_v1_answers(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    root = fake_openai.base_url.removesuffix("/v1")
    shown = probe(qtbot, workspace, root)
    assert shown == f"{root} has no models endpoint (HTTP 404). Did you mean {root}/v1?"


@pytest.mark.parametrize("path", ["/api", "/v1/extra"])
def test_a_url_with_a_path_is_left_to_check(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI, path: str
) -> None:
    url = fake_openai.base_url.removesuffix("/v1") + path
    shown = probe(qtbot, workspace, url)
    assert shown == f"{url} has no models endpoint (HTTP 404). Check the URL."
    asked = [r.path for r in fake_openai.requests_to("/models")]
    assert asked == [f"{path}/models"]  # not /v1/models: the URL has a path of its own
