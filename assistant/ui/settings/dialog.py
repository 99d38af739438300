"""The settings dialog: model server, API key and memory options, saved only on OK."""

from __future__ import annotations

import dataclasses
import itertools
import os

from PySide6.QtCore import QPointF, QRectF, QSignalBlocker, QSize, Qt
from PySide6.QtGui import (
    QAction,
    QColor,
    QIcon,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from assistant.credentials import API_KEY_ENV, Credentials, backend_name
from assistant.errors import AssistantError, CredentialError
from assistant.settings import (
    BASE_URL_ENV,
    DEFAULT_PROMPT_BUDGET,
    LOCAL_EMBEDDING_MODEL,
    PROMPT_SHARE,
    PROVIDERS,
    ProviderName,
    Settings,
)
from assistant.ui import theme
from assistant.ui.jobs import Progress, run_job
from assistant.workspace import Workspace

NO_EMBEDDINGS = "None (keyword-only memory)"
BUILT_IN_EMBEDDINGS = "Built-in (all-MiniLM-L6-v2, on this computer)"

# The settings this dialog edits; everything else in `Settings` is left as it is.
EDITED_FIELDS = (
    "provider",
    "base_url",
    "chat_model",
    "embedding_model",
    "auto_memories",
    "memories_per_prompt",
    "decay_half_life_days",
    "prompt_budget_tokens",
    "reply_max_tokens",
)
# A connection test should not hang for the full chat timeout on an unreachable host.
PROBE_TIMEOUT = 15.0

_OK_COLOR = "#2e7d32"
_WARNING_COLOR = "#9a6700"


class _DialogCredentials(Credentials):
    """The key typed in the dialog, for a test before it is stored; the environment still wins."""

    def __init__(self, key: str | None) -> None:
        super().__init__()
        self._key = key

    def api_key(self) -> str | None:
        """The environment's key, else the dialog's."""
        return os.environ.get(API_KEY_ENV) or self._key


def _eye_icon(color: QColor, *, crossed: bool) -> QIcon:
    """An eye (or a crossed-out eye) for the show/hide key action, in the text colour."""
    for name in ("view-conceal-symbolic", "view-hidden") if crossed else ("view-reveal-symbolic",):
        if QIcon.hasThemeIcon(name):
            return QIcon.fromTheme(name)
    pixmap = QPixmap(32, 32)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(color, 2.4))
    outline = QPainterPath(QPointF(3, 16))
    outline.quadTo(QPointF(16, 3), QPointF(29, 16))
    outline.quadTo(QPointF(16, 29), QPointF(3, 16))
    painter.drawPath(outline)
    painter.setBrush(color)
    painter.drawEllipse(QRectF(11.5, 11.5, 9, 9))
    if crossed:
        painter.drawLine(QPointF(6, 27), QPointF(26, 5))
    painter.end()
    return QIcon(pixmap)


def _url_problem(url: str) -> str | None:
    """What is wrong with a server URL, or None."""
    if not url:
        return "Enter the server's URL, e.g. http://127.0.0.1:8080/v1."
    scheme, _, rest = url.partition("://")
    if scheme not in ("http", "https"):
        return "The URL must start with http:// or https://."
    if not rest:
        return f"Enter the server's address after {scheme}://."
    return None


