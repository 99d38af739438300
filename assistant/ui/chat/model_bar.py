"""The model picker above the chat: the conversation's model (the settings' one by default),
its options for this conversation, and the model's own (kept in the settings)."""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QToolButton,
    QWidget,
)

if TYPE_CHECKING:  # the window's frame shows this bar before the stores load
    from collections.abc import Callable

    from assistant.memory import Conversation
    from assistant.model_options import ModelOptions
    from assistant.ui.chat.session import ChatSession
    from assistant.ui.chat.view import ChatView
    from assistant.ui.jobs import Progress
    from assistant.ui.worker import AgentWorker
    from assistant.workspace import Workspace

log = logging.getLogger(__name__)

PICKER_CHARS = 28  # the picker's width, in characters of a model name


class ModelBar(QWidget):
    """Which model answers in the conversation shown; disabled until there is one."""

    # conversation id, its model (None: the settings' one), its own options
    model_chosen = Signal(str, object, object)
    shown_model_changed = Signal()  # the model shown (the status bar names it) may have changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workspace: Workspace | None = None
        self._conversation: Conversation | None = None
        self._listed: list[str] = []  # the chat models the server offers

        self.picker = QComboBox(self)
        self.picker.setObjectName("modelPicker")
        self.picker.setAccessibleName("Model")
        self.picker.setToolTip("The model that answers in this conversation")
        self.picker.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.picker.setMinimumContentsLength(PICKER_CHARS)
        self.picker.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.picker.activated.connect(self._on_activated)

        self.options_button = QToolButton(self)
        self.options_button.setObjectName("modelOptionsButton")
        self.options_button.setText("Options")
        self.options_button.setToolTip("Temperature, top-p, reply and context length, tool use")
        self.options_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.options_button)
        self.conversation_action = QAction("For This &Conversation…", menu)
        self.conversation_action.triggered.connect(self.edit_conversation_options)
        self.model_action = QAction("For the &Model…", menu)
        self.model_action.triggered.connect(self.edit_model_options)
        menu.addActions([self.conversation_action, self.model_action])
        self.options_button.setMenu(menu)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.picker)
        layout.addWidget(self.options_button)
        self.setEnabled(False)

    def attach(self, workspace: Workspace) -> None:
        """Work on `workspace`: list what its settings name, then what the server offers."""
        self._workspace = workspace
        self.refresh_models()

    def wire(
        self,
        session: ChatSession,
        worker: AgentWorker,
        chat: ChatView,
        on_model_shown: Callable[[], None],
    ) -> None:
        """Follow the conversation `session` shows, write choices through `worker`, turn tools
        back on from `chat`'s line, and call `on_model_shown` when the model shown changes."""
        session.conversation_changed.connect(self.show_conversation)
        self.model_chosen.connect(worker.set_model)
        self.shown_model_changed.connect(on_model_shown)
        chat.tools_on_requested.connect(self.turn_tools_on)

    def refresh_models(self) -> None:
        """Ask the server for its models in the background (after the settings change)."""
        workspace = self._workspace
        if workspace is None:
            return
        self._fill()
        if not workspace.is_configured():
            return
        from assistant.ui.jobs import run_job

        settings = dataclasses.replace(workspace.settings)
        credentials = workspace.credentials

        def work(_progress: Progress) -> list[str]:
            from assistant.openai_client import probe_server  # the openai package loads slowly

            return probe_server(settings, credentials)[1]

        run_job(work, on_done=self._on_listed, on_error=self._on_list_failed)

    def show_conversation(self, conversation: Conversation | None) -> None:
        """Show the model of `conversation` (None: nothing to choose for)."""
        self._conversation = conversation
        self._fill()

    def current_model(self) -> str:
        """The model that answers in the conversation shown."""
        default = self._workspace.settings.chat_model if self._workspace else ""
        conversation = self._conversation
        return (conversation.model if conversation else None) or default

    def refusing_images(self) -> str | None:
        """The model shown, if it was found not to take images (None: it takes them, or may)."""
        workspace, model = self._workspace, self.current_model()
        return model if workspace is not None and workspace.refuses_images(model) else None

    def edit_conversation_options(self) -> None:
        """Change this conversation's own options, over its model's."""
        from assistant.ui.chat.model_options_dialog import ModelOptionsDialog

        conversation = self._conversation
        if conversation is None:
            return
        dialog = ModelOptionsDialog(
            "Options for this conversation",
            conversation.options,
            f"the options of {self.current_model()}",
            self,
        )
        if dialog.exec():
            self.model_chosen.emit(conversation.id, conversation.model, dialog.options())

    def edit_model_options(self) -> None:
        """Change the model's options (every conversation with it, unless it has its own)."""
        from assistant.ui.chat.model_options_dialog import ModelOptionsDialog

        workspace = self._workspace
        if workspace is None:
            return
        model = self.current_model()
        dialog = ModelOptionsDialog(
            f"Options for {model}",
            workspace.settings.options_for(model),
            "the server's own (and Settings' reply length)",
            self,
        )
        if dialog.exec():
            self._set_model_options(model, dialog.options())

    def turn_tools_on(self, model: str) -> None:
        """Give `model` tools again after "auto" turned them off."""
        if self._workspace is not None:
            options = self._workspace.settings.options_for(model)
            self._set_model_options(model, options.learned_off(False))

    def _set_model_options(self, model: str, options: ModelOptions) -> None:
        from assistant.errors import AssistantError

        assert self._workspace is not None
        try:
            self._workspace.set_model_options(model, options)
        except AssistantError as exc:
            QMessageBox.warning(self, "Model options not saved", str(exc))

    def _on_listed(self, models: list[str]) -> None:
        self._listed = [m for m in models if "embed" not in m.lower()]
        self._fill()

    def _on_list_failed(self, message: str) -> None:
        log.info("Could not list the server's models for the picker: %s", message)

    def _fill(self) -> None:
        """List the default model, the server's, those with options and the chosen one."""
        workspace, conversation = self._workspace, self._conversation
        self.setEnabled(workspace is not None and conversation is not None)
        if workspace is None:
            return
        default = workspace.settings.chat_model
        chosen = conversation.model if conversation else None
        known = {*self._listed, *workspace.settings.model_options, *([chosen] if chosen else [])}
        with QSignalBlocker(self.picker):
            self.picker.clear()
            self.picker.addItem(f"{default} (default)", None)
            for model in sorted(known - {default}, key=str.lower):
                self.picker.addItem(model, model)
            self.picker.setCurrentIndex(max(0, self.picker.findData(chosen)) if chosen else 0)
        self.shown_model_changed.emit()

    def _on_activated(self, index: int) -> None:
        conversation = self._conversation
        model = self.picker.itemData(index)
        if conversation is not None and model != conversation.model:
            self.model_chosen.emit(conversation.id, model, conversation.options)
