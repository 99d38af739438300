"""Asking the model server from the settings, before anything is saved: "Refresh models" and
"Test connection" list its models in the background and say what it answered."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from assistant.credentials import API_KEY_ENV, Credentials
from assistant.settings import Settings
from assistant.ui import theme
from assistant.ui.jobs import Progress, run_job
from assistant.ui.settings.form import wrappable

# A connection test should not hang for the full chat timeout on an unreachable host.
PROBE_TIMEOUT = 15.0

_OK_COLOR = "#2e7d32"


class _DialogCredentials(Credentials):
    """The key typed in the dialog, for a test before it is stored; the environment still wins."""

    def __init__(self, key: str | None) -> None:
        super().__init__()
        self._key = key

    def api_key(self) -> str | None:
        """The environment's key, else the dialog's."""
        return os.environ.get(API_KEY_ENV) or self._key


class ServerProbe(QWidget):
    """The Refresh models and Test connection buttons, and the line with the server's answer."""

    listed = Signal(list)  # the model names the server offers (before the result is shown)
    busy_changed = Signal()  # a probe started or ended: the buttons' state may change
    resized = Signal()  # the result line appeared, changed or went

    def __init__(
        self,
        settings: Callable[[], Settings],
        key: Callable[[], str | None],
        chat_model: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        """`settings`, `key` and `chat_model` read the values in the dialog at each probe."""
        super().__init__(parent)
        self._settings = settings
        self._key = key
        self._chat_model = chat_model
        self._busy_button: QPushButton | None = None
        self._idle_text = ""

        self.refresh = QPushButton("&Refresh Models", self)
        self.refresh.setObjectName("refreshModelsButton")
        self.refresh.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_BrowserReload))
        self.refresh.setToolTip("Ask the server which models it offers and list them above.")
        self.refresh.clicked.connect(lambda: self._start(self.refresh, "Refreshing…"))
        self.test = QPushButton("&Test Connection", self)
        self.test.setObjectName("testConnectionButton")
        self.test.setToolTip(
            "Check the URL and the API key shown in this dialog (before saving them) by "
            "listing the server's models."
        )
        self.test.clicked.connect(lambda: self._start(self.test, "Testing…"))
        buttons = QHBoxLayout()
        buttons.addWidget(self.refresh)
        buttons.addWidget(self.test)
        buttons.addStretch(1)

        self._icon = QLabel(self)
        self._icon.setFixedSize(16, 16)
        self._result = QLabel(self)
        self._result.setObjectName("connectionResult")
        self._result.setWordWrap(True)
        self._result.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._result.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        result_row = QHBoxLayout()
        result_row.setContentsMargins(0, 0, 0, 0)
        result_row.setSpacing(6)
        result_row.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        result_row.addWidget(self._result, 1)
        self._result_row = QWidget(self)
        self._result_row.setLayout(result_row)
        # Room for two lines whether or not there is a result, so that nothing moves when one
        # comes or goes; a longer one grows the dialog.
        self._result_row.setMinimumHeight(2 * self._result.fontMetrics().lineSpacing())

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self._result_row)

    @property
    def busy(self) -> bool:
        """Whether a probe is under way."""
        return self._busy_button is not None

    def set_usable(self, usable: bool) -> None:
        """Enable the buttons if the URL is usable and no probe is under way."""
        self.test.setEnabled(usable and not self.busy)
        self.refresh.setEnabled(usable and not self.busy)

    def _start(self, button: QPushButton, busy_text: str) -> None:
        """List the server's models in the background with the values in the dialog."""
        if self._busy_button is not None:
            return
        settings = self._settings()
        settings = dataclasses.replace(
            settings, request_timeout=min(settings.request_timeout, PROBE_TIMEOUT)
        )
        credentials = _DialogCredentials(self._key())
        self._busy_button = button
        self._idle_text = button.text()
        button.setText(busy_text)
        self.busy_changed.emit()
        self.show_result(None, "Contacting the server…")

        def work(_progress: Progress) -> tuple[str, list[str]]:
            from assistant.openai_client import probe_server  # the openai package loads slowly

            return probe_server(settings, credentials)

        run_job(work, on_done=self._on_done, on_error=self._on_failed)

    def _on_done(self, result: tuple[str, list[str]]) -> None:
        url, models = result
        self._finish()
        self.listed.emit(models)
        count = f"{len(models)} model{'' if len(models) == 1 else 's'} available"
        chat = self._chat_model()
        if models and chat and chat not in models:
            self.show_result(
                False, f"Connected to {url}: {count}, but not the chat model “{chat}”."
            )
        else:
            self.show_result(True, f"Connected to {url}: {count}.")

    def _on_failed(self, message: str) -> None:
        self._finish()
        self.show_result(False, message)

    def _finish(self) -> None:
        button, self._busy_button = self._busy_button, None
        if button is not None:
            button.setText(self._idle_text)
        self.busy_changed.emit()

    def show_problem(self, problem: str | None) -> None:
        """The values changed: say what is wrong with them (in red, in the result's place), or
        clear the result, said of other values (a probe under way says its own)."""
        if problem is not None:
            self.show_result(False, problem)
        elif not self.busy:
            self.show_result(None, "")

    def show_result(self, ok: bool | None, text: str) -> None:
        """Show a result: ok (green), not ok (red), or None for a plain note ("": none)."""
        self._result.setText(wrappable(text))
        self._result.setToolTip(text)
        if ok is None:
            self._result.setStyleSheet("")
            self._icon.clear()
        else:
            color = _OK_COLOR if ok else theme.danger(self.palette()).name()
            self._result.setStyleSheet(f"color: {color};")
            icon = (
                QStyle.StandardPixmap.SP_DialogApplyButton
                if ok
                else QStyle.StandardPixmap.SP_MessageBoxWarning
            )
            self._icon.setPixmap(self.style().standardIcon(icon).pixmap(QSize(16, 16)))
        self.resized.emit()
