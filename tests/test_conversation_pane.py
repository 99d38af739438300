"""The conversation list: new, temporary, filter, rename, delete with confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog
from pytestqt.qtbot import QtBot

from assistant.memory.conversations import ConversationStore, Message
from assistant.ui.conversation_list import ConversationPane

pytestmark = pytest.mark.gui


@pytest.fixture
def pane(qtbot: QtBot, data_dir: Path) -> ConversationPane:
    widget = ConversationPane(ConversationStore(data_dir))
    qtbot.addWidget(widget)
    return widget


def titles(pane: ConversationPane) -> list[str]:
    model = pane.view.model()
    return [model.index(row, 0).data() for row in range(model.rowCount())]


def test_model_passes_the_model_tester(pane: ConversationPane, qtmodeltester: object) -> None:
    pane.new_conversation()
    pane.new_conversation()
    qtmodeltester.check(pane.model)  # type: ignore[attr-defined]


def test_new_conversations_come_first_and_are_selected(
    qtbot: QtBot, pane: ConversationPane
) -> None:
    store = pane._store
    with qtbot.waitSignal(pane.selected) as selected:
        first = pane.new_conversation()
    assert selected.args == [first]
    store.rename(first, "Older")
    second = pane.new_conversation()
    store.rename(second, "Newer")
    pane.refresh()
    assert titles(pane) == ["Newer", "Older"]
    assert pane.current_id() == second


def test_temporary_toggle_makes_temporary_conversations(pane: ConversationPane) -> None:
    pane.temporary.setChecked(True)
    cid = pane.new_conversation()
    assert pane._store.load(cid).temporary
    pane.temporary.setChecked(False)
    assert not pane._store.load(pane.new_conversation()).temporary


def test_filter_by_title(pane: ConversationPane) -> None:
    for title in ("Lisbon trip", "Tax return", "Trip to Rome"):
        pane._store.rename(pane.new_conversation(), title)
    pane.refresh()
    pane.filter.setText("trip")
    assert sorted(titles(pane)) == ["Lisbon trip", "Trip to Rome"]
    pane.filter.clear()
    assert len(titles(pane)) == 3


def test_rename(monkeypatch: pytest.MonkeyPatch, pane: ConversationPane) -> None:
    cid = pane.new_conversation()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("  Holiday   plans ", True))
    pane.rename_current()
    assert pane._store.load(cid).title == "Holiday plans"
    assert titles(pane) == ["Holiday plans"]


def test_delete_asks_first(monkeypatch: pytest.MonkeyPatch, pane: ConversationPane) -> None:
    keep = pane.new_conversation()
    doomed = pane.new_conversation()
    monkeypatch.setattr(pane, "confirm_delete", lambda title: False)
    pane.delete_current()
    assert pane._store.exists(doomed)
    monkeypatch.setattr(pane, "confirm_delete", lambda title: True)
    pane.delete_current()
    assert not pane._store.exists(doomed)
    assert pane.current_id() == keep


def test_imported_not_remembered_and_undated_conversations_say_so(pane: ConversationPane) -> None:
    store = pane._store
    message = Message("m1", None, "user", "hi", "1970-01-01T00:00:03.000000Z")
    store.import_conversation("old", "Undated", message.created_at, [message])
    store.import_conversation("secret", "Private", "2026-01-01T00:00:00Z", [], do_not_remember=True)
    pane.refresh()
    model = pane.view.model()
    tips = {
        model.index(r, 0).data(): model.index(r, 0).data(Qt.ItemDataRole.ToolTipRole)
        for r in range(model.rowCount())
    }
    assert tips["Undated"].endswith("· date unknown")
    assert "Imported as not to be remembered" in tips["Private"]
    fonts = {
        model.index(r, 0).data(): model.index(r, 0).data(Qt.ItemDataRole.FontRole)
        for r in range(model.rowCount())
    }
    assert fonts["Private"].italic() and fonts["Undated"] is None
