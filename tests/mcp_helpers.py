"""Helpers for the MCP client tests: mcp.json entries for the test servers, waiting, processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assistant.mcp_client.manager import McpManager
from assistant.mcp_client.status import ServerStatus

SERVERS = "tests.mcp_servers"
ROOT_ENV = "MCP_TEST_ROOT"
ROOT = Path(__file__).resolve().parent.parent


def stdio(kind: str, *args: str, **extra: Any) -> dict[str, Any]:
    """The mcp.json entry of a test server run over stdio."""
    return {
        "command": sys.executable,
        "args": ["-m", SERVERS, kind, *args],
        "cwd": str(ROOT),
        **extra,
    }


def write_config(root: Path, servers: dict[str, Any], **top: Any) -> Path:
    """Write `<root>/mcp.json` listing `servers`; each stdio one knows `root` (MCP_TEST_ROOT),
    so that `server_processes(root)` finds the processes of this test's servers only."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in servers.values():
        if isinstance(entry, dict) and "command" in entry:
            entry["env"] = {**entry.get("env", {}), ROOT_ENV: str(root)}
    path = root / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers, **top}), encoding="utf-8")
    return path


def wait_until(check: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll `check` until it holds; AssertionError after `timeout` (generous: not a limit)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.02)


def status(manager: McpManager, name: str) -> ServerStatus:
    """The status of one server."""
    return next(s for s in manager.statuses() if s.name == name)


def wait_state(manager: McpManager, name: str, *states: str) -> ServerStatus:
    """Wait until server `name` is in one of `states`; its status."""
    wait_until(lambda: status(manager, name).state in states)
    return status(manager, name)


def server_processes(root: Path) -> list[int]:
    """The pids of the servers of `root`'s mcp.json that this process started and that live."""
    found = []
    me = str(os.getpid())
    mark = f"{ROOT_ENV}={root}\0".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            environ = (entry / "environ").read_bytes() + b"\0"
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[1] == me and mark in environ and fields[0] != "Z":
            found.append(int(entry.name))
    return found


@contextmanager
def running(root: Path, **options: Any) -> Iterator[McpManager]:
    """A started manager on `root`; closed after, checking no server or thread is left."""
    manager = McpManager(root, options.pop("credentials", None) or _credentials(), **options)
    manager.start()
    try:
        yield manager
    finally:
        thread = manager._thread
        manager.close()
        assert server_processes(root) == [], "a server process was left behind"
        assert thread is None or not thread.is_alive(), "the client's thread was left behind"


def _credentials() -> Any:
    from assistant.credentials import Credentials

    return Credentials()


@contextmanager
def http_server(kind: str, *args: str) -> Iterator[str]:
    """A test server over Streamable HTTP on 127.0.0.1; yields its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", SERVERS, kind, *args, "--http"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("port "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.terminate()
        process.wait(30)
