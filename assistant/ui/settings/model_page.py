"""The Model page of the settings: the provider, its server and models, and the API key."""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QComboBox, QGroupBox, QLineEdit, QVBoxLayout, QWidget

from assistant.credentials import Credentials
from assistant.settings import (
    BASE_URL_ENV,
    LOCAL_EMBEDDING_MODEL,
    PROVIDERS,
    ProviderName,
    Settings,
)
from assistant.ui.settings.form import WARNING_COLOR, SettingsForm
from assistant.ui.settings.key_field import KeyBox
from assistant.ui.settings.page import SettingsPage
from assistant.ui.settings.server_probe import ServerProbe

NO_EMBEDDINGS = "None (keyword-only memory)"
BUILT_IN_EMBEDDINGS = "Built-in (all-MiniLM-L6-v2, on this computer)"


class ModelPage(SettingsPage):
    """The connection (provider, URL, models, a probe of the server) and the API key."""

    title = "Model"
    fields = (
        "provider",
        "base_url",
        "chat_model",
        "custom_base_url",
        "custom_chat_model",
        "embedding_model",
    )

    def __init__(
        self, settings: Settings, credentials: Credentials, parent: QWidget | None = None
    ) -> None:
        """`settings` are those in use (a probe copies them with the values shown)."""
        super().__init__(parent)
        self._settings = settings
        self._last_provider: str = settings.provider
        # The last Custom URL and chat model (kept while a preset is shown).
        self._custom = (settings.custom_base_url, settings.custom_chat_model)
        self.key = KeyBox(credentials, self)
        self.key.edit.textChanged.connect(self._on_inputs_changed)
        layout = QVBoxLayout(self)
        layout.addWidget(self._build_connection())
        layout.addWidget(self.key)
        layout.addStretch(1)
        chain: list[QWidget] = [
            self.provider,
            self.base_url,
            self.chat_model,
            self.embedding_model,
            self.probe.refresh,
            self.probe.test,
            self.key.edit,
            self.key.remove,
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    def _build_connection(self) -> QGroupBox:
        box = QGroupBox("Connection", self)
        self.form = form = SettingsForm(box)

        self.provider = QComboBox(box)
        self.provider.setObjectName("providerCombo")
        for name, provider in PROVIDERS.items():
            self.provider.addItem(provider.label, name)
        self.provider.currentIndexChanged.connect(self._on_provider_changed)
        form.add_row(
            "&Provider:",
            self.provider,
            "The kind of server that runs the model. OpenAI is a cloud service; Ollama and "
            "LM Studio run models on this computer; Custom URL is any OpenAI-compatible server.",
        )

        self.base_url = QLineEdit(box)
        self.base_url.setObjectName("baseUrlEdit")
        self.base_url.setMinimumWidth(340)
        self.base_url.setClearButtonEnabled(True)
        self.base_url.textEdited.connect(self._on_url_edited)
        self.base_url.textChanged.connect(self._on_inputs_changed)
        form.add_row(
            "Server &URL:",
            self.base_url,
            "The address of the OpenAI-compatible API, usually ending in /v1. "
            "Editing it switches the provider to Custom URL.",
        )
        env_url = os.environ.get(BASE_URL_ENV)
        form.add_note(
            f"{BASE_URL_ENV} is set in the environment ({env_url}) and overrides this URL."
            if env_url
            else "",
            WARNING_COLOR,
            name="baseUrlEnvNote",
        )

        self.chat_model = _model_combo(box, "chatModelCombo")
        form.add_row(
            "C&hat model:", self.chat_model, "The model that writes the replies, e.g. gpt-4o-mini."
        )
        self.embedding_model = _model_combo(box, "embeddingModelCombo")
        self._add_embedding_choices()
        form.add_row(
            "&Embedding model:",
            self.embedding_model,
            "The model that turns memories and messages into vectors to find related ones by "
            "meaning. The built-in one needs no server and stays when you change providers; "
            "without one, search matches keywords only.",
        )

        self.probe = ServerProbe(
            lambda: self.edit(self._settings),
            self.key.typed,
            lambda: self.chat_model.currentText().strip(),
            box,
        )
        # A result said of other values goes when they change (a problem with the URL stays).
        self.chat_model.currentTextChanged.connect(self._on_inputs_changed)
        self.embedding_model.currentTextChanged.connect(self._on_inputs_changed)
        self.probe.listed.connect(self._fill_models)
        self.probe.busy_changed.connect(self._update_url_state)
        self.probe.resized.connect(self.resized)
        form.add_row("", self.probe)
        return box

    def _add_embedding_choices(self) -> None:
        self.embedding_model.addItem(BUILT_IN_EMBEDDINGS, LOCAL_EMBEDDING_MODEL)
        self.embedding_model.addItem(NO_EMBEDDINGS, "")

    # values

    def load(self, settings: Settings) -> None:
        """Show the connection settings and the stored key."""
        with QSignalBlocker(self.provider):
            self.provider.setCurrentIndex(max(0, self.provider.findData(settings.provider)))
        self.base_url.setText(settings.base_url or PROVIDERS[settings.provider].base_url)
        self.chat_model.setEditText(settings.chat_model)
        self._custom = (settings.custom_base_url, settings.custom_chat_model)
        self._last_provider = settings.provider
        if settings.embedding_model == LOCAL_EMBEDDING_MODEL:
            self.embedding_model.setCurrentIndex(0)
        elif settings.embedding_model:
            self.embedding_model.setEditText(settings.embedding_model)
        else:
            self.embedding_model.setCurrentIndex(1)
        self.key.load()
        self.key.set_provider(settings.provider)
        self._update_url_state()

    def edit(self, settings: Settings) -> Settings:
        """`settings` with the provider, URL and models shown."""
        provider = self._provider_name()
        url = self.base_url.text().strip()
        if provider != "custom" and url == PROVIDERS[provider].base_url:
            url = ""  # follow the preset
        embedding = self.embedding_model.currentText().strip()
        if embedding == NO_EMBEDDINGS:
            embedding = ""
        elif embedding == BUILT_IN_EMBEDDINGS:
            embedding = LOCAL_EMBEDDING_MODEL
        chat_model = self.chat_model.currentText().strip()
        custom_url, custom_model = (url, chat_model) if provider == "custom" else self._custom
        return dataclasses.replace(
            settings,
            provider=provider,
            base_url=url,
            chat_model=chat_model,
            custom_base_url=custom_url,
            custom_chat_model=custom_model,
            embedding_model=embedding,
        )

    def problem(self) -> str | None:
        """What is wrong with the server URL, if anything."""
        return url_problem(self.base_url.text().strip())

    def save(self, warn: Callable[[str], None]) -> None:
        """Store the key (first: the embedder built when the settings are saved uses it)."""
        self.key.store(warn)

    def _provider_name(self) -> ProviderName:
        name: ProviderName = self.provider.currentData()
        return name

    # reacting to edits

    def _on_provider_changed(self, _index: int) -> None:
        provider = self._provider_name()
        self.key.set_provider(provider)
        if provider == self._last_provider:
            return
        if self._last_provider == "custom":  # leaving it: remember what it was
            self._custom = (self.base_url.text().strip(), self.chat_model.currentText().strip())
        self._last_provider = provider
        if provider == "custom":
            url, model = self._custom
            if url:
                self.base_url.setText(url)
            if model:
                self.chat_model.setEditText(model)
            self.base_url.setFocus()
            self.base_url.selectAll()
        else:
            self.base_url.setText(PROVIDERS[provider].base_url)
        preset = PROVIDERS[provider]
        if preset.chat_model:
            self.chat_model.setEditText(preset.chat_model)
            if self.embedding_model.currentText() != BUILT_IN_EMBEDDINGS:  # it stays
                self.embedding_model.setEditText(preset.embedding_model)

    def _on_url_edited(self, text: str) -> None:
        provider = self._provider_name()
        if provider != "custom" and text.strip() != PROVIDERS[provider].base_url:
            with QSignalBlocker(self.provider):
                self.provider.setCurrentIndex(self.provider.findData("custom"))
            self._last_provider = "custom"
            self.key.set_provider("custom")

    def _on_inputs_changed(self, _text: str) -> None:
        self._update_url_state()

    def _update_url_state(self) -> None:
        """Say what is wrong with the URL in the probe's line (under the buttons, so that
        nothing above them moves while the URL is typed); enable OK and the probe if nothing."""
        problem = self.problem()
        self.probe.show_problem(problem)
        self.usable_changed.emit(problem is None)
        self.probe.set_usable(problem is None)

    def _fill_models(self, models: list[str]) -> None:
        """List `models` in both combos, keeping what is typed in them; the only chat model
        offered is chosen (a local server often offers just the one it has loaded)."""
        chat = self.chat_model.currentText()
        embedding = self.embedding_model.currentText()
        embedders = [m for m in models if "embed" in m.lower()]
        others = [m for m in models if m not in embedders]
        if len(others) == 1:
            chat = others[0]
        with QSignalBlocker(self.chat_model), QSignalBlocker(self.embedding_model):
            self.chat_model.clear()
            self.chat_model.addItems(others + embedders)
            self.embedding_model.clear()
            self._add_embedding_choices()
            self.embedding_model.addItems(embedders + others)
        self.chat_model.setEditText(chat)
        self.embedding_model.setEditText(embedding)


def url_problem(url: str) -> str | None:
    """What is wrong with a server URL, or None."""
    if not url:
        return "Enter the server's URL, e.g. http://127.0.0.1:8080/v1."
    scheme, _, rest = url.partition("://")
    if scheme not in ("http", "https"):
        return "The URL must start with http:// or https://."
    if not rest:
        return f"Enter the server's address after {scheme}://."
    return None


def _model_combo(parent: QWidget, name: str) -> QComboBox:
    combo = QComboBox(parent)
    combo.setObjectName(name)
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(24)
    return combo
