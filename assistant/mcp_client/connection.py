"""One MCP server's life in the client's event loop: start, list tools, serve calls, restart.

A server is started with the SDK's `Client` (stdio: the command in a process group of its own;
Streamable HTTP: the URL with its headers), which negotiates the protocol revision (the 2026
discovery, or the older initialize handshake). A start that takes longer than `start_timeout`
fails with a message that says so. When the connection ends by itself (the process exited), the
server is started again after a backoff that doubles, up to `MAX_RESTARTS` in a row.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TextIO

import anyio
import mcp_types
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from mcp.client import Client, Transport
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from assistant import APP_NAME, __version__
from assistant.mcp_client.config import ServerConfig
from assistant.mcp_client.results import McpResult, to_result
from assistant.mcp_client.status import McpTool, ServerFailedError, ServerStatus

log = logging.getLogger(__name__)

CALL_TIMEOUT = 300.0  # seconds for one tool call (a hang is stopped sooner by the reply's Stop)
MAX_RESTARTS = 5  # restarts in a row after a crash; then the server stays failed
STDERR_TAIL_CHARS = 2000
MAX_TOOL_PAGES = 50


class Connection:
    """Runs one server until `stop()`; reports each change of its status to `on_status`."""

    def __init__(
        self,
        config: ServerConfig,
        env: dict[str, str],
        on_status: Callable[[ServerStatus], None],
        *,
        start_timeout: float,
        first_backoff: float,
    ) -> None:
        self.config = config
        self._env = env  # `config.env` with the keyring's secrets filled in
        self._on_status = on_status
        self._start_timeout = start_timeout
        self._first_backoff = first_backoff
        self._client: Client | None = None
        self._stop = anyio.Event()
        self._wake = anyio.Event()  # ends a backoff early (a restart asked for)
        self._stderr: TextIO | None = None
        self._garbage = ""  # the first line the server wrote that is not MCP
        self.status = ServerStatus(config.name, "starting")

    def _set(self, status: ServerStatus) -> None:
        self.status = status
        self._on_status(status)

    def stop(self) -> None:
        """End the connection (call in the loop); `run` returns once the server is stopped."""
        self._stop.set()
        self._wake.set()

    async def run(self) -> None:
        """Start the server and keep it running, restarting it after a crash, until stopped."""
        failures = 0
        while not self._stop.is_set():
            self._set(ServerStatus(self.config.name, "starting"))
            try:
                await self._serve()
            except ServerFailedError as exc:
                error = str(exc)
            except Exception as exc:  # the SDK's and the transport's errors, in the user's words
                log.debug("MCP server %s failed", self.config.name, exc_info=True)
                error = _explain(exc)
            else:
                break  # stopped
            if self._stop.is_set():
                break
            failures += 1
            tail = self._stderr_tail()
            if failures > MAX_RESTARTS:
                self._set(ServerStatus(self.config.name, "failed", error=error, stderr_tail=tail))
                await self._stop.wait()
                break
            delay = self._first_backoff * 2 ** (failures - 1)
            note = f"{error} (starting again in {delay:g} s, try {failures} of {MAX_RESTARTS})"
            self._set(ServerStatus(self.config.name, "failed", error=note, stderr_tail=tail))
            self._wake = anyio.Event()
            with anyio.move_on_after(delay):
                await self._wake.wait()
        self._client = None
        self._set(ServerStatus(self.config.name, "stopped"))
        if self._stderr is not None:
            self._stderr.close()

    def restart(self) -> None:
        """Start again now if waiting to (call in the loop)."""
        self._wake.set()

    async def _serve(self) -> None:
        """One connection: start, list the tools, wait until it ends; raises if it failed.

        Everything runs inside one task group, so that a timeout or a stop cancels the
        client's own task groups from outside (the SDK's shutdown of the process is shielded).
        """
        closed, ready = anyio.Event(), anyio.Event()
        timed_out = False
        async with anyio.create_task_group() as group:

            async def watchdog() -> None:
                nonlocal timed_out
                with anyio.move_on_after(self._start_timeout):
                    await ready.wait()
                    return
                timed_out = True
                group.cancel_scope.cancel()

            async def stop_when_asked() -> None:
                await self._stop.wait()
                group.cancel_scope.cancel()

            group.start_soon(watchdog)
            group.start_soon(stop_when_asked)
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack)
                client = Client(
                    _watched(transport, closed, self._not_mcp),
                    read_timeout_seconds=CALL_TIMEOUT,
                    client_info=mcp_types.Implementation(name=APP_NAME, version=__version__),
                )
                await stack.enter_async_context(client)
                tools, refused = await _list_tools(client, self.config.name)
                ready.set()
                self._client = client
                self._set(ServerStatus(self.config.name, "ready", tools=tools, refused=refused))
                try:
                    await closed.wait()
                finally:
                    self._client = None
            group.cancel_scope.cancel()
        if timed_out:
            said = f"; it wrote what is not MCP: {self._garbage}" if self._garbage else ""
            raise ServerFailedError(
                f"the server did not answer within {self._start_timeout:g} seconds{said}"
            )
        if not self._stop.is_set():
            raise ServerFailedError("the server closed the connection (it may have crashed)")

    def _not_mcp(self, error: Exception) -> None:
        """Keep the first line the server wrote that is not a protocol message."""
        if not self._garbage:
            errors = getattr(error, "errors", None)
            found = errors()[0].get("input") if callable(errors) and errors() else None
            text = found if isinstance(found, str) else str(error)
            self._garbage = repr(text[:80] + ("…" if len(text) > 80 else ""))

    async def _transport(self, stack: AsyncExitStack) -> Transport:
        config = self.config
        if config.transport == "http":
            http = await stack.enter_async_context(
                create_mcp_http_client(headers=dict(config.headers) or None)
            )
            return streamable_http_client(config.url, http_client=http)
        # One file per start: the tail after a failure is that start's own (a restart's
        # lines would otherwise repeat the earlier ones'); the last is closed when `run` ends.
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env=self._env,
            cwd=config.cwd or None,
            encoding_error_handler="replace",
        )
        return stdio_client(params, errlog=self._stderr)

    def _stderr_tail(self) -> str:
        """The end of what the server wrote to stderr since it was last started."""
        if self._stderr is None:
            return ""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - STDERR_TAIL_CHARS)
        text = os.pread(fd, size - start, start).decode("utf-8", errors="replace")
        return text.split("\n", 1)[-1] if start else text

    async def call(self, name: str, arguments: dict[str, Any]) -> McpResult:
        """Call a tool; ServerFailedError if the server is not ready or the call failed."""
        client = self._client
        if client is None:
            raise ServerFailedError(f"MCP server '{self.config.name}' is not running.")
        try:
            result = await client.call_tool(name, arguments)
        except TimeoutError:
            raise ServerFailedError(
                f"MCP server '{self.config.name}' did not answer within {CALL_TIMEOUT:.0f} seconds."
            ) from None
        except (MCPError, RuntimeError, ValueError) as exc:  # RuntimeError: bad structured output
            raise ServerFailedError(f"MCP server '{self.config.name}': {_explain(exc)}") from exc
        return to_result(result)


def _explain(exc: BaseException) -> str:
    """An error in words; an exception group (anyio task groups) by its first real error."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({exc.filename or exc})"
    if isinstance(exc, PermissionError):
        return f"the command cannot be run: permission denied ({exc.filename or exc})"
    if isinstance(exc, MCPError):
        if exc.error.code == mcp_types.CONNECTION_CLOSED:
            return "the server closed the connection (it may have crashed)"
        return exc.error.message
    text = str(exc)
    return text or type(exc).__name__


