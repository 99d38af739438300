"""`assistant mcp --http PORT`: the same server over Streamable HTTP, for clients that cannot
start a command.

It listens on 127.0.0.1 only, and every request must carry the data dir's token
(`Authorization: Bearer TOKEN`): the token is made once, kept in `<data dir>/mcp-token` (readable
by the user only), and any other local program without it is refused with 401.
"""

from __future__ import annotations

import hmac
import json
import secrets
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from assistant.errors import StorageError
from assistant.fileio import atomic_write_bytes, storage_error

HOST = "127.0.0.1"
PATH = "/mcp"
TOKEN_FILE = "mcp-token"

Scope = dict[str, Any]
Receive = Any
Send = Any


def token(root: Path) -> str:
    """The data dir's token for MCP over HTTP, made on first use."""
    path = root / TOKEN_FILE
    try:
        kept = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        kept = ""
    except OSError as exc:
        raise storage_error("read the MCP token", path, exc) from exc
    if len(kept) >= 32:
        return kept
    made = secrets.token_urlsafe(32)
    atomic_write_bytes(path, made.encode() + b"\n")  # 0600, as temp files are made
    return made


class TokenGate:
    """An ASGI app that passes on only the HTTP requests that carry the token."""

    def __init__(self, app: Any, secret: str) -> None:
        self.app = app
        self._expected = f"Bearer {secret}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers", ())).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _refuse(send)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send) -> None:
    body = json.dumps({"error": f"Send the token of {TOKEN_FILE} as a Bearer token."}).encode()
    headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve_http(server: MCPServer, root: Path, port: int) -> None:
    """Serve `server` at http://127.0.0.1:PORT/mcp until interrupted (PORT 0: any free one);
    says where on stderr once it listens."""
    import uvicorn  # the SDK's own choice of server

    try:
        secret = token(root)
    except StorageError as exc:
        print(f"assistant: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc
    security = TransportSecuritySettings(  # a web page's request by another host name: refused
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{HOST}:*", "localhost:*"],
        allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
    )
    app = TokenGate(server.streamable_http_app(transport_security=security, host=HOST), secret)
    config = uvicorn.Config(app, host=HOST, port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)

    async def run() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(web.serve)
            while not web.started:
                if web.should_exit:
                    return
                await anyio.sleep(0.05)
            [listening] = [s for server in web.servers for s in server.sockets]
            bound = listening.getsockname()[1]
            print(
                f"Serving MCP at http://{HOST}:{bound}{PATH} (send the token in "
                f"{root / TOKEN_FILE} as 'Authorization: Bearer TOKEN')",
                file=sys.stderr,
                flush=True,
            )

    anyio.run(run)
