"""The MCP servers page: statuses, switches, add/edit with secrets, remove, import."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from assistant.credentials import Credentials
from assistant.mcp_client.config import SECRET_PLACEHOLDER, McpConfig
from assistant.mcp_client.manager import mcp_secret_name
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.settings.mcp_page import McpPage
from assistant.ui.settings.mcp_server_dialog import REMOTE, ServerDialog
from assistant.workspace import Workspace
from tests.mcp_helpers import server_processes, stdio, wait_until, write_config

pytestmark = [pytest.mark.gui, pytest.mark.slow]


@pytest.fixture
def messages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the page told the user in message boxes (answering Yes to questions)."""
    said: list[str] = []

    def tell(_parent: object, _title: str, text: str, *args: Any) -> Any:
        said.append(text)
        return QMessageBox.StandardButton.Yes

    for name in ("information", "warning", "question"):
        monkeypatch.setattr(QMessageBox, name, tell)
    return said


@pytest.fixture
def page(qtbot: QtBot, data_dir: Path) -> Iterator[McpPage]:
    write_config(data_dir, {"shop": stdio("shop"), "typo": {"comand": "x"}})
    workspace = Workspace.open(data_dir)
    workspace.mcp.start()
    widget = McpPage(workspace)
    qtbot.addWidget(widget)
    yield widget
    workspace.close()
    wait_until(lambda: server_processes(data_dir) == [])


def item(page: McpPage, *path: str) -> QTreeWidgetItem:
    found = page.tree.findItems(path[0], Qt.MatchFlag.MatchExactly)[0]
    for name in path[1:]:
        found = next(
            found.child(i) for i in range(found.childCount()) if found.child(i).text(0) == name
        )
    return found


def test_statuses_and_tools_show(qtbot: QtBot, page: McpPage) -> None:
    qtbot.waitUntil(lambda: item(page, "shop").text(1).startswith("ready · 9 tools"), timeout=60000)
    assert item(page, "typo").text(1).startswith("failed: MCP server 'typo': unknown field(s)")
    assert item(page, "shop", "refund_order").text(1) == "asks before it runs"
    assert item(page, "shop", "lookup_order").text(1) == ""
    page.tree.setCurrentItem(item(page, "typo"))
    assert "unknown field(s) 'comand'" in page.detail.toPlainText()


def test_tool_and_server_switches_are_saved(qtbot: QtBot, page: McpPage, data_dir: Path) -> None:
    qtbot.waitUntil(lambda: item(page, "shop").childCount() == 9, timeout=60000)
    item(page, "shop", "lookup_order").setCheckState(0, Qt.CheckState.Unchecked)
    saved, _ = Settings.load(settings_file(data_dir))
    assert saved.mcp_tools_off == ["shop/lookup_order"]
    item(page, "shop").setCheckState(0, Qt.CheckState.Unchecked)
    qtbot.waitUntil(lambda: item(page, "shop").text(1).startswith("disabled"), timeout=30000)
    raw = json.loads((data_dir / "mcp.json").read_text())
    assert raw["mcpServers"]["shop"]["disabled"] is True
    assert raw["mcpServers"]["typo"] == {"comand": "x"}  # never rewritten with less


def test_adding_a_server_keeps_its_secret_in_the_keyring(
    qtbot: QtBot, page: McpPage, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fill(dialog: ServerDialog) -> int:
        dialog.name.setText("notes")
        dialog.command.setText("notes-server --root '/my notes'")
        dialog.env.setPlainText("LOG=debug")
        dialog.secrets_box.setPlainText("NOTES_TOKEN=s3cret")
        dialog.accept()
        return int(dialog.result())

    monkeypatch.setattr(ServerDialog, "exec", fill)
    page._add()
    entry = json.loads((data_dir / "mcp.json").read_text())["mcpServers"]["notes"]
    assert entry == {
        "command": "notes-server",
        "args": ["--root", "/my notes"],
        "env": {"LOG": "debug", "NOTES_TOKEN": SECRET_PLACEHOLDER},
    }
    assert Credentials().secret(mcp_secret_name("notes", "NOTES_TOKEN")) == "s3cret"
    qtbot.waitUntil(
        lambda: item(page, "notes").text(1).startswith("failed: the command was not found"),
        timeout=30000,
    )


def test_the_editor_refuses_what_is_not_a_server(qtbot: QtBot) -> None:
    dialog = ServerDialog(None, {"shop"})
    qtbot.addWidget(dialog)
    dialog.name.setText("shop")
    dialog.accept()
    assert "There is a server named 'shop' already" in dialog.problem.text()
    dialog.name.setText("web")
    dialog.kind.setCurrentText(REMOTE)
    dialog.url.setText("ftp://x")
    dialog.accept()
    assert "'url' must be an http:// or https:// address" in dialog.problem.text()
    dialog.url.setText("https://x.test/mcp")
    dialog.headers.setPlainText("Authorization Bearer")
    dialog.accept()
    assert "Each header line needs NAME:value" in dialog.problem.text()
    assert dialog.server() is None


def test_remove(qtbot: QtBot, page: McpPage, data_dir: Path, messages: list[str]) -> None:
    page.tree.setCurrentItem(item(page, "typo"))
    page._remove()
    assert list(json.loads((data_dir / "mcp.json").read_text())["mcpServers"]) == ["shop"]


def test_import_from_claude_desktop(
    qtbot: QtBot, page: McpPage, data_dir: Path, tmp_path: Path, messages: list[str]
) -> None:
    page.import_claude()
    assert messages[-1].startswith("No config file at ") and "Claude" in messages[-1]
    claude = tmp_path / "xdg-config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "shop": {"command": "other"},
                    "files": {"command": "npx", "args": ["fs"]},
                }
            }
        )
    )
    page.import_claude()
    assert "Imported: files." in messages[-1]
    assert "MCP server 'shop' is here already: kept as it is." in messages[-1]
    config = McpConfig.load(data_dir / "mcp.json")
    assert config.servers["files"].args == ("fs",)
    assert config.servers["shop"].command != "other"