async def _list_tools(client: Client, server: str) -> tuple[tuple[McpTool, ...], tuple[str, ...]]:
    """Every page of the server's tools; those with an unusable schema are refused (with why)."""
    if client.server_capabilities.tools is None:
        return (), ()
    tools: list[McpTool] = []
    refused: list[str] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            problem = schema_problem(tool.input_schema)
            if problem:
                refused.append(
                    f"MCP server '{server}', tool '{tool.name}': its input schema is not valid "
                    f"JSON Schema ({problem}); the tool is not offered."
                )
                continue
            hints = tool.annotations or mcp_types.ToolAnnotations()
            tools.append(
                McpTool(
                    server=server,
                    name=tool.name,
                    description=(tool.description or "").strip(),
                    input_schema=tool.input_schema,
                    title=tool.title or hints.title or "",
                    read_only=hints.read_only_hint is True,
                    destructive=hints.destructive_hint is True,
                )
            )
        cursor = page.next_cursor
        if cursor is None:
            break
    for message in refused:
        log.warning(message)
    return tuple(tools), tuple(refused)


def schema_problem(schema: Any) -> str:
    """Why `schema` cannot describe a tool's arguments ('' if it can)."""
    if not isinstance(schema, dict):
        return "it is not a JSON object"
    if schema.get("type", "object") != "object":
        return "its type is not 'object'"
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        return str(exc.message)
    return ""


@asynccontextmanager
async def _watched(
    transport: Transport, closed: anyio.Event, not_mcp: Callable[[Exception], None]
) -> AsyncIterator[Any]:
    """`transport`, with `closed` set when the server's side ends (a crash, an exit), and
    `not_mcp` told what the server wrote that is not a protocol message."""
    async with transport as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def forward() -> None:
            try:
                async with send:
                    async for message in read:
                        if isinstance(message, Exception):
                            not_mcp(message)
                        await send.send(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
            finally:
                closed.set()

        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            try:
                yield receive, write
            finally:
                group.cancel_scope.cancel()
