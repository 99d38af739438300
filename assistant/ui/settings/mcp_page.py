"""The MCP servers page of the settings: each server with its status and tool switches; add,
edit, remove, enable, restart, and import Claude Desktop's servers.

Unlike the other pages, its changes are saved at once (mcp.json, and the tool switches in the
settings) and the servers follow them: a server's status is only known once it runs, and the
page says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from PySide6.QtCore import QObject, QPoint, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from assistant.errors import AssistantError
from assistant.mcp_client.config import (
    McpConfig,
    ServerConfig,
    claude_desktop_config,
    import_servers,
)
from assistant.mcp_client.manager import mcp_secret_name
from assistant.mcp_client.status import McpTool, ServerStatus
from assistant.paths import settings_file
from assistant.ui.outlines import outline_checks
from assistant.ui.settings.form import note
from assistant.ui.settings.mcp_server_dialog import ServerDialog
from assistant.ui.settings.page import SettingsPage
from assistant.workspace import Workspace

ABOUT = (
    "Tools from MCP servers, for the model to use. Changes here apply at once. A tool that "
    "may change things asks in the chat before it runs."
)

_SERVER = Qt.ItemDataRole.UserRole  # a server item's name
_TOOL = Qt.ItemDataRole.UserRole + 1  # a tool item's `server/tool` key


class _Relay(QObject):
    """Status changes from the client's thread, as a signal on the GUI thread."""

    changed = Signal(object)  # ServerStatus


