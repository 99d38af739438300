"""Unchecked check boxes and radio buttons, and the check boxes of a list, show an outline that
stands out (WCAG 2.x non-text contrast, 3:1) in both themes: Fusion's, drawn in a shade of the
window colour, was 1.2:1 on the dark window and 1.7:1 on the light one. So does a scroll bar's
handle on its groove (2.0:1 and 1.6:1). Measured on the pixels of the settings dialog and of a
list as painted, against the theme's palette."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QListWidget,
    QMenu,
    QRadioButton,
    QTreeWidget,
    QWidget,
)
from pytestqt.qtbot import QtBot

from assistant.ui import theme
from assistant.ui.outlines import best_contrast, indicator_area, scroll_bar_parts
from assistant.ui.settings.dialog import SettingsDialog
from assistant.workspace import Workspace
from tests.mcp_helpers import write_config

pytestmark = pytest.mark.gui

_Role = QPalette.ColorRole


@pytest.fixture
def workspace(data_dir: Path) -> Iterator[Workspace]:
    """A data dir with an MCP server that is switched off (its check box unchecked)."""
    write_config(data_dir, {"notes": {"command": "notes-server", "disabled": True}})
    opened = Workspace.open(data_dir)
    yield opened
    opened.close()
    theme.apply("system")


@pytest.mark.parametrize("name", ["light", "dark"])
def test_unchecked_indicators_stand_out_from_the_window_and_their_inside(
    qtbot: QtBot, workspace: Workspace, name: str
) -> None:
    theme.apply(name)
    palette = theme.palette_for(name)
    window, base = palette.color(_Role.Window), palette.color(_Role.Base)
    dialog = SettingsDialog(workspace)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    seen: dict[str, float] = {}
    for page in dialog.pages:
        dialog.show_page(page.title)
        qtbot.waitUntil(page.isVisible)
        image = page.grab().toImage()
        buttons = [*page.findChildren(QCheckBox), *page.findChildren(QRadioButton)]
        for button in buttons:
            if not button.isVisible() or button.isChecked():
                continue
            area = indicator_area(button).translated(button.mapTo(page, QPoint(0, 0)))
            what = f"{page.title}: {button.text().replace('&', '')}"
            seen[what] = best_contrast(image, area, (window, base))
        for tree in page.findChildren(QTreeWidget, "mcpServers"):
            row = tree.findItems("notes", Qt.MatchFlag.MatchExactly)[0]
            assert row.checkState(0) == Qt.CheckState.Unchecked
            cell = tree.visualItemRect(row)
            box = QRect(
                cell.left(), cell.top(), cell.height() + 4, cell.height()
            )  # before the name
            box.translate(tree.viewport().mapTo(page, QPoint(0, 0)))
            seen[f"{page.title}: notes"] = best_contrast(image, box, (base,))
    assert {"Remembering: Ask me first", "Remembering: Health", "MCP servers: notes"} <= set(seen)
    low = {what: round(ratio, 2) for what, ratio in seen.items() if ratio < 3.0}
    assert low == {}


@pytest.mark.parametrize("name", ["light", "dark"])
def test_a_scroll_bar_handle_stands_out_from_its_groove(
    qtbot: QtBot, workspace: Workspace, name: str
) -> None:
    theme.apply(name)
    view = QListWidget()
    qtbot.addWidget(view)
    view.addItems([f"Row {n}" for n in range(200)])
    view.resize(300, 300)
    view.show()
    qtbot.waitExposed(view)
    bar = view.verticalScrollBar()
    assert bar.isVisible() and bar.palette().color(_Role.Base) == theme.palette_for(name).color(
        _Role.Base
    )
    handle, groove = scroll_bar_parts(bar)
    image = bar.grab().toImage()
    assert best_contrast(image, handle, (image.pixelColor(groove.center()),)) >= 3.0


@pytest.mark.parametrize("name", ["light", "dark"])
def test_a_checkable_menu_command_shows_its_box(qtbot: QtBot, name: str) -> None:
    """As "Show Archived Conversations" in the list's menu: its box was 1.0:1 on dark."""
    theme.apply(name)
    host = QWidget()
    qtbot.addWidget(host)
    menu = QMenu(host)
    action = menu.addAction("Show Archived Conversations")
    action.setCheckable(True)
    menu.resize(menu.sizeHint())  # painted off screen: a popup warns on this platform
    image = menu.grab().toImage()
    row = menu.actionGeometry(action)
    background = image.pixelColor(row.right() - 2, row.center().y())
    box = QRect(row.left(), row.top(), row.height() + 6, row.height())  # before the words
    assert best_contrast(image, box, (background,)) >= 3.0
    theme.apply("system")
