"""The welcome shown in place of the chat until a model is connected."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from assistant import APP_NAME

WELCOME = f"""
<h2>Welcome to {APP_NAME}</h2>
<p>{APP_NAME} is a personal assistant that <b>remembers</b>: what you tell it becomes
long-term memory you can browse, search, pin, edit and forget in the panel on the right.</p>
<p>To start chatting, connect a model:</p>
<ul>
<li><b>OpenAI</b>: paste your API key. It is kept in your system keyring, never in a file.</li>
<li><b>Ollama</b> or <b>LM Studio</b> on this computer: choose the preset; no key needed.</li>
<li>Any other <b>OpenAI-compatible server</b>: enter its URL.</li>
</ul>
<p>Your memories can be browsed without a connection.</p>
"""


def welcome_panel(open_settings: Callable[[], None], parent: QWidget) -> QWidget:
    """The welcome text and a button that opens Settings."""
    panel = QWidget(parent)
    panel.setObjectName("welcomePanel")
    text = QLabel(WELCOME, panel)  # rich text, recognized by its tags
    text.setWordWrap(True)
    button = QPushButton("Connect a Model…", panel)
    button.setObjectName("welcomeSettingsButton")
    button.setAccessibleDescription(
        "Opens Settings to connect to OpenAI, Ollama, LM Studio or another server"
    )
    button.clicked.connect(open_settings)
    button_row = QHBoxLayout()
    button_row.addWidget(button)
    button_row.addStretch(1)
    layout = QVBoxLayout(panel)
    layout.setContentsMargins(40, 30, 40, 30)
    layout.addWidget(text)
    layout.addLayout(button_row)
    layout.addStretch(1)
    return panel