class McpPage(SettingsPage):
    """The MCP servers of the workspace."""

    title = "MCP servers"

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpPage")
        self._workspace = workspace
        self._manager = workspace.mcp
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("mcpServers")
        self.tree.setHeaderLabels(["Server / tool", "Status"])
        self.tree.setColumnWidth(0, 240)
        outline_checks(self.tree)  # a server's check box
        self.detail = QPlainTextEdit(self)
        self.detail.setObjectName("mcpDetail")
        self.detail.setReadOnly(True)
        self.detail.setMaximumHeight(120)
        buttons = QHBoxLayout()
        self.add_button = self._button("Add…", self._add, buttons)
        self.edit_button = self._button("Edit…", self._edit, buttons)
        self.remove_button = self._button("Remove", self._remove, buttons)
        self.restart_button = self._button("Restart", self._restart, buttons)
        self.ask_first_button = self._button("Ask Before It Runs", self.ask_first, buttons)
        self.ask_first_button.setObjectName("mcpAskFirstButton")
        self.ask_first_button.setToolTip(
            "Take back “Always allow this tool”: it asks in the chat again before it runs"
        )
        buttons.addStretch(1)
        self.import_button = self._button("Import from Claude Desktop", self.import_claude, buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(note(self, text=ABOUT))
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.detail)
        layout.addLayout(buttons)
        self._relay = _Relay(self)
        self._relay.changed.connect(self._refresh)
        self._unsubscribe = self._manager.changed.add(self._relay.changed.emit)
        self.destroyed.connect(self._unsubscribe)
        self.tree.itemChanged.connect(self._on_item_changed)
        self.tree.currentItemChanged.connect(self._show_detail)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self._refresh()

    def _button(self, text: str, slot: Callable[[], None], row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text, self)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    # -- the list --------------------------------------------------------------------------------

    def _refresh(self, _status: ServerStatus | None = None) -> None:
        """Draw the servers and their tools again, keeping the selection."""
        selected = self._selected()
        off = set(self._workspace.settings.mcp_tools_off)
        trusted = set(self._workspace.settings.mcp_trusted)
        with QSignalBlocker(self.tree):  # the check states set below are not the user's
            self.tree.clear()
            for status in self._manager.statuses():
                item = QTreeWidgetItem([status.name, _describe(status, self._manager.config)])
                item.setData(0, _SERVER, status.name)
                server = self._manager.config.servers.get(status.name)
                if server is not None:
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    checked = Qt.CheckState.Unchecked if server.disabled else Qt.CheckState.Checked
                    item.setCheckState(0, checked)
                    item.setToolTip(0, "Switch the server on or off")
                for tool in status.tools:
                    item.addChild(_tool_item(tool, tool.key not in off, tool.key in trusted))
                self.tree.addTopLevelItem(item)
                item.setExpanded(True)
                if status.name == selected:
                    self.tree.setCurrentItem(item)
        self._show_detail()

    def _selected(self) -> str | None:
        item = self.tree.currentItem()
        while item is not None and item.parent() is not None:
            item = item.parent()
        return None if item is None else str(item.data(0, _SERVER))

    def _trusted_tool(self) -> str | None:
        """The `server/tool` key of the tool selected, if the user always allows it."""
        item = self.tree.currentItem()
        key = None if item is None else item.data(0, _TOOL)
        return str(key) if key in self._workspace.settings.mcp_trusted else None

    def _show_detail(self, *_args: object) -> None:
        self.ask_first_button.setEnabled(self._trusted_tool() is not None)
        name = self._selected()
        status = next((s for s in self._manager.statuses() if s.name == name), None)
        for button in (self.edit_button, self.remove_button, self.restart_button):
            button.setEnabled(status is not None)
        if status is None:
            self.detail.setPlainText(self._manager.config.error or "")
            return
        parts = [f"{status.name}: {_describe(status, self._manager.config)}"]
        parts.extend(status.refused)
        if status.stderr_tail.strip():
            parts.append("What the server wrote (stderr):\n" + status.stderr_tail.rstrip())
        self.detail.setPlainText("\n".join(parts))

    def _on_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        on = item.checkState(0) == Qt.CheckState.Checked
        key = item.data(0, _TOOL)
        if key is not None:  # a tool's switch: the model is offered it or not
            settings = self._workspace.settings
            off = [k for k in settings.mcp_tools_off if k != key]
            settings.mcp_tools_off = off if on else [*off, str(key)]
            self._save_settings()
            return
        name = str(item.data(0, _SERVER))
        server = self._manager.config.servers.get(name)
        if server is not None and server.disabled == on:
            switched = dataclasses.replace(server, disabled=not on)
            # Later: saving draws the list anew, which must not delete the item being changed.
            QTimer.singleShot(0, self, lambda: self._save(lambda config: config.put(switched)))

    # -- actions ---------------------------------------------------------------------------------

    def _add(self) -> None:
        self._open_editor(None)

    def _edit(self) -> None:
        name = self._selected()
        server = self._manager.config.servers.get(name or "")
        if server is not None:
            self._open_editor(server)
        elif name is not None:
            problem = self._manager.config.problems.get(name, "")
            QMessageBox.information(
                self, "MCP server", f"{problem}\n\nFix it in {self._manager.path}, or remove it."
            )

    def _open_editor(self, server: ServerConfig | None) -> None:
        config = self._manager.config
        dialog = ServerDialog(server, {*config.servers, *config.problems}, self)
        if not dialog.exec():
            return
        edited = dialog.server()
        assert edited is not None
        try:
            self._store_secrets(server, edited, dialog.secrets())
        except AssistantError as exc:
            QMessageBox.warning(self, "MCP server", str(exc))
        if self._save(lambda c: c.put(edited, old_name=server.name if server else None)) and (
            server is not None and _another_program(server, edited)
        ):
            self._forget_grants(lambda key: key.startswith(f"{server.name}/"))

    def _store_secrets(
        self, old: ServerConfig | None, new: ServerConfig, typed: dict[str, str]
    ) -> None:
        """Keep typed secrets in the keyring; drop those no longer listed."""
        credentials = self._workspace.credentials
        for key, value in typed.items():
            if value:
                credentials.set_secret(mcp_secret_name(new.name, key), value)
            elif old is not None and old.name != new.name:  # renamed: the secret moves too
                kept = credentials.secret(mcp_secret_name(old.name, key))
                if kept is not None:
                    credentials.set_secret(mcp_secret_name(new.name, key), kept)
        if old is not None:
            for key in old.secret_names():
                if old.name != new.name or key not in typed:
                    credentials.delete_secret(mcp_secret_name(old.name, key))

    def _remove(self) -> None:
        name = self._selected()
        if name is None:
            return
        answer = QMessageBox.question(self, "Remove MCP server", f"Remove the server '{name}'?")
        if answer != QMessageBox.StandardButton.Yes:
            return
        server = self._manager.config.servers.get(name)
        for key in server.secret_names() if server else []:
            self._workspace.credentials.delete_secret(mcp_secret_name(name, key))
        if self._save(lambda config: config.remove(name)):
            # A server added later under this name is another program: it is not trusted.
            self._forget_grants(lambda key: key.startswith(f"{name}/"))

    def _context_menu(self, pos: QPoint) -> None:
        """On an always-allowed tool: take the permission back."""
        if self._trusted_tool() is None:
            return
        menu = QMenu(self.tree)
        menu.addAction("Ask Before It Runs", self.ask_first)
        menu.exec(self.tree.viewport().mapToGlobal(pos))

    def ask_first(self) -> None:
        """The tool selected asks before it runs again (it was always allowed)."""
        key = self._trusted_tool()
        if key is not None:
            self._forget_grants(lambda k: k == key)

    def _forget_grants(self, which: Callable[[str], bool]) -> None:
        """Take back "always allow" from the tools whose `server/tool` key `which` picks."""
        settings = self._workspace.settings
        kept = [k for k in settings.mcp_trusted if not which(k)]
        if kept != settings.mcp_trusted:
            settings.mcp_trusted = kept
            self._save_settings()
            self._refresh()

    def _restart(self) -> None:
        name = self._selected()
        if name is not None:
            self._manager.restart(name)

    def import_claude(self) -> None:
        """Add the servers of Claude Desktop's config that are not here yet."""
        source = claude_desktop_config()
        found: list[tuple[list[str], list[str]]] = []

        def merge(config: McpConfig) -> None:
            found.append(import_servers(config, source))

        if not self._save(merge):
            return
        added, skipped = found[0]
        lines = [f"Imported: {', '.join(added)}." if added else "No new server to import."]
        lines.extend(skipped)
        QMessageBox.information(self, "Import from Claude Desktop", "\n\n".join(lines))

    def _save(self, change: Callable[[McpConfig], None]) -> bool:
        """Apply `change` to a copy of the config, save it, then run the servers it lists."""
        current = self._manager.config
        config = McpConfig(
            dict(current.servers), dict(current.problems), current.error, dict(current.raw)
        )
        try:
            change(config)
            config.save(self._manager.path)
        except AssistantError as exc:
            QMessageBox.warning(self, "MCP servers", str(exc))
            return False
        self._manager.apply(config)
        self._refresh()
        return True

    def _save_settings(self) -> None:
        try:
            self._workspace.settings.save(settings_file(self._workspace.root))
        except AssistantError as exc:
            QMessageBox.warning(self, "MCP servers", str(exc))


def _another_program(old: ServerConfig, new: ServerConfig) -> bool:
    """Whether an edit makes the server another one (renamed, another command or address):
    what the user allowed the old one to do without asking is not the new one's."""
    return (old.name, old.command, old.args, old.url) != (new.name, new.command, new.args, new.url)


def _describe(status: ServerStatus, config: McpConfig) -> str:
    server = config.servers.get(status.name)
    where = "" if server is None else (server.url or server.command)
    return f"{status.describe()}  ({where})" if where else status.describe()


def _tool_item(tool: McpTool, on: bool, trusted: bool) -> QTreeWidgetItem:
    asks = "asks before it runs" if tool.may_change_things and not trusted else ""
    item = QTreeWidgetItem([tool.name, "always allowed" if trusted else asks])
    item.setData(0, _TOOL, tool.key)
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
    item.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
    item.setToolTip(0, tool.description or tool.title or tool.name)
    return item
