"""How other processes reach the app running on a data directory: its local socket (no Qt).

The app listens (with Qt's QLocalServer, `ui/single_instance`) at `address(root)`: a Unix
socket in the temp directory on POSIX, a named pipe on Windows. A request is one line of JSON;
the answer is one line: `ok` or `error` for a second start and `assistant import`, a JSON object
for a memory request of `assistant mcp` (`ask`).
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CONNECT_S = 1.0
MAX_LINE = 64 * 1024  # a request; an answer may be longer (search results), up to MAX_ANSWER
MAX_ANSWER = 4 * 1024 * 1024


class AppGoneError(OSError):
    """The app took the request but closed the connection before it answered."""


def server_name(root: Path) -> str:
    """The socket's name for the app running on `root`, unique per user and directory."""
    key = f"{getpass.getuser()}\0{root.resolve()}".encode()
    return "assistant-" + hashlib.sha256(key).hexdigest()[:24]


def address(root: Path) -> str:
    """Where the app on `root` listens: a full path on POSIX (so that a process without Qt
    finds it where Qt would), the pipe's name on Windows."""
    if sys.platform == "win32":
        return server_name(root)
    return os.path.join(tempfile.gettempdir(), server_name(root))


def ask(root: Path, request: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
    """Send a memory request to the app on `root` and return its answer (a JSON object).

    None if no app listens there. Raises TimeoutError if it does not answer within
    `timeout_s`, AppGoneError if it closes the connection first, ValueError if its answer is
    not a JSON object.
    """
    line = json.dumps(request, ensure_ascii=False).encode() + b"\n"
    if len(line) > MAX_LINE:
        raise ValueError("The request is too long for the app's socket.")
    if sys.platform == "win32":
        return _ask_pipe(root, line, timeout_s)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(CONNECT_S)
        try:
            conn.connect(address(root))
        except (FileNotFoundError, ConnectionRefusedError):
            return None  # no socket, or one left by an app that is gone
        except TimeoutError:
            return None
        conn.sendall(line)
        deadline = time.monotonic() + timeout_s
        answer = b""
        while not answer.endswith(b"\n"):
            conn.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                raise TimeoutError(f"Assistant did not answer within {timeout_s:.0f} s.") from None
            if not chunk:
                raise AppGoneError("Assistant closed the connection before it answered.")
            answer += chunk
            if len(answer) > MAX_ANSWER:
                raise ValueError("Assistant's answer is too long.")
    return _parsed(answer)


def _ask_pipe(root: Path, line: bytes, timeout_s: float) -> dict[str, Any] | None:
    """Windows: the same over the app's named pipe (blocking: the timeout is not enforced)."""
    try:
        pipe = open(rf"\\.\pipe\{server_name(root)}", "r+b", buffering=0)  # noqa: SIM115
    except FileNotFoundError:
        return None
    with contextlib.closing(pipe):
        pipe.write(line)
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = pipe.read(65536)
            if not chunk:
                raise AppGoneError("Assistant closed the connection before it answered.")
            answer += chunk
    return _parsed(answer)


def _parsed(answer: bytes) -> dict[str, Any]:
    value = json.loads(answer)
    if not isinstance(value, dict):
        raise ValueError("Assistant's answer is not a JSON object.")
    return value
