"""Assistant's memory offered to other apps over the Model Context Protocol (`assistant mcp`).

No Qt here: while the app runs, requests reach it through its local socket (`backend`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["serve"]


def serve(root: Path, http_port: int | None = None) -> None:
    """Serve MCP on the data dir `root`: over stdin/stdout until the client closes them, or
    with `http_port` over Streamable HTTP on 127.0.0.1 until interrupted."""
    from assistant.mcp_server.backend import Backend
    from assistant.mcp_server.server import build_server

    server = build_server(Backend(root))
    if http_port is None:
        server.run("stdio")
    else:
        from assistant.mcp_server.http import serve_http

        serve_http(server, root, http_port)
