"""Adding or editing one MCP server: a command line (stdio) or a URL (Streamable HTTP)."""

from __future__ import annotations

import shlex

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from assistant.mcp_client.config import SECRET_PLACEHOLDER, ServerConfig, parse_server
from assistant.ui import theme

LOCAL, REMOTE = "Local command (stdio)", "Remote URL (Streamable HTTP)"


class ServerDialog(QDialog):
    """The fields of one server; `server()` and `secrets()` once accepted.

    Secrets (tokens) are entered apart from the other variables: they go to the keyring, and
    mcp.json only says that they are kept there.
    """

    def __init__(
        self, server: ServerConfig | None, taken: set[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mcpServerDialog")
        self.setWindowTitle("Edit MCP server" if server else "Add MCP server")
        self._taken = taken - ({server.name} if server else set())
        self._result: ServerConfig | None = None
        self.name = QLineEdit(self)
        self.kind = QComboBox(self)
        self.kind.addItems([LOCAL, REMOTE])
        self.command = QLineEdit(self)
        self.command.setPlaceholderText(
            "npx -y @modelcontextprotocol/server-filesystem ~/Documents"
        )
        self.url = QLineEdit(self)
        self.url.setPlaceholderText("https://example.com/mcp")
        self.env = _lines(self, "NAME=value, one a line")
        self.secrets_box = _lines(self, "TOKEN=value, one a line: kept in the keyring")
        self.headers = _lines(self, "Header: value, one a line")
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {theme.DANGER};")
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Kind", self.kind)
        form.addRow("Command", self.command)
        form.addRow("Environment", self.env)
        form.addRow("Secrets", self.secrets_box)
        form.addRow("URL", self.url)
        form.addRow("Headers", self.headers)
        self._form = form
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.kind.currentIndexChanged.connect(self._show_fields)
        if server is not None:
            self._load(server)
        self._show_fields()
        self.resize(560, self.sizeHint().height())

    def _load(self, server: ServerConfig) -> None:
        self.name.setText(server.name)
        self.kind.setCurrentText(REMOTE if server.transport == "http" else LOCAL)
        self.command.setText(shlex.join([server.command, *server.args]) if server.command else "")
        self.url.setText(server.url)
        plain = {k: v for k, v in server.env.items() if v != SECRET_PLACEHOLDER}
        self.env.setPlainText("\n".join(f"{k}={v}" for k, v in plain.items()))
        # The secrets themselves stay in the keyring: a name alone keeps the one kept there.
        self.secrets_box.setPlainText("\n".join(server.secret_names()))
        self.headers.setPlainText("\n".join(f"{k}: {v}" for k, v in server.headers.items()))

    def _show_fields(self) -> None:
        local = self.kind.currentText() == LOCAL
        for field in (self.command, self.env, self.secrets_box):
            self._form.setRowVisible(field, local)
        for field in (self.url, self.headers):
            self._form.setRowVisible(field, not local)

    def accept(self) -> None:
        """Check the fields; stay open with the problem shown if they do not make a server."""
        try:
            self._result = self._build()
        except ValueError as exc:
            self.problem.setText(str(exc))
            return
        super().accept()

    def _build(self) -> ServerConfig:
        name = self.name.text().strip()
        if not name:
            raise ValueError("Give the server a name.")
        if name in self._taken:
            raise ValueError(f"There is a server named '{name}' already.")
        if self.kind.currentText() == REMOTE:
            entry: dict[str, object] = {"url": self.url.text().strip()}
            headers = _pairs(self.headers.toPlainText(), ":", "header")
            if headers:
                entry["headers"] = headers
            return parse_server(name, entry)
        try:
            words = shlex.split(self.command.text())
        except ValueError as exc:
            raise ValueError(f"The command cannot be read: {exc}.") from None
        if not words:
            raise ValueError("Give the command that starts the server.")
        env = _pairs(self.env.toPlainText(), "=", "variable")
        env.update(dict.fromkeys(self.secrets(), SECRET_PLACEHOLDER))
        entry = {"command": words[0], "args": words[1:], "env": env}
        return parse_server(name, entry)

    def server(self) -> ServerConfig | None:
        """The server as entered (None until accepted)."""
        return self._result

    def secrets(self) -> dict[str, str]:
        """The secrets typed (NAME=value); a NAME alone keeps the value in the keyring."""
        found: dict[str, str] = {}
        for line in self.secrets_box.toPlainText().splitlines():
            key, sep, value = line.strip().partition("=")
            if key.strip():
                found[key.strip()] = value if sep else ""
        return found


def _lines(parent: QWidget, placeholder: str) -> QPlainTextEdit:
    box = QPlainTextEdit(parent)
    box.setPlaceholderText(placeholder)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * 3 + 12)
    return box


def _pairs(text: str, separator: str, what: str) -> dict[str, str]:
    """`NAME<sep>value` lines as a dict; ValueError naming a line without the separator."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(separator)
        if not sep or not key.strip():
            raise ValueError(f"Each {what} line needs NAME{separator}value: {line.strip()!r}.")
        pairs[key.strip()] = value.strip()
    return pairs