class SettingsDialog(QDialog):
    """Preferences: the model server, the API key and memory; nothing is saved until OK."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self._credentials = workspace.credentials
        self._busy_button: QPushButton | None = None
        self._idle_text = ""
        self._remove_requested = False
        self._original_key = ""
        self._last_provider: str = workspace.settings.provider

        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")

        layout = QVBoxLayout(self)
        layout.setSpacing(12)
        boxes = [self._build_connection(), self._build_key(), self._build_memory()]
        for box in boxes:
            layout.addWidget(box)
        layout.addStretch(1)
        _align_labels(boxes)

        self._buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self._buttons.accepted.connect(self.accept)
        self._buttons.rejected.connect(self.reject)
        mcp = self._buttons.addButton("MCP servers…", QDialogButtonBox.ButtonRole.ActionRole)
        mcp.setObjectName("mcpServersButton")
        mcp.clicked.connect(self._open_mcp)
        layout.addWidget(self._buttons)

        self._load(workspace.settings)
        self._set_tab_order()
        # A fixed minimum: the layout would otherwise change it whenever a note appears, and
        # each change goes to the window system. Notes that need room grow the dialog instead.
        self.ensurePolished()
        layout.activate()
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.setMinimumSize(layout.totalMinimumSize())

    def _open_mcp(self) -> None:
        from assistant.ui.settings.mcp_page import McpDialog

        McpDialog(self._workspace, self).exec()

    def sizeHint(self) -> QSize:  # noqa: N802 - a Qt override
        """Wide enough for long URLs and model names without stretching the window."""
        hint = super().sizeHint()
        return QSize(max(hint.width(), 580), hint.height())

    # building

    def _build_connection(self) -> QGroupBox:
        box = QGroupBox("Connection", self)
        form = _form(box)

        self._provider = QComboBox(box)
        self._provider.setObjectName("providerCombo")
        for name, provider in PROVIDERS.items():
            self._provider.addItem(provider.label, name)
        self._provider.setToolTip(
            "The kind of server that runs the model. OpenAI is a cloud service; Ollama and "
            "LM Studio run models on this computer; Custom URL is any OpenAI-compatible server."
        )
        self._provider.currentIndexChanged.connect(self._on_provider_changed)
        form.addRow("&Provider:", self._provider)

        self._base_url = QLineEdit(box)
        self._base_url.setObjectName("baseUrlEdit")
        self._base_url.setMinimumWidth(340)
        self._base_url.setClearButtonEnabled(True)
        self._base_url.setToolTip(
            "The address of the OpenAI-compatible API, usually ending in /v1. "
            "Editing it switches the provider to Custom URL."
        )
        self._base_url.textEdited.connect(self._on_url_edited)
        self._base_url.textChanged.connect(self._on_inputs_changed)
        form.addRow("Server &URL:", self._base_url)

        self._url_error = _note(box, theme.danger(box.palette()).name())
        self._url_error.setObjectName("baseUrlError")
        form.addRow("", self._url_error)
        self._connection_form = form

        env_url = os.environ.get(BASE_URL_ENV)
        self._url_env_note = _note(
            box,
            _WARNING_COLOR,
            f"{BASE_URL_ENV} is set in the environment ({env_url}) and overrides this URL."
            if env_url
            else "",
        )
        self._url_env_note.setObjectName("baseUrlEnvNote")
        _add_note(form, self._url_env_note)

        self._chat_model = _model_combo(box)
        self._chat_model.setObjectName("chatModelCombo")
        self._chat_model.setToolTip("The model that writes the replies, e.g. gpt-4o-mini.")
        form.addRow("C&hat model:", self._chat_model)

        self._embedding_model = _model_combo(box)
        self._embedding_model.setObjectName("embeddingModelCombo")
        self._embedding_model.addItem(BUILT_IN_EMBEDDINGS, LOCAL_EMBEDDING_MODEL)
        self._embedding_model.addItem(NO_EMBEDDINGS, "")
        self._embedding_model.setToolTip(
            "The model that turns memories and messages into vectors to find related ones by "
            "meaning. The built-in one needs no server and stays when you change providers; "
            "without one, search matches keywords only."
        )
        form.addRow("&Embedding model:", self._embedding_model)
        self._add_server_rows(box, form)
        return box

    def _add_server_rows(self, box: QGroupBox, form: QFormLayout) -> None:
        """The Refresh models and Test connection buttons and the result line."""
        self._refresh = QPushButton("&Refresh models", box)
        self._refresh.setObjectName("refreshModelsButton")
        self._refresh.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_BrowserReload))
        self._refresh.setToolTip("Ask the server which models it offers and list them above.")
        self._refresh.clicked.connect(self._on_refresh_clicked)
        self._test = QPushButton("&Test connection", box)
        self._test.setObjectName("testConnectionButton")
        self._test.setToolTip(
            "Check the URL and the API key shown in this dialog (before saving them) by "
            "listing the server's models."
        )
        self._test.clicked.connect(self._on_test_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self._refresh)
        buttons.addWidget(self._test)
        buttons.addStretch(1)
        form.addRow("", buttons)

        self._result_icon = QLabel(box)
        self._result_icon.setFixedSize(16, 16)
        self._result = QLabel(box)
        self._result.setObjectName("connectionResult")
        self._result.setWordWrap(True)
        self._result.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._result.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        result_row = QHBoxLayout()
        result_row.setSpacing(6)
        result_row.addWidget(self._result_icon, 0, Qt.AlignmentFlag.AlignTop)
        result_row.addWidget(self._result, 1)
        self._result_row = QWidget(box)
        self._result_row.setLayout(result_row)
        result_row.setContentsMargins(0, 0, 0, 0)
        form.addRow("", self._result_row)
        form.setRowVisible(self._result_row, False)

    def _build_key(self) -> QGroupBox:
        box = QGroupBox("API key", self)
        form = _form(box)

        self._key = QLineEdit(box)
        self._key.setObjectName("apiKeyEdit")
        self._key.setEchoMode(QLineEdit.EchoMode.Password)
        self._key.setPlaceholderText("Not needed for Ollama or LM Studio")
        self._key.setToolTip(
            "The secret key of your account at the provider (sk-…). It is kept in the system "
            "keyring, never in the settings file."
        )
        self._key.textChanged.connect(self._on_key_changed)
        self._key.textChanged.connect(self._on_inputs_changed)
        color = self.palette().color(self._key.foregroundRole())
        self._show_icon = _eye_icon(color, crossed=False)
        self._hide_icon = _eye_icon(color, crossed=True)
        self._show_key = QAction(self._show_icon, "Show key", self._key)
        self._show_key.setObjectName("showKeyAction")
        self._show_key.setCheckable(True)
        self._show_key.setToolTip("Show the key")
        self._show_key.toggled.connect(self._on_show_key_toggled)
        self._key.addAction(self._show_key, QLineEdit.ActionPosition.TrailingPosition)

        self._remove_key = QPushButton("Re&move key", box)
        self._remove_key.setObjectName("removeKeyButton")
        self._remove_key.setToolTip("Delete the saved key from the keyring when you press OK.")
        self._remove_key.clicked.connect(self._on_remove_key_clicked)
        key_row = QHBoxLayout()
        key_row.addWidget(self._key, 1)
        key_row.addWidget(self._remove_key)
        key_label = QLabel("API &key:", box)
        key_label.setBuddy(self._key)
        form.addRow(key_label, key_row)

        self._key_source = _note(box)
        self._key_source.setObjectName("keySourceLabel")
        form.addRow("", self._key_source)

        self._keyring_warning = _note(
            box,
            _WARNING_COLOR,
            "No system keyring is available: the key will be kept in memory for this session "
            "only, and asked for again next time.",
        )
        self._keyring_warning.setObjectName("keyringWarning")
        form.addRow("", self._keyring_warning)
        form.setRowVisible(self._keyring_warning, not self._credentials.keyring_available())

        self._key_env_note = _note(
            box,
            _WARNING_COLOR,
            f"{API_KEY_ENV} is set in the environment and overrides the key saved here."
            if os.environ.get(API_KEY_ENV)
            else "",
        )
        self._key_env_note.setObjectName("apiKeyEnvNote")
        _add_note(form, self._key_env_note)
        return box

    def _build_memory(self) -> QGroupBox:
        box = QGroupBox("Memory", self)
        form = _form(box)

        self._auto_memories = QCheckBox("Remember things &automatically", box)
        self._auto_memories.setObjectName("autoMemoriesCheck")
        self._auto_memories.setToolTip(
            "After each reply, pick out facts, preferences and plans worth keeping and save "
            "them as memories. You can always ask the assistant to remember something."
        )
        form.addRow("", self._auto_memories)

        self._per_prompt = QSpinBox(box)
        self._per_prompt.setObjectName("memoriesPerPromptSpin")
        self._per_prompt.setRange(1, 20)
        self._per_prompt.setMinimumWidth(110)
        self._per_prompt.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self._per_prompt.setToolTip(
            "How many related memories are given to the model with each message "
            "(pinned memories are always given)."
        )
        form.addRow("Memories per pr&ompt:", self._per_prompt)

        self._half_life = QSpinBox(box)
        self._half_life.setObjectName("decayHalfLifeSpin")
        self._half_life.setRange(7, 3650)
        self._half_life.setSingleStep(30)
        self._half_life.setSuffix(" days")
        self._half_life.setMinimumWidth(110)
        self._half_life.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self._half_life.setToolTip(
            "An unpinned memory that is not used loses half its importance in this time; "
            "below 0.1 it is archived (kept, never deleted). Pinned memories never fade. "
            "The memory timeline shows each change."
        )
        form.addRow("Unused memories &fade by half in:", self._half_life)

        self._prompt_budget = _token_spin(box, "promptBudgetSpin", 0, 1_000_000, 500)
        self._prompt_budget.setSpecialValueText("Automatic")
        self._prompt_budget.setToolTip(
            "How much conversation and memory is sent with each message. Automatic uses "
            f"{PROMPT_SHARE:.0%} of the model's context window when the server tells it (else "
            f"{DEFAULT_PROMPT_BUDGET:,} tokens). Never more than fits the model; older messages "
            "are summarized."
        )
        form.addRow("Prompt &budget:", self._prompt_budget)

        self._reply_tokens = _token_spin(box, "replyMaxTokensSpin", 64, 200_000, 256)
        self._reply_tokens.setToolTip(
            "The longest reply the model may write. A reply that reaches it is marked "
            '"cut off". Small local models have room for less.'
        )
        form.addRow("Reply &length:", self._reply_tokens)
        return box

    def _set_tab_order(self) -> None:
        chain: list[QWidget] = [
            self._provider,
            self._base_url,
            self._chat_model,
            self._embedding_model,
            self._refresh,
            self._test,
            self._key,
            self._remove_key,
            self._auto_memories,
            self._per_prompt,
            self._half_life,
            self._prompt_budget,
            self._reply_tokens,
            *self._buttons.buttons(),
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    # values

    def _load(self, settings: Settings) -> None:
        """Show `settings` and the stored key."""
        with QSignalBlocker(self._provider):
            self._provider.setCurrentIndex(max(0, self._provider.findData(settings.provider)))
        self._base_url.setText(settings.base_url or PROVIDERS[settings.provider].base_url)
        self._chat_model.setEditText(settings.chat_model)
        if settings.embedding_model == LOCAL_EMBEDDING_MODEL:
            self._embedding_model.setCurrentIndex(0)
        elif settings.embedding_model:
            self._embedding_model.setEditText(settings.embedding_model)
        else:
            self._embedding_model.setCurrentIndex(1)
        self._auto_memories.setChecked(settings.auto_memories)
        self._per_prompt.setValue(settings.memories_per_prompt)
        self._half_life.setValue(round(settings.decay_half_life_days))
        self._prompt_budget.setValue(settings.prompt_budget_tokens)
        self._reply_tokens.setValue(settings.reply_max_tokens)

        # The environment's key is not ours to show or store; only a saved one is filled in.
        if not os.environ.get(API_KEY_ENV):
            self._original_key = self._credentials.api_key() or ""
        self._key.setText(self._original_key)
        self._update_key_state()
        self._update_url_state()

    def values(self) -> Settings:
        """The settings as edited in the dialog (a copy; nothing is saved)."""
        provider = self._provider_name()
        url = self._base_url.text().strip()
        if provider != "custom" and url == PROVIDERS[provider].base_url:
            url = ""  # follow the preset
        embedding = self._embedding_model.currentText().strip()
        if embedding == NO_EMBEDDINGS:
            embedding = ""
        elif embedding == BUILT_IN_EMBEDDINGS:
            embedding = LOCAL_EMBEDDING_MODEL
        return dataclasses.replace(
            self._workspace.settings,
            provider=provider,
            base_url=url,
            chat_model=self._chat_model.currentText().strip(),
            embedding_model=embedding,
            auto_memories=self._auto_memories.isChecked(),
            memories_per_prompt=self._per_prompt.value(),
            decay_half_life_days=float(self._half_life.value()),
            prompt_budget_tokens=self._prompt_budget.value(),
            reply_max_tokens=self._reply_tokens.value(),
            ui_state=dict(self._workspace.settings.ui_state),
        )

    def _provider_name(self) -> ProviderName:
        name: ProviderName = self._provider.currentData()
        return name

    def _typed_key(self) -> str | None:
        return self._key.text().strip() or None

    # accepting

    def accept(self) -> None:
        """Save the settings and the key, then close; on a failure to save, stay open."""
        problem = _url_problem(self._base_url.text().strip())
        if problem is not None:
            self._warn(problem)
            return
        self._store_key()  # first, so the embedder built by save_settings uses the new key
        settings = self._workspace.settings
        before = {name: getattr(settings, name) for name in EDITED_FIELDS}
        edited = self.values()
        for name in EDITED_FIELDS:
            setattr(settings, name, getattr(edited, name))
        try:
            self._workspace.save_settings()
        except (AssistantError, OSError) as exc:
            for name, value in before.items():
                setattr(settings, name, value)
            self._warn(f"The settings could not be saved: {exc}")
            return
        super().accept()

    def _store_key(self) -> None:
        """Store a new key, or delete the saved one if it was removed; problems are shown."""
        key = self._key.text().strip()
        try:
            if key and key != self._original_key:
                self._credentials.set_api_key(key)
            elif not key and (self._remove_requested or self._original_key):
                self._credentials.delete_api_key()
        except CredentialError as exc:
            self._warn(str(exc))
        self._original_key = key
        self._remove_requested = False

    def _warn(self, text: str) -> None:
        """Tell the user about a problem (a separate method so tests can replace it)."""
        QMessageBox.warning(self, "Settings", text)

    # reacting to edits

    def _on_provider_changed(self, _index: int) -> None:
        provider = self._provider_name()
        if provider == self._last_provider:
            return
        self._last_provider = provider
        if provider == "custom":
            self._base_url.setFocus()
            self._base_url.selectAll()
        else:
            self._base_url.setText(PROVIDERS[provider].base_url)
        preset = PROVIDERS[provider]
        if preset.chat_model:
            self._chat_model.setEditText(preset.chat_model)
            if self._embedding_model.currentText() != BUILT_IN_EMBEDDINGS:  # it stays
                self._embedding_model.setEditText(preset.embedding_model)

    def _on_url_edited(self, text: str) -> None:
        provider = self._provider_name()
        if provider != "custom" and text.strip() != PROVIDERS[provider].base_url:
            with QSignalBlocker(self._provider):
                self._provider.setCurrentIndex(self._provider.findData("custom"))
            self._last_provider = "custom"

    def _on_key_changed(self, _text: str) -> None:
        self._update_key_state()

    def _on_inputs_changed(self, _text: str) -> None:
        self._update_url_state()
        if self._busy_button is None:
            self._show_result(None, "")

    def _on_show_key_toggled(self, shown: bool) -> None:
        self._key.setEchoMode(QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password)
        self._show_key.setIcon(self._hide_icon if shown else self._show_icon)
        self._show_key.setToolTip("Hide the key" if shown else "Show the key")

    def _on_remove_key_clicked(self) -> None:
        self._key.clear()
        self._remove_requested = True
        self._update_key_state()

    def _update_key_state(self) -> None:
        typed = self._key.text().strip()
        from_env = bool(os.environ.get(API_KEY_ENV))
        if typed and typed != self._original_key:
            where = (
                "the system keyring"
                if self._credentials.keyring_available()
                else "memory for this session"
            )
            text = f"The new key will be stored in {where} when you press OK."
        elif not typed and (self._remove_requested or self._original_key):
            text = "The saved key will be removed when you press OK."
        elif from_env and self._credentials.keyring_available():
            text = f"A key entered here is stored in the system keyring ({backend_name()})."
        elif from_env:
            text = "A key entered here is kept for this session only."
        elif typed:
            text = f"Stored in {self._credentials.source()}."
        else:
            text = "No key saved."
        self._key_source.setText(text)
        self._remove_key.setEnabled(bool(typed) or (from_env and not self._remove_requested))

    def _update_url_state(self) -> None:
        problem = _url_problem(self._base_url.text().strip())
        self._url_error.setText(problem or "")
        self._connection_form.setRowVisible(self._url_error, problem is not None)
        self._fit_height()
        ok = self._buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(problem is None)
        idle = self._busy_button is None
        self._test.setEnabled(idle and problem is None)
        self._refresh.setEnabled(idle and problem is None)

    # talking to the server

    def _on_test_clicked(self) -> None:
        self._start_probe(self._test, "Testing…")

    def _on_refresh_clicked(self) -> None:
        self._start_probe(self._refresh, "Refreshing…")

    def _start_probe(self, button: QPushButton, busy_text: str) -> None:
        """List the server's models in the background with the values in the dialog."""
        if self._busy_button is not None:
            return
        settings = dataclasses.replace(
            self.values(),
            request_timeout=min(self._workspace.settings.request_timeout, PROBE_TIMEOUT),
        )
        key = self._typed_key()
        self._busy_button = button
        self._idle_text = button.text()
        button.setText(busy_text)
        self._update_url_state()
        self._show_result(None, "Contacting the server…")

        def work(_progress: Progress) -> tuple[str, list[str]]:
            return Workspace.list_models(settings, _DialogCredentials(key))

        run_job(work, on_done=self._on_probe_done, on_error=self._on_probe_failed)

    def _on_probe_done(self, result: tuple[str, list[str]]) -> None:
        url, models = result
        self._finish_probe()
        self._fill_models(models)
        count = f"{len(models)} model{'' if len(models) == 1 else 's'} available"
        chat = self._chat_model.currentText().strip()
        if models and chat and chat not in models:
            self._show_result(
                False, f"Connected to {url}: {count}, but not the chat model “{chat}”."
            )
        else:
            self._show_result(True, f"Connected to {url}: {count}.")

    def _on_probe_failed(self, message: str) -> None:
        self._finish_probe()
        self._show_result(False, message)

    def _finish_probe(self) -> None:
        button, self._busy_button = self._busy_button, None
        if button is not None:
            button.setText(self._idle_text)
        self._update_url_state()

    def _fit_height(self) -> None:
        """Grow the dialog if wrapped text (a long error) no longer fits its height."""
        layout = self.layout()
        if not self.isVisible() or layout is None or not layout.hasHeightForWidth():
            return
        needed = layout.totalHeightForWidth(self.width())
        if needed > self.height():
            self.resize(self.width(), needed)

    def _fill_models(self, models: list[str]) -> None:
        """List `models` in both combos, keeping what is typed in them."""
        chat = self._chat_model.currentText()
        embedding = self._embedding_model.currentText()
        embedders = [m for m in models if "embed" in m.lower()]
        others = [m for m in models if m not in embedders]
        self._chat_model.clear()
        self._chat_model.addItems(others + embedders)
        self._chat_model.setEditText(chat)
        self._embedding_model.clear()
        self._embedding_model.addItem(BUILT_IN_EMBEDDINGS, LOCAL_EMBEDDING_MODEL)
        self._embedding_model.addItem(NO_EMBEDDINGS, "")
        self._embedding_model.addItems(embedders + others)
        self._embedding_model.setEditText(embedding)

    def _show_result(self, ok: bool | None, text: str) -> None:
        """Show a test result: ok (green), not ok (red), or None for a plain note."""
        self._result.setText(text)
        self._result.setToolTip(text)
        self._connection_form.setRowVisible(self._result_row, bool(text))
        self._fit_height()
        if ok is None:
            self._result.setStyleSheet("")
            self._result_icon.clear()
            return
        color = _OK_COLOR if ok else theme.danger(self.palette()).name()
        self._result.setStyleSheet(f"color: {color};")
        icon = (
            QStyle.StandardPixmap.SP_DialogApplyButton
            if ok
            else QStyle.StandardPixmap.SP_MessageBoxWarning
        )
        self._result_icon.setPixmap(self.style().standardIcon(icon).pixmap(QSize(16, 16)))


