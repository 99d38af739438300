"""Guards against known-bad Qt bindings."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

pytestmark = pytest.mark.gui


def test_qt_calls_do_not_leak_references_to_none(qtbot: QtBot) -> None:
    # PySide6 6.12.0 on Python 3.11 drops a reference to None on every call returning
    # nothing, and the app aborts once the count reaches zero (pyproject pins it out).
    label = QLabel()
    qtbot.addWidget(label)
    before = sys.getrefcount(None)
    for _ in range(2000):
        label.setText("a")
    assert sys.getrefcount(None) >= before - 100
