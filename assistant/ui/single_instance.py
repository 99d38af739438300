"""The running app listens on a local socket so that a second start hands over instead of opening.

A second `assistant` on the same data directory asks the running one to come to the front;
`assistant import FILE` asks it to show its import preview of FILE. Each request is one line of
JSON answered by `ok`. The socket's name is derived from the user and the data directory.
"""

from __future__ import annotations

import getpass
import hashlib
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

CONNECT_MS = 1000
REPLY_MS = 3000
MAX_REQUEST = 64 * 1024


def server_name(root: Path) -> str:
    """The local socket name of the app running on `root`, unique per user and directory."""
    key = f"{getpass.getuser()}\0{root.resolve()}".encode()
    return "assistant-" + hashlib.sha256(key).hexdigest()[:24]


class InstanceServer(QObject):
    """Listens for requests from later starts; emits `activate` or `import_file(path)`."""

    activate = Signal()
    import_file = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_connection)

    def listen(self, root: Path) -> bool:
        """Start listening (we hold the data dir's lock, so a leftover socket is stale)."""
        name = server_name(root)
        QLocalServer.removeServer(name)
        return self._server.listen(name)

    def close(self) -> None:
        """Stop listening."""
        self._server.close()

    def _on_connection(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            socket.readyRead.connect(lambda s=socket: self._on_ready(s))
            socket.disconnected.connect(socket.deleteLater)

    def _on_ready(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            if socket.bytesAvailable() > MAX_REQUEST:
                socket.abort()
            return
        line = bytes(socket.readLine().data())
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            socket.write(b"error\n")
        elif request.get("action") == "activate":
            socket.write(b"ok\n")
            self.activate.emit()
        elif request.get("action") == "import" and isinstance(request.get("path"), str):
            socket.write(b"ok\n")
            self.activate.emit()
            self.import_file.emit(request["path"])
        else:
            socket.write(b"error\n")
        socket.flush()
        socket.disconnectFromServer()


def send_request(root: Path, request: dict[str, Any]) -> bool:
    """Send `request` to the app running on `root`; whether it accepted it."""
    socket = QLocalSocket()
    socket.connectToServer(server_name(root))
    if not socket.waitForConnected(CONNECT_MS):
        return False
    socket.write(json.dumps(request).encode() + b"\n")
    if not socket.waitForBytesWritten(REPLY_MS):
        return False
    while not socket.canReadLine():
        if not socket.waitForReadyRead(REPLY_MS):
            return False
    accepted = bytes(socket.readLine().data()).strip() == b"ok"
    socket.disconnectFromServer()
    return accepted