def _form(box: QGroupBox) -> QFormLayout:
    form = QFormLayout(box)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
    return form


def _align_labels(boxes: list[QGroupBox]) -> None:
    """Give the label columns of the group boxes' forms one width, so the fields line up."""
    labels: list[QLabel] = []
    for box in boxes:
        form = box.layout()
        assert isinstance(form, QFormLayout)
        for row in range(form.rowCount()):
            item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            widget = item.widget() if item is not None else None
            if isinstance(widget, QLabel):
                labels.append(widget)
    width = max((label.sizeHint().width() for label in labels), default=0)
    for label in labels:
        label.setMinimumWidth(width)
        label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def _note(parent: QWidget, color: str | None = None, text: str = "") -> QLabel:
    """A small wrapped help line for under a field, muted or in `color`."""
    label = QLabel(text, parent)
    label.setWordWrap(True)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 0.9)
    label.setFont(font)
    if color:
        label.setStyleSheet(f"color: {color};")
    else:
        theme.set_muted(label)
    return label


def _add_note(form: QFormLayout, label: QLabel) -> None:
    """Put a note under the fields of `form`, its row hidden while it has no text."""
    form.addRow("", label)
    form.setRowVisible(label, bool(label.text()))


def _model_combo(parent: QWidget) -> QComboBox:
    combo = QComboBox(parent)
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(24)
    return combo


def _token_spin(parent: QWidget, name: str, low: int, high: int, step: int) -> QSpinBox:
    """A spin box for a number of tokens."""
    spin = QSpinBox(parent)
    spin.setObjectName(name)
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setSuffix(" tokens")
    spin.setGroupSeparatorShown(True)
    spin.setMinimumWidth(140)
    spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
    return spin