def test_the_page_is_a_page_of_the_settings_dialog(
    qtbot: QtBot, data_dir: Path, messages: list[str]
) -> None:
    from PySide6.QtWidgets import QStackedWidget

    from assistant.ui.settings.dialog import SettingsDialog

    write_config(data_dir, {"shop": stdio("shop")})
    workspace = Workspace.open(data_dir)
    workspace.mcp.start()
    try:
        dialog = SettingsDialog(workspace)
        qtbot.addWidget(dialog)
        tabs = dialog.findChild(QStackedWidget, "settingsPages")
        assert tabs is not None
        titles = [page.title for page in dialog.pages]
        assert titles[-1] == "MCP servers"
        page = tabs.widget(titles.index("MCP servers"))
        assert isinstance(page, McpPage) and page in dialog.pages
        tabs.setCurrentWidget(page)
        qtbot.waitUntil(lambda: item(page, "shop").text(1).startswith("ready"), timeout=60000)
        # Its changes apply at once (the page says so): Cancel does not take them back.
        item(page, "shop", "lookup_order").setCheckState(0, Qt.CheckState.Unchecked)
        dialog.reject()
        saved, _ = Settings.load(settings_file(data_dir))
        assert saved.mcp_tools_off == ["shop/lookup_order"]
        # And OK on another page keeps them.
        again = SettingsDialog(workspace)
        qtbot.addWidget(again)
        again.accept()
        saved, _ = Settings.load(settings_file(data_dir))
        assert saved.mcp_tools_off == ["shop/lookup_order"]
    finally:
        workspace.close()
        wait_until(lambda: server_processes(data_dir) == [])


def test_always_allow_can_be_taken_back_and_goes_with_its_server(
    qtbot: QtBot, data_dir: Path, messages: list[str]
) -> None:
    """One click on "Always allow this tool" was for good: nothing in the app took it back,
    and removing the server kept it, so a later server of that name ran the tool unasked."""
    settings = Settings(mcp_trusted=["shop/refund_order", "shop/add_note", "web/fetch"])
    settings.save(settings_file(data_dir))
    write_config(data_dir, {"shop": stdio("shop")})
    workspace = Workspace.open(data_dir)
    workspace.mcp.start()
    page = McpPage(workspace)
    qtbot.addWidget(page)
    try:
        qtbot.waitUntil(lambda: item(page, "shop").childCount() == 9, timeout=60000)
        assert item(page, "shop", "refund_order").text(1) == "always allowed"
        page.tree.setCurrentItem(item(page, "shop", "lookup_order"))
        assert not page.ask_first_button.isEnabled()
        page.tree.setCurrentItem(item(page, "shop", "refund_order"))
        assert page.ask_first_button.isEnabled()
        page.ask_first_button.click()
        assert item(page, "shop", "refund_order").text(1) == "asks before it runs"
        saved, _ = Settings.load(settings_file(data_dir))
        assert saved.mcp_trusted == ["shop/add_note", "web/fetch"]
        page.tree.setCurrentItem(item(page, "shop"))
        page._remove()
        saved, _ = Settings.load(settings_file(data_dir))
        assert saved.mcp_trusted == ["web/fetch"]
    finally:
        workspace.close()
        wait_until(lambda: server_processes(data_dir) == [])
