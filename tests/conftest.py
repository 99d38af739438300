"""Every test: a fresh data dir, an in-memory keyring, offscreen Qt and no network but loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import keyring.errors
import pytest
from pytestqt.qtbot import QtBot

from assistant.mcp_client.manager import McpManager
from assistant.memory.projection import Projection
from assistant.workspace import Workspace
from tests.fake_openai import FakeOpenAI

pytest_plugins = ["tests.modal_guard"]

# Before pytest-qt creates the QApplication.
os.environ["QT_QPA_PLATFORM"] = "offscreen"

# pytest-qt's waits give up after 5 s by default. They guard against a hang, not a speed limit:
# on a busy machine (2 cores, CI, the suite beside a build) a background job can take longer.
QT_WAIT_MS = 30_000
for _wait in (QtBot.waitUntil, QtBot.waitSignal, QtBot.waitSignals, QtBot.waitCallback):
    _wait.__kwdefaults__["timeout"] = QT_WAIT_MS

# The long reliability suite runs with `make test-reliability` only.
collect_ignore = [] if os.environ.get("ASSISTANT_RELIABILITY") else ["reliability"]


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that keeps passwords in a dict."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.passwords.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError("no such password")


@pytest.fixture(autouse=True)
def _background_jobs_end() -> Iterator[None]:
    """A test's background jobs end with it: the global thread pool has one thread a core, and
    a job left running (a request to a server the test stopped) would hold one while the next
    test's jobs wait."""
    yield
    if "PySide6.QtCore" in sys.modules:
        from PySide6.QtCore import QThreadPool

        QThreadPool.globalInstance().waitForDone(QT_WAIT_MS)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A local server speaking the OpenAI API, scripted by the test."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data dir through `ASSISTANT_DATA_DIR`; user dirs point into the temp dir too."""
    root = tmp_path / "data"
    monkeypatch.setenv("ASSISTANT_DATA_DIR", str(root))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    return root


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    """An in-memory keyring backend, restored afterwards."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def _is_loopback(host: Any) -> bool:
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that tries to reach or resolve a non-loopback address."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            raise AssertionError(f"test tried to reach the network: {address!r}")

    def connect(sock: socket.socket, address: Any) -> None:
        check(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback(host):
            raise AssertionError(f"test tried to resolve a network host: {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture(scope="module")
def mcp_shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpManager]:
    """The test shop MCP server over stdio, one per test module (a start takes seconds)."""
    from tests.mcp_helpers import running, stdio, wait_state, write_config

    root = tmp_path_factory.mktemp("shop")
    write_config(root, {"shop": stdio("shop")})
    with running(root) as manager:
        ready = wait_state(manager, "shop", "ready", "failed")
        assert ready.state == "ready", ready.error
        yield manager


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many vectors each projection fitted from now on was fitted on."""
    counts: list[int] = []
    fit = Projection.fit.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Projection], rows: object, *args: object, **kw: object) -> object:
        counts.append(len(kw["among"]))  # type: ignore[arg-type]
        return fit(cls, rows, *args, **kw)

    monkeypatch.setattr(Projection, "fit", classmethod(counting))
    return counts


@pytest.fixture
def closed_workspaces(monkeypatch: pytest.MonkeyPatch) -> list[Workspace]:
    """Every workspace closed from now on."""
    closed: list[Workspace] = []
    close = Workspace.close

    def counting(self: Workspace) -> None:
        closed.append(self)
        close(self)

    monkeypatch.setattr(Workspace, "close", counting)
    return closed
