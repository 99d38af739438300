"""Benchmark of the MCP client: from opening the app's data to the first MCP tool available (a
stdio server written with the SDK), a tool call's round trip, and tool selection with 200 tools
from 10 servers (`mcp_catalog`): the size of the tools part of each request and the share of
requests whose right tool is among those offered.

Run as `python -m tests.bench.mcp_bench` (`make bench`).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from tests.bench.mcp_catalog import CATALOG, REQUESTS

ROOT = Path(__file__).resolve().parents[2]
START_RUNS = 3
CALLS = 30
TOOLS_TOKEN_BUDGET = 2500  # the tools part of a request, in estimated tokens

_START = """
import sys, time
start = time.perf_counter()
from pathlib import Path
from assistant.workspace import Workspace
workspace = Workspace.open(Path(sys.argv[1]))
workspace.mcp.start()
while not workspace.mcp.tools():
    time.sleep(0.005)
print(time.perf_counter() - start)
workspace.close()
"""


def config(root: Path) -> None:
    """An mcp.json with the test shop server over stdio."""
    from tests.mcp_helpers import stdio, write_config

    write_config(root, {"shop": stdio("shop")})


def start_to_first_tool() -> list[float]:
    """Seconds from opening the data dir (imports included) to the shop's tools, per run."""
    times = []
    for _ in range(START_RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            config(Path(tmp))
            out = subprocess.run(
                [sys.executable, "-c", _START, tmp],
                check=False,
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            if out.returncode:
                raise SystemExit(out.stderr)
            times.append(float(out.stdout.split()[-1]))
    return times


def round_trips() -> list[float]:
    """Milliseconds per call of a read-only tool, the server running."""
    from assistant.agent.cancel import CancelToken
    from assistant.credentials import Credentials
    from assistant.mcp_client.manager import McpManager

    with tempfile.TemporaryDirectory() as tmp:
        config(Path(tmp))
        manager = McpManager(Path(tmp), Credentials())
        manager.start()
        try:
            while not manager.tools():
                time.sleep(0.01)
            times = []
            for i in range(CALLS):
                started = time.perf_counter()
                manager.call("shop", "lookup_order", {"order_id": f"A-{i}"}, CancelToken())
                times.append((time.perf_counter() - started) * 1000)
        finally:
            manager.close()
    return times


class _Listed:
    """The catalog as the ready servers' tools (selection needs no running server)."""

    def __init__(self) -> None:
        from assistant.mcp_client.status import McpTool

        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        self.listed = [
            McpTool(server, name, description, schema, read_only=True)
            for server, tools in CATALOG.items()
            for name, description in tools
        ]

    def tools(self) -> list[Any]:
        return self.listed


def selection(embedder: Any) -> tuple[float, int, int, list[str]]:
    """(share of requests whose tool is offered, largest tools part in tokens, tokens of all
    200 tools offered, the requests missed)."""
    from assistant.agent.builtin_tools import builtin_registry
    from assistant.mcp_client.agent_tools import McpToolSource, model_name
    from assistant.mcp_client.manager import McpManager
    from assistant.mcp_client.selection import ToolIndex
    from assistant.memory import estimate_tokens

    listed = _Listed()
    source = McpToolSource(cast(McpManager, listed), ToolIndex(embedder))
    hits, largest, missed = 0, 0, []
    for request, wanted in REQUESTS:
        registry = builtin_registry(long_term_memory=True)
        registry.add_extra(*source.tools_for(request))
        offered = {entry["function"]["name"] for entry in registry.schemas()}
        largest = max(largest, estimate_tokens(json.dumps(registry.schemas())))
        if model_name(*wanted.split("/")) in offered:
            hits += 1
        else:
            missed.append(f"{request!r} -> {wanted}")
    everything = builtin_registry(long_term_memory=True)
    tools, _ = source.tools_for("")
    everything.add_extra(tools, frozenset())
    total = estimate_tokens(json.dumps(everything.schemas()))
    return hits / len(REQUESTS), largest, total, missed


def main() -> None:
    """Print the figures."""
    from assistant.memory import LocalEmbedder

    print("MCP client")
    starts = start_to_first_tool()
    print(
        f"  open the data dir -> first MCP tool (stdio): median {statistics.median(starts):.2f} s"
        f" (runs: {', '.join(f'{t:.2f}' for t in starts)})"
    )
    trips = sorted(round_trips())
    p90 = trips[int(len(trips) * 0.9) - 1]
    median = statistics.median(trips)
    print(f"  tool call round trip (stdio): median {median:.1f} ms, p90 {p90:.1f} ms")
    count = sum(len(tools) for tools in CATALOG.values())
    for label, embedder in (("keywords only", None), ("hybrid", LocalEmbedder())):
        share, largest, total, missed = selection(embedder)
        verdict = "within" if largest <= TOOLS_TOKEN_BUDGET else "OVER"
        print(
            f"  tool selection, {count} tools from {len(CATALOG)} servers ({label}): right tool "
            f"offered for {share:.0%} of {len(REQUESTS)} requests; tools part at most "
            f"{largest:,} tokens ({verdict} the {TOOLS_TOKEN_BUDGET:,} budget; all tools: "
            f"{total:,})"
        )
        for line in missed:
            print(f"    missed: {line}")


if __name__ == "__main__":
    main()
