"""All MCP servers of a data dir, run in an event loop on a thread of their own.

The rest of the app calls plain blocking methods from any thread (never the GUI thread for
`call`); status changes are told to subscribers on the loop's thread.

Servers start when the app opens (`start()`), not on first use: a server's start (an `npx`
download, a Python import) can take seconds, and its tools must be known before the first
turn so that the model can be offered them; a failed server shows in Settings at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from concurrent.futures import CancelledError, Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from assistant.agent.cancel import CancelToken, OperationCancelledError
from assistant.credentials import Credentials
from assistant.errors import ToolError
from assistant.mcp_client.config import McpConfig, ServerConfig, config_path
from assistant.mcp_client.status import McpTool, ServerFailedError, ServerStatus
from assistant.memory.subscribers import Subscribers

if TYPE_CHECKING:  # the SDK loads in the loop's thread: it takes a while
    from assistant.mcp_client.connection import Connection
    from assistant.mcp_client.results import McpResult

log = logging.getLogger(__name__)

_T = TypeVar("_T")
STOP_TIMEOUT = 15.0  # seconds for every server to stop (the SDK kills after about 4)
START_TIMEOUT = 30.0  # seconds for a server to start and list its tools
CALL_TIMEOUT = 300.0  # seconds for one tool call (a hang is stopped sooner by the reply's Stop)
FIRST_BACKOFF = 1.0  # seconds before the first restart after a crash; doubles each time


class McpManager:
    """Starts, watches and stops the servers listed in `<root>/mcp.json`."""

    def __init__(
        self,
        root: Path,
        credentials: Credentials,
        *,
        start_timeout: float = START_TIMEOUT,
        first_backoff: float = FIRST_BACKOFF,
        call_timeout: float = CALL_TIMEOUT,
    ) -> None:
        self.path = config_path(root)
        self._credentials = credentials
        self._start_timeout = start_timeout
        self._first_backoff = first_backoff
        self._call_timeout = call_timeout
        self._lock = threading.Lock()
        self._statuses: dict[str, ServerStatus] = {}
        self._connections: dict[str, Connection] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.config = McpConfig.load(self.path)
        self.changed: Subscribers[ServerStatus] = Subscribers("MCP server status")

    # -- life ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start every enabled server, in the background (returns at once)."""
        self.apply(self.config)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        """The event loop's thread, started on first need."""
        if self._loop is not None:
            return self._loop
        loop = asyncio.new_event_loop()

        def run() -> None:
            try:
                loop.run_forever()
            finally:
                loop.close()

        # The SDK is imported in the loop's thread (by `_start_one`): it takes a while.
        self._thread = threading.Thread(target=run, name="mcp-client", daemon=True)
        self._loop = loop
        self._thread.start()
        return loop

    def close(self) -> None:
        """Stop every server (their processes too) and the loop; blocks up to STOP_TIMEOUT."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            self._run(self._stop_all(), timeout=STOP_TIMEOUT)
        except TimeoutError:
            log.warning("MCP servers did not stop within %.0f s", STOP_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(STOP_TIMEOUT)
        self._loop = self._thread = None

    async def _stop_all(self) -> None:
        for connection in self._connections.values():
            connection.stop()
        tasks = list(self._tasks.values())
        if tasks:
            await asyncio.wait(tasks)

    def apply(self, config: McpConfig) -> None:
        """Use `config`: start new and changed servers, stop removed and disabled ones."""
        self.config = config
        with self._lock:
            self._statuses = {
                name: status
                for name, status in self._statuses.items()
                if name in config.servers or name in config.problems
            }
        for name, problem in config.problems.items():
            self._report(ServerStatus(name, "failed", error=problem))
        if config.servers or self._loop is not None:
            self._submit(self._apply(config))

    async def _apply(self, config: McpConfig) -> None:
        for name, connection in list(self._connections.items()):
            wanted = config.servers.get(name)
            if wanted is None or wanted.disabled or wanted != connection.config:
                await self._stop_one(name)
        for name, server in config.servers.items():
            if server.disabled:
                self._report(ServerStatus(name, "disabled"))
            elif name not in self._connections:
                self._start_one(server)

    def _start_one(self, server: ServerConfig) -> None:
        from assistant.mcp_client.connection import Connection

        try:
            env = self._environment(server)
        except ServerFailedError as exc:
            self._report(ServerStatus(server.name, "failed", error=str(exc)))
            return
        connection = Connection(
            server,
            env,
            self._report,
            start_timeout=self._start_timeout,
            first_backoff=self._first_backoff,
            call_timeout=self._call_timeout,
        )
        self._connections[server.name] = connection
        self._tasks[server.name] = asyncio.get_running_loop().create_task(connection.run())

    async def _stop_one(self, name: str) -> None:
        connection = self._connections.pop(name)
        task = self._tasks.pop(name)
        connection.stop()
        await task

    def restart(self, name: str) -> None:
        """Stop a server if it runs and start it again (a failed one too)."""
        server = self.config.servers.get(name)
        if server is None or server.disabled:
            return

        async def again() -> None:
            if name in self._connections:
                await self._stop_one(name)
            self._start_one(server)

        self._submit(again())

    def _environment(self, server: ServerConfig) -> dict[str, str]:
        """The server's env with the secrets kept in the keyring filled in."""
        env = dict(server.env)
        for key in server.secret_names():
            value = self._credentials.secret(mcp_secret_name(server.name, key))
            if value is None:
                raise ServerFailedError(
                    f"the secret {key} is not in the keyring; enter it again in Settings"
                )
            env[key] = value
        return env

    # -- status ----------------------------------------------------------------------------------

    def _report(self, status: ServerStatus) -> None:
        with self._lock:
            self._statuses[status.name] = status
        if status.state == "failed":
            log.warning("MCP server %s failed: %s", status.name, status.error)
        self.changed.notify(status)

    def statuses(self) -> list[ServerStatus]:
        """Every listed server's status, in the order of mcp.json."""
        with self._lock:
            known = dict(self._statuses)
        names = dict.fromkeys([*self.config.raw.get("mcpServers", {}), *self.config.servers])
        return [known.get(name, ServerStatus(name, "starting")) for name in names]

    def tools(self) -> list[McpTool]:
        """The tools of the servers that are ready."""
        with self._lock:
            return [
                tool
                for status in self._statuses.values()
                for tool in status.tools
                if status.state == "ready"
            ]

    # -- calls -----------------------------------------------------------------------------------

    def call(
        self, server: str, tool: str, arguments: dict[str, Any], cancel: CancelToken
    ) -> McpResult:
        """Call a tool and wait for its result; OperationCancelledError on `cancel`, ToolError
        if the server is not running or the call failed."""
        connection = self._connections.get(server)
        if connection is None or self._loop is None:
            raise ToolError(f"MCP server '{server}' is not running.")
        future = asyncio.run_coroutine_threadsafe(connection.call(tool, arguments), self._loop)

        def stop() -> None:
            future.cancel()  # the call's task is cancelled in the loop

        unregister = cancel.on_cancel(stop)
        try:
            return future.result()
        except ServerFailedError as exc:
            raise ToolError(str(exc)) from None
        except CancelledError:
            raise OperationCancelledError from None
        finally:
            unregister()

    def _run(self, coroutine: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        """Run `coroutine` in the loop and wait for it."""
        return self._submit(coroutine).result(timeout)

    def _submit(self, coroutine: Coroutine[Any, Any, _T]) -> Future[_T]:
        """Run `coroutine` in the loop; its failure is logged (a bug: it reports its own)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._ensure_loop())

        def done(finished: Future[_T]) -> None:
            if not finished.cancelled() and finished.exception() is not None:
                log.error("MCP client task failed", exc_info=finished.exception())

        future.add_done_callback(done)
        return future


def mcp_secret_name(server: str, variable: str) -> str:
    """The keyring entry of one server's secret env variable."""
    return f"mcp:{server}:{variable}"
