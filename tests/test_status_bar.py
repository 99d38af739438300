"""The status bar keeps room for messages: long texts in its permanent labels are cut."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from assistant.ui.window.status_bar import MODEL_WIDTH, StatusBar

pytestmark = pytest.mark.gui


def test_a_long_model_name_is_cut_in_the_middle_and_whole_on_hover(qtbot: QtBot) -> None:
    bar = StatusBar()
    qtbot.addWidget(bar)
    name = "Custom · /home/me/models/mistral-7b-instruct-v0.3.Q4_K_M-really-long-name.gguf"
    bar.provider_label.setText(name)
    shown = bar.provider_label.text()
    assert "…" in shown and shown.startswith("Custom") and shown.endswith(".gguf")
    assert bar.provider_label.fontMetrics().horizontalAdvance(shown) <= MODEL_WIDTH
    assert bar.provider_label.toolTip() == name == bar.provider_label.full_text()
    bar.provider_label.setText("OpenAI · gpt-4o")
    assert bar.provider_label.text() == "OpenAI · gpt-4o"
    assert bar.provider_label.toolTip() == ""
