"""`assistant mcp --http PORT`: Streamable HTTP on 127.0.0.1, with the data dir's token."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from assistant.mcp_server.http import TOKEN_FILE
from assistant.memory import SemanticMemory
from assistant.paths import memory_dir
from tests import child
from tests.test_mcp_server import no_process_left, text_of

__all__ = ["no_process_left"]  # the fixture, used here too


@pytest.fixture
def served(data_dir: Path) -> Iterator[str]:
    """`assistant mcp --http 0` on the data dir; the URL it says it serves at."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "mcp", "--http", "0", "--data-dir", str(data_dir)],
        cwd=child.REPO,
        env=child.environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        lines = []
        while not (found := re.search(r"http://127\.0\.0\.1:\d+/mcp", "".join(lines))):
            line = proc.stderr.readline()
            assert line, "".join(lines)  # it exited without serving
            lines.append(line)
        yield found.group(0)
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl+C
        try:
            proc.wait(timeout=child.TIMEOUT_S)
        finally:
            proc.kill()
            proc.stderr.close()


def test_a_client_with_the_token_remembers(data_dir: Path, served: str) -> None:
    token = (data_dir / TOKEN_FILE).read_text().strip()
    assert (data_dir / TOKEN_FILE).stat().st_mode & 0o077 == 0  # the user's only

    async def main() -> str:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers) as http:
            transport = streamable_http_client(served, http_client=http)
            info = Implementation(name="jan", title="Jan", version="1")
            async with Client(transport, client_info=info) as client:
                return text_of(await client.call_tool("remember", {"text": "The user is a nurse."}))

    said = anyio.run(main)
    assert said.startswith("Remembered as [")
    memory = SemanticMemory.open(memory_dir(data_dir))
    [item] = memory.all()
    memory.close()
    assert (item.origin, item.client) == ("mcp", "jan")  # clientInfo.name, not its title


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic abc"])
def test_a_request_without_the_token_is_refused(served: str, header: str | None) -> None:
    headers = {} if header is None else {"Authorization": header}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx2.post(served, json=body, headers=headers)
    assert response.status_code == 401
    assert TOKEN_FILE in response.json()["error"]


def test_a_request_naming_another_host_is_refused(data_dir: Path, served: str) -> None:
    """A web page that rebinds its own name to 127.0.0.1 sends its name as the Host."""
    token = (data_dir / TOKEN_FILE).read_text().strip()
    headers = {"Authorization": f"Bearer {token}", "Host": "attacker.example:80"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx2.post(served, json=body, headers=headers)
    assert response.status_code in (403, 421)
