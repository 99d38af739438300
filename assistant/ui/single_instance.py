"""The running app listens on a local socket so that a second start hands over instead of opening.

A second `assistant` on the same data directory asks the running one to come to the front;
`assistant import FILE` asks it to show its import preview of FILE; `assistant mcp` sends it
memory requests (one writer per data dir). Each request is one line of JSON, answered by one
line: `ok` (or `error`), or for a memory request a JSON object. Where the socket is:
`assistant.app_link` (which `assistant mcp` uses too, without Qt).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from assistant.app_link import MAX_LINE, address

CONNECT_MS = 1000
REPLY_MS = 3000


class MemoryRequest:
    """A memory request from `assistant mcp`: its JSON object, and `reply` for the answer
    (on the GUI thread; dropped if the requester has gone meanwhile)."""

    def __init__(self, payload: dict[str, Any], socket: QLocalSocket) -> None:
        self.payload = payload
        self._socket: QLocalSocket | None = socket
        socket.disconnected.connect(self._gone)

    def _gone(self) -> None:
        self._socket = None

    def reply(self, answer: dict[str, Any]) -> None:
        """Send the answer (a JSON object) and close the connection."""
        socket, self._socket = self._socket, None
        if socket is None or not shiboken6.isValid(socket):  # gone, or closed with the app
            return
        socket.write(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
        socket.flush()
        socket.disconnectFromServer()


NOT_READY = {"ok": False, "retry": True, "error": "Assistant is still opening its data."}


class InstanceServer(QObject):
    """Listens for requests from later starts and `assistant mcp`; emits `activate` or
    `import_file(path)`, or passes a memory request to `memory_handler`, which must reply
    (until there is one, the requester is told to try again)."""

    activate = Signal()
    import_file = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_connection)
        self.memory_handler: Callable[[MemoryRequest], None] | None = None

    def listen(self, root: Path) -> bool:
        """Start listening (we hold the data dir's lock, so a leftover socket is stale)."""
        name = address(root)
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
            if socket.bytesAvailable() > MAX_LINE:
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
        elif request.get("action") == "memory":
            pending = MemoryRequest(request, socket)
            if self.memory_handler is None:
                pending.reply(NOT_READY)
            else:
                self.memory_handler(pending)  # it replies when the request has run
            return
        else:
            socket.write(b"error\n")
        socket.flush()
        socket.disconnectFromServer()


def send_request(root: Path, request: dict[str, Any]) -> bool:
    """Send `request` to the app running on `root`; whether it accepted it."""
    socket = QLocalSocket()
    socket.connectToServer(address(root))
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
