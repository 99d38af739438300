"""The settings dialog: shows and saves settings, stores the key safely, tests the connection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import keyring
import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QWidget,
)
from pytestqt.qtbot import QtBot

from assistant.credentials import KEYRING_SERVICE, KEYRING_USERNAME
from assistant.paths import settings_file
from assistant.settings import LOCAL_EMBEDDING_MODEL, PROVIDERS
from assistant.ui.settings.dialog import SettingsDialog
from assistant.ui.settings.model_page import BUILT_IN_EMBEDDINGS, NO_EMBEDDINGS
from assistant.workspace import Workspace
from tests.conftest import MemoryKeyring
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.gui

KEY = (KEYRING_SERVICE, KEYRING_USERNAME)
W = TypeVar("W", bound=QWidget)


@pytest.fixture
def workspace(data_dir: Path) -> Iterator[Workspace]:
    ws = Workspace.open(data_dir)
    yield ws
    ws.close()


def open_dialog(qtbot: QtBot, workspace: Workspace) -> SettingsDialog:
    dialog = SettingsDialog(workspace)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def child(dialog: SettingsDialog, kind: type[W], name: str) -> W:
    widget = dialog.findChild(kind, name)
    assert widget is not None, name
    return widget


def provider_combo(dialog: SettingsDialog) -> QComboBox:
    return child(dialog, QComboBox, "providerCombo")


def url_edit(dialog: SettingsDialog) -> QLineEdit:
    return child(dialog, QLineEdit, "baseUrlEdit")


def key_edit(dialog: SettingsDialog) -> QLineEdit:
    return child(dialog, QLineEdit, "apiKeyEdit")


def result_label(dialog: SettingsDialog) -> QLabel:
    return child(dialog, QLabel, "connectionResult")


def saved_settings(data_dir: Path) -> dict[str, object]:
    raw = json.loads(settings_file(data_dir).read_text(encoding="utf-8"))
    assert isinstance(raw, dict)
    return raw


def choose_provider(dialog: SettingsDialog, name: str) -> None:
    combo = provider_combo(dialog)
    combo.setCurrentIndex(combo.findData(name))


def point_at(qtbot: QtBot, dialog: SettingsDialog, url: str) -> None:
    """Type `url` into the URL field as a user would (which switches to Custom URL)."""
    edit = url_edit(dialog)
    edit.selectAll()
    qtbot.keyClicks(edit, url)
    assert edit.text() == url


def test_object_name_and_contract_widgets(qtbot: QtBot, workspace: Workspace) -> None:
    dialog = open_dialog(qtbot, workspace)
    assert dialog.objectName() == "settingsDialog"
    for kind, name in [
        (QComboBox, "chatModelCombo"),
        (QComboBox, "embeddingModelCombo"),
        (QLineEdit, "apiKeyEdit"),
        (QPushButton, "removeKeyButton"),
        (QCheckBox, "autoMemoriesCheck"),
        (QPushButton, "testConnectionButton"),
        (QLabel, "connectionResult"),
    ]:
        child(dialog, kind, name)
    assert key_edit(dialog).echoMode() == QLineEdit.EchoMode.Password


def test_shows_current_settings(
    qtbot: QtBot, workspace: Workspace, memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.passwords[KEY] = "sk-stored"
    workspace.settings.provider = "lmstudio"
    workspace.settings.chat_model = "qwen2.5-7b-instruct"
    workspace.settings.embedding_model = ""
    workspace.settings.auto_memories = False
    workspace.settings.memories_per_prompt = 9
    workspace.settings.decay_half_life_days = 30.0
    dialog = open_dialog(qtbot, workspace)

    assert provider_combo(dialog).currentData() == "lmstudio"
    assert url_edit(dialog).text() == PROVIDERS["lmstudio"].base_url
    assert child(dialog, QComboBox, "chatModelCombo").currentText() == "qwen2.5-7b-instruct"
    assert child(dialog, QComboBox, "embeddingModelCombo").currentText() == NO_EMBEDDINGS
    assert not child(dialog, QCheckBox, "autoMemoriesCheck").isChecked()
    assert child(dialog, QSpinBox, "memoriesPerPromptSpin").value() == 9
    assert child(dialog, QSpinBox, "decayHalfLifeSpin").value() == 30
    assert key_edit(dialog).text() == "sk-stored"
    assert "Stored in the system keyring" in child(dialog, QLabel, "keySourceLabel").text()
    assert not child(dialog, QLabel, "keyringWarning").isVisible()
    assert dialog.values() == workspace.settings


def test_ollama_preset_fills_url_and_models(qtbot: QtBot, workspace: Workspace) -> None:
    workspace.settings.embedding_model = "text-embedding-3-small"  # a server's model
    dialog = open_dialog(qtbot, workspace)
    choose_provider(dialog, "ollama")
    assert url_edit(dialog).text() == PROVIDERS["ollama"].base_url
    values = dialog.values()
    assert (values.provider, values.base_url) == ("ollama", "")
    assert (values.chat_model, values.embedding_model) == ("llama3.1", "nomic-embed-text")

    choose_provider(dialog, "lmstudio")  # keeps the models
    assert url_edit(dialog).text() == PROVIDERS["lmstudio"].base_url
    assert dialog.values().chat_model == "llama3.1"

    choose_provider(dialog, "openai")
    assert (dialog.values().chat_model, dialog.values().embedding_model) == (
        "gpt-4o-mini",
        "text-embedding-3-small",
    )


def test_custom_url_comes_back_with_its_model_after_trying_a_preset(
    qtbot: QtBot, workspace: Workspace
) -> None:
    workspace.settings.provider = "custom"
    workspace.settings.base_url = "http://127.0.0.1:8811/v1"
    workspace.settings.chat_model = "chat-model"
    dialog = open_dialog(qtbot, workspace)
    choose_provider(dialog, "ollama")
    values = dialog.values()
    assert (values.base_url, values.chat_model) == ("", "llama3.1")
    assert (values.custom_base_url, values.custom_chat_model) == (
        "http://127.0.0.1:8811/v1",
        "chat-model",
    )
    choose_provider(dialog, "custom")  # in the same dialog
    assert url_edit(dialog).text() == "http://127.0.0.1:8811/v1"
    assert dialog.values().chat_model == "chat-model"

    choose_provider(dialog, "ollama")
    workspace.settings = dialog.values()  # saved with Ollama: a later dialog brings it back
    again = open_dialog(qtbot, workspace)
    choose_provider(again, "custom")
    assert url_edit(again).text() == "http://127.0.0.1:8811/v1"
    values = again.values()
    assert (values.provider, values.base_url, values.chat_model) == (
        "custom",
        "http://127.0.0.1:8811/v1",
        "chat-model",
    )


def test_editing_the_url_switches_to_custom(qtbot: QtBot, workspace: Workspace) -> None:
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, "http://gpu-box:8000/v1")
    assert provider_combo(dialog).currentData() == "custom"
    values = dialog.values()
    assert (values.provider, values.base_url) == ("custom", "http://gpu-box:8000/v1")
    assert values.chat_model == "gpt-4o-mini"  # switching to Custom keeps the models


def test_invalid_url_disables_ok(qtbot: QtBot, workspace: Workspace) -> None:
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, "gpu-box:8000")
    assert result_label(dialog).text() == "The URL must start with http:// or https://."
    assert not child(dialog, QPushButton, "testConnectionButton").isEnabled()
    point_at(qtbot, dialog, "http://gpu-box:8000/v1")
    assert result_label(dialog).text() == ""
    assert child(dialog, QPushButton, "testConnectionButton").isEnabled()


def test_environment_overrides_are_shown(
    qtbot: QtBot, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    dialog = open_dialog(qtbot, workspace)
    assert "overrides" in child(dialog, QLabel, "baseUrlEnvNote").text()
    assert child(dialog, QLabel, "baseUrlEnvNote").isVisible()
    assert "overrides" in child(dialog, QLabel, "apiKeyEnvNote").text()
    assert key_edit(dialog).text() == ""  # the environment's key is not shown


def test_accept_stores_key_in_keyring_not_in_settings(
    qtbot: QtBot, workspace: Workspace, memory_keyring: MemoryKeyring, data_dir: Path
) -> None:
    dialog = open_dialog(qtbot, workspace)
    qtbot.keyClicks(key_edit(dialog), "sk-secret-123456")
    dialog.accept()

    assert dialog.result() == SettingsDialog.DialogCode.Accepted
    assert memory_keyring.passwords[KEY] == "sk-secret-123456"
    assert workspace.credentials.api_key() == "sk-secret-123456"
    text = settings_file(data_dir).read_text(encoding="utf-8")
    assert "sk-secret" not in text
    assert saved_settings(data_dir)["provider"] == "openai"


def test_show_key_toggle(qtbot: QtBot, workspace: Workspace) -> None:
    dialog = open_dialog(qtbot, workspace)
    action = key_edit(dialog).actions()[-1]
    assert action.objectName() == "showKeyAction"
    action.trigger()
    assert key_edit(dialog).echoMode() == QLineEdit.EchoMode.Normal
    action.trigger()
    assert key_edit(dialog).echoMode() == QLineEdit.EchoMode.Password


def test_remove_key_deletes_it(
    qtbot: QtBot, workspace: Workspace, memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.passwords[KEY] = "sk-old"
    dialog = open_dialog(qtbot, workspace)
    remove = child(dialog, QPushButton, "removeKeyButton")
    assert remove.isEnabled()
    qtbot.mouseClick(remove, Qt.MouseButton.LeftButton)
    assert key_edit(dialog).text() == ""
    assert "removed" in child(dialog, QLabel, "keySourceLabel").text()
    assert KEY in memory_keyring.passwords  # not before OK
    dialog.accept()
    assert KEY not in memory_keyring.passwords
    assert workspace.credentials.api_key() is None


def test_cancel_discards_everything(
    qtbot: QtBot, workspace: Workspace, memory_keyring: MemoryKeyring, data_dir: Path
) -> None:
    memory_keyring.passwords[KEY] = "sk-old"
    dialog = open_dialog(qtbot, workspace)
    choose_provider(dialog, "ollama")
    qtbot.mouseClick(child(dialog, QPushButton, "removeKeyButton"), Qt.MouseButton.LeftButton)
    dialog.reject()
    assert workspace.settings.provider == "openai"
    assert memory_keyring.passwords[KEY] == "sk-old"
    assert not settings_file(data_dir).exists()


def test_failing_keyring_keeps_key_for_session(
    qtbot: QtBot, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyring.set_keyring(keyring.backends.fail.Keyring())  # restored by memory_keyring
    dialog = open_dialog(qtbot, workspace)
    warning = child(dialog, QLabel, "keyringWarning")
    assert warning.isVisible()
    assert "this session only" in warning.text()

    warnings: list[str] = []
    monkeypatch.setattr(dialog, "_warn", warnings.append)
    qtbot.keyClicks(key_edit(dialog), "sk-session-only")
    dialog.accept()

    assert len(warnings) == 1
    assert "session only" in warnings[0]
    assert dialog.result() == SettingsDialog.DialogCode.Accepted
    assert workspace.credentials.api_key() == "sk-session-only"


def test_test_connection_succeeds(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    fake_openai.required_api_key = "sk-typed-key"
    fake_openai.models = ("llama3.1", "nomic-embed-text", "qwen2.5")
    dialog = open_dialog(qtbot, workspace)
    choose_provider(dialog, "ollama")
    point_at(qtbot, dialog, fake_openai.base_url)
    qtbot.keyClicks(key_edit(dialog), "sk-typed-key")  # not saved yet, but used for the test
    button = child(dialog, QPushButton, "testConnectionButton")

    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert not button.isEnabled()
    assert button.text() == "Testing…"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # disabled: no second request

    qtbot.waitUntil(lambda: "Connected" in result_label(dialog).text(), timeout=10_000)
    assert (
        result_label(dialog).text() == f"Connected to {fake_openai.base_url}: 3 models available."
    )
    assert button.isEnabled()
    assert button.text() == "&Test Connection"
    assert len(fake_openai.requests_to("/models")) == 1
    assert workspace.credentials.api_key() is None  # testing stores nothing


def test_test_connection_second_start_is_ignored(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, fake_openai.base_url)
    button = child(dialog, QPushButton, "testConnectionButton")
    button.clicked.emit()
    button.clicked.emit()  # a second click already queued when the first disabled the button
    qtbot.waitUntil(lambda: "Connected" in result_label(dialog).text(), timeout=10_000)
    assert len(fake_openai.requests_to("/models")) == 1


def test_test_connection_reports_unreachable_server_without_blocking(
    qtbot: QtBot, workspace: Workspace
) -> None:
    with FakeOpenAI() as server:
        url = server.base_url
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, url)
    button = child(dialog, QPushButton, "testConnectionButton")

    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    # The click returned before the answer: the probe runs off the GUI thread.
    assert "Contacting the server" in result_label(dialog).text()

    qtbot.waitUntil(lambda: "Could not reach" in result_label(dialog).text(), timeout=10_000)
    assert url in result_label(dialog).text()
    assert button.isEnabled()


def test_test_connection_reports_rejected_key(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    fake_openai.required_api_key = "sk-right"
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, fake_openai.base_url)
    qtbot.keyClicks(key_edit(dialog), "sk-wrong-key")
    qtbot.mouseClick(child(dialog, QPushButton, "testConnectionButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "rejected the API key" in result_label(dialog).text(), timeout=10_000)
    assert "sk-wrong-key" not in result_label(dialog).text()


def test_refresh_models_fills_combos_keeping_typed_values(
    qtbot: QtBot, workspace: Workspace, fake_openai: FakeOpenAI
) -> None:
    fake_openai.models = ("llama3.1", "nomic-embed-text", "qwen2.5")
    dialog = open_dialog(qtbot, workspace)
    point_at(qtbot, dialog, fake_openai.base_url)
    chat = child(dialog, QComboBox, "chatModelCombo")
    embedding = child(dialog, QComboBox, "embeddingModelCombo")
    chat.setEditText("my-model")
    embedding.setCurrentIndex(1)

    qtbot.mouseClick(child(dialog, QPushButton, "refreshModelsButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: chat.count() == 3, timeout=10_000)

    assert [chat.itemText(i) for i in range(chat.count())] == [
        "llama3.1",
        "qwen2.5",
        "nomic-embed-text",
    ]
    assert [embedding.itemText(i) for i in range(embedding.count())] == [
        BUILT_IN_EMBEDDINGS,
        NO_EMBEDDINGS,
        "nomic-embed-text",
        "llama3.1",
        "qwen2.5",
    ]
    assert chat.currentText() == "my-model"
    assert embedding.currentText() == NO_EMBEDDINGS
    assert dialog.values().embedding_model == ""
    assert "not the chat model" in result_label(dialog).text()  # my-model is not offered


def test_memory_options_round_trip(qtbot: QtBot, workspace: Workspace, data_dir: Path) -> None:
    dialog = open_dialog(qtbot, workspace)
    child(dialog, QCheckBox, "autoMemoriesCheck").setChecked(False)
    child(dialog, QSpinBox, "memoriesPerPromptSpin").setValue(12)
    child(dialog, QSpinBox, "decayHalfLifeSpin").setValue(400)
    child(dialog, QComboBox, "embeddingModelCombo").setCurrentIndex(1)
    dialog.accept()

    saved = saved_settings(data_dir)
    assert saved["auto_memories"] is False
    assert saved["memories_per_prompt"] == 12
    assert saved["decay_half_life_days"] == 400
    assert saved["embedding_model"] == ""
    assert workspace.settings.memories_per_prompt == 12

    reopened = Workspace.open(data_dir)
    try:
        again = open_dialog(qtbot, reopened)
        assert not child(again, QCheckBox, "autoMemoriesCheck").isChecked()
        assert child(again, QSpinBox, "memoriesPerPromptSpin").value() == 12
        assert child(again, QSpinBox, "decayHalfLifeSpin").value() == 400
        assert child(again, QComboBox, "embeddingModelCombo").currentText() == NO_EMBEDDINGS
    finally:
        reopened.close()


def test_built_in_embedder_is_the_default_and_stays_with_any_provider(
    qtbot: QtBot, workspace: Workspace
) -> None:
    assert workspace.settings.embedding_model == LOCAL_EMBEDDING_MODEL
    dialog = open_dialog(qtbot, workspace)
    combo = child(dialog, QComboBox, "embeddingModelCombo")
    assert combo.currentText() == BUILT_IN_EMBEDDINGS
    for provider in ("ollama", "openai", "lmstudio"):
        choose_provider(dialog, provider)
        assert dialog.values().embedding_model == LOCAL_EMBEDDING_MODEL


def test_pages_and_a_problem_on_another_page_keeps_the_dialog_open(
    qtbot: QtBot, workspace: Workspace, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog = open_dialog(qtbot, workspace)
    tabs = child(dialog, QStackedWidget, "settingsPages")
    listed = child(dialog, QListWidget, "settingsPageList")
    titles = [listed.item(i).text() for i in range(listed.count())]
    assert titles == [
        "Model",
        "Model options",
        "Memory",
        "Remembering",
        "Appearance",
        "MCP servers",
    ]
    url_edit(dialog).setText("ftp://example.org")
    tabs.setCurrentIndex(titles.index("Memory"))
    child(dialog, QSpinBox, "memoriesPerPromptSpin").setValue(11)
    warnings: list[str] = []
    monkeypatch.setattr(dialog, "_warn", warnings.append)

    dialog.accept()  # as Enter would, though OK is disabled

    assert warnings == ["The URL must start with http:// or https://."]
    assert tabs.currentIndex() == 0  # the page with the problem
    assert dialog.isVisible()
    assert not settings_file(data_dir).exists()
    url_edit(dialog).setText("http://127.0.0.1:9/v1")
    dialog.accept()
    assert dialog.result() == SettingsDialog.DialogCode.Accepted
    assert saved_settings(data_dir)["memories_per_prompt"] == 11
