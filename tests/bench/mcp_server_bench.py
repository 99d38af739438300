"""Benchmark of `assistant mcp` (the memory served to other apps) on a data dir of 10,000
memories: how long an MCP client (the SDK's `Client`) takes to connect, list the tools, and run
`search_memory`, over stdio (the client starts `assistant mcp`) and over Streamable HTTP
(`assistant mcp --http 0` already running, with the data dir's token).

The memories are the memory benchmark's synthetic ones (`memory_bench.Corpus`), searched by
keywords alone (the settings name no embedding model: embedding 10,000 texts with the built-in
model would take minutes and time the wrong thing). The app is not running, so each request
opens the data dir under its lock, as `assistant mcp` does then.

Run as `python -m tests.bench.mcp_server_bench` (`make bench`).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from tests.bench.memory_bench import Corpus

ROOT = Path(__file__).resolve().parents[2]
MEMORIES = 10_000
RUNS = 3  # clients, each from its start
SEARCHES = 5  # searches per client after the first


def make_data_dir(root: Path) -> list[str]:
    """`MEMORIES` memories in `root` (keyword search only); a few queries about them."""
    from assistant.memory import SemanticMemory
    from assistant.paths import memory_dir, settings_file
    from assistant.settings import Settings

    settings = Settings(embedding_model="")
    settings.save(settings_file(root))
    corpus = Corpus()
    memory = SemanticMemory.open(memory_dir(root))
    try:
        for text, importance, _vector in corpus.memories(MEMORIES):
            memory.add(text, "fact", importance)
    finally:
        memory.close()
    return [query.text for query in corpus.queries(RUNS * (SEARCHES + 1))]


def environment(root: Path) -> dict[str, str]:
    """The child's environment: this data dir, no real keyring, no display."""
    return {
        **os.environ,
        "ASSISTANT_DATA_DIR": str(root),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "QT_QPA_PLATFORM": "offscreen",
    }


async def session(client: Any, queries: list[str], began: float) -> dict[str, Any]:
    """Time the listing and the searches of a connected client (`began`: before connecting)."""
    connected = time.perf_counter()
    tools = await client.list_tools()
    assert any(tool.name == "search_memory" for tool in tools.tools)
    listed = time.perf_counter()
    first = await client.call_tool("search_memory", {"query": queries[0], "k": 10})
    assert not first.is_error, first
    searched = time.perf_counter()
    later = []
    for query in queries[1:]:
        start = time.perf_counter()
        result = await client.call_tool("search_memory", {"query": query, "k": 10})
        assert not result.is_error, result
        later.append(time.perf_counter() - start)
    return {
        "connect": connected - began,
        "list": listed - connected,
        "first search": searched - listed,
        "to first result": searched - began,
        "later searches (median)": statistics.median(later),
    }


def over_stdio(root: Path, queries: list[str]) -> dict[str, Any]:
    """A client that starts `assistant mcp` itself, as Claude Desktop does."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "assistant", "mcp", "--data-dir", str(root)],
        env=environment(root),
        cwd=str(ROOT),
    )

    async def main() -> dict[str, Any]:
        began = time.perf_counter()
        async with Client(params) as client:
            return await session(client, queries, began)

    return anyio.run(main)


def over_http(url: str, token: str, queries: list[str]) -> dict[str, Any]:
    """A client of the running `assistant mcp --http`, with the token."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main() -> dict[str, Any]:
        began = time.perf_counter()
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            create_mcp_http_client(headers=headers) as http,  # the SDK's timeouts, as the app's
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await session(client, queries, began)

    return anyio.run(main)


def serve_http(root: Path) -> tuple[subprocess.Popen[str], str, float]:
    """`assistant mcp --http 0`: the process, its URL, seconds until it said it serves."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant", "mcp", "--http", "0", "--data-dir", str(root)],
        cwd=ROOT,
        env=environment(root),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    said = ""
    while not (found := re.search(r"http://127\.0\.0\.1:\d+/mcp", said)):
        line = proc.stderr.readline()
        if not line:
            raise SystemExit(f"assistant mcp --http exited:\n{said}")
        said += line
    return proc, found.group(0), time.perf_counter() - began


def runs(measure: Callable[[list[str]], dict[str, Any]], queries: list[str]) -> dict[str, float]:
    """The median of each figure over RUNS clients."""
    results = []
    for run in range(RUNS):
        chunk = queries[run * (SEARCHES + 1) : (run + 1) * (SEARCHES + 1)]
        results.append(measure(chunk))
    return {key: statistics.median(r[key] for r in results) for key in results[0]}


def row(name: str, figures: dict[str, float]) -> str:
    cells = " | ".join(f"{figures[key] * 1000:,.0f}" for key in figures)
    return f"| {name} | {cells} |"


def main() -> None:
    """Print the figures as a Markdown table (milliseconds, medians of RUNS clients)."""
    from assistant.mcp_server.http import TOKEN_FILE

    with tempfile.TemporaryDirectory(prefix="mcp-server-bench-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        queries = make_data_dir(root)
        made = time.perf_counter() - started
        print(f"assistant mcp on {MEMORIES:,} memories (made in {made:.0f} s)")
        load = os.getloadavg()[0]
        stdio = runs(lambda chunk: over_stdio(root, chunk), queries)
        print(f"| transport | {' | '.join(stdio)} |")
        print(f"|---|{'---:|' * len(stdio)}")
        print(row("stdio (the client starts it)", stdio), flush=True)
        proc, url, serving = serve_http(root)
        try:
            token = (root / TOKEN_FILE).read_text(encoding="utf-8").strip()
            http = runs(lambda chunk: over_http(url, token, chunk), queries)
        finally:
            proc.terminate()
            proc.wait(60)
        print(row("Streamable HTTP (already serving)", http))
        print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
        print(f"`assistant mcp --http` took {serving * 1000:,.0f} ms to start serving.")


if __name__ == "__main__":
    main()
