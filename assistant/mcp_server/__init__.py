"""Assistant's memory offered to other apps over the Model Context Protocol (`assistant mcp`).

No Qt here: while the app runs, requests reach it through its local socket (`backend`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["serve"]


def serve(root: Path) -> None:
    """Serve MCP over stdin/stdout on the data dir `root` until the client closes them."""
    from assistant.mcp_server.backend import Backend
    from assistant.mcp_server.server import build_server

    build_server(Backend(root)).run("stdio")
