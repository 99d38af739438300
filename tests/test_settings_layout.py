"""The settings dialog's layout: it fits a 768 px screen after any number of connection tests,
nothing moves while the URL is typed, errors wrap in full and go when they no longer apply."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from assistant.settings import PROVIDERS
from assistant.ui.settings.dialog import SettingsDialog
from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI
from tests.test_settings_dialog import (
    child,
    choose_provider,
    key_edit,
    open_dialog,
    point_at,
    result_label,
)

pytestmark = pytest.mark.gui

# Run in a process of its own, whose one screen is a laptop's (1366x768, 1280x720). It tests the
# connection again and again (errors of one, two and several lines, a success) and measures the
# dialog.
PROBE = r"""
import json, sys
from pathlib import Path
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPushButton
app = QApplication([])
from assistant.ui.settings.dialog import SettingsDialog
from assistant.workspace import Workspace

def settle(condition=lambda: True, ms=20_000):
    loop = QEventLoop()
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: condition() and loop.quit())
    timer.start()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    for _ in range(5):
        app.processEvents()

dialog = SettingsDialog(Workspace.open(Path(sys.argv[1])))
dialog.show()
settle()
url = dialog.findChild(QLineEdit, "baseUrlEdit")
test = dialog.findChild(QPushButton, "testConnectionButton")
result = dialog.findChild(QLabel, "connectionResult")
seen = []
for address in json.loads(sys.argv[2]):
    url.setText(address)
    test.click()
    settle(lambda: test.isEnabled())
    seen.append({
        "url": address,
        "text": result.text(),
        "frame": dialog.frameGeometry().getRect(),
        "available": dialog.screen().availableGeometry().getRect(),
        "label": [result.height(), result.heightForWidth(result.width())],
        "height": dialog.height(),
    })
print(json.dumps(seen))
"""


def inside(rect: list[int], area: list[int]) -> bool:
    x, y, w, h = rect
    ax, ay, aw, ah = area
    return ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1280, 720)])
def test_the_dialog_stays_on_a_laptop_screen_after_repeated_tests(
    tmp_path: Path, fake_openai: FakeOpenAI, width: int, height: int
) -> None:
    fake_openai.required_api_key = "sk-right"  # every test: the key is rejected
    with FakeOpenAI() as gone:
        unreachable = gone.base_url
    long_path = f"{fake_openai.base_url}/{'deployments/' * 6}{'x' * 70}"
    addresses = [unreachable, long_path, fake_openai.base_url] * 4 + [unreachable]
    screen = {"name": "laptop", "x": 0, "y": 0, "width": width, "height": height, "dpr": 1.0}
    screen.update(logicalDpi=96, logicalBaseDpi=96)
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "data"), json.dumps(addresses)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(seen) == len(addresses)
    for step in seen:
        assert inside(step["frame"], step["available"]), step
        shown, needed = step["label"]
        assert shown >= needed, step  # every line of the message is there
    long_errors = [s for s in seen if s["url"] == long_path]
    assert all("x" * 70 not in s["text"] for s in long_errors)  # broken, to be wrapped
    assert all(s["label"][1] > 30 for s in long_errors)  # on several lines
    # A long error grows the dialog; the next, shorter one gives the room back, every time.
    short = {s["height"] for s in seen if s["url"] == unreachable}
    assert len(short) == 1, seen
    assert all(s["height"] > min(short) for s in long_errors), seen


@pytest.fixture
def workspace(data_dir: Path) -> Iterator[Workspace]:
    ws = Workspace.open(data_dir)
    yield ws
    ws.close()


def place(widget: QWidget, dialog: SettingsDialog) -> QPoint:
    return widget.mapTo(dialog, QPoint(0, 0))


def test_nothing_moves_while_the_url_is_typed(qtbot: QtBot, workspace: Workspace) -> None:
    dialog = open_dialog(qtbot, workspace)
    buttons = [
        child(dialog, QPushButton, "refreshModelsButton"),
        child(dialog, QPushButton, "testConnectionButton"),
        key_edit(dialog),
    ]
    before = [place(w, dialog) for w in buttons]
    edit = child(dialog, QLineEdit, "baseUrlEdit")
    edit.clear()
    for letter in "http://gpu-box:8000/v1":
        qtbot.keyClicks(edit, letter)
        qtbot.wait(1)  # the dialog fits itself on the next turn of the event loop
        assert [place(w, dialog) for w in buttons] == before, edit.text()
    assert result_label(dialog).text() == ""
    edit.setText("ftp://gpu-box")
    qtbot.wait(1)
    assert "must start with http://" in result_label(dialog).text()
    assert [place(w, dialog) for w in buttons] == before


def test_a_stale_error_goes_when_a_listed_model_is_chosen(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    fake_openai.models = ("llama3.1", "qwen2.5", "nomic-embed-text")
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, fake_openai.base_url)
    chat = child(dialog, QComboBox, "chatModelCombo")
    chat.setEditText("gone-model")
    qtbot.mouseClick(child(dialog, QPushButton, "testConnectionButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "not the chat model" in result_label(dialog).text(), timeout=10_000)
    assert chat.currentText() == "gone-model"  # two were offered: the user chooses

    chat.setCurrentIndex(chat.findText("qwen2.5"))
    assert result_label(dialog).text() == ""


def test_refresh_models_picks_the_only_model_offered(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    fake_openai.models = ("qwen2.5-7b-instruct-q4_k_m.gguf", "nomic-embed-text")
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, fake_openai.base_url)
    chat = child(dialog, QComboBox, "chatModelCombo")
    assert chat.currentText() == "gpt-4o-mini"
    qtbot.mouseClick(child(dialog, QPushButton, "refreshModelsButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Connected" in result_label(dialog).text(), timeout=10_000)
    assert chat.currentText() == "qwen2.5-7b-instruct-q4_k_m.gguf"
    assert "not the chat model" not in result_label(dialog).text()
    assert dialog.values().chat_model == "qwen2.5-7b-instruct-q4_k_m.gguf"


def test_the_key_hint_matches_the_provider(qtbot: QtBot, workspace: Workspace) -> None:
    dialog = open_dialog(qtbot, workspace)
    edit = key_edit(dialog)
    assert "OpenAI API key" in edit.placeholderText()
    assert "Not needed" not in edit.placeholderText()
    choose_provider(dialog, "ollama")
    assert edit.placeholderText() == "Not needed for Ollama"
    choose_provider(dialog, "lmstudio")
    assert edit.placeholderText() == "Not needed for LM Studio"
    point_at(qtbot, dialog, "http://gpu-box:8000/v1")
    assert edit.placeholderText() == PROVIDERS["custom"].key_hint


def test_a_long_error_is_wrapped_in_full(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    fake_openai.required_api_key = "sk-right"
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, f"{fake_openai.base_url}/{'y' * 90}")
    qtbot.mouseClick(child(dialog, QPushButton, "testConnectionButton"), Qt.MouseButton.LeftButton)
    label = result_label(dialog)
    qtbot.waitUntil(lambda: "rejected" in label.text(), timeout=10_000)
    qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()))
    assert label.heightForWidth(label.width()) > 2 * label.fontMetrics().lineSpacing()
    assert label.toolTip().replace("\u200b", "") == label.toolTip()  # the tooltip is as said
    assert label.mapTo(dialog, QPoint(label.width(), 0)).x() <= dialog.width()
