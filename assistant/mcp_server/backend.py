"""Where `assistant mcp` runs a request: in the app, if it is running, else here.

One writer per data dir: while the app runs on it, requests go through its local socket (the
app runs them off its GUI thread, and a memory remembered shows in its sidebar at once). When
no app answers, this process takes the data dir's lock for the one request, opens the stores,
runs it, closes them and lets go: between requests the app can start at any time, and the next
request then goes through it. An app started during a request waits for the lock
(`DataDirLock.acquire(wait=...)`). Neither side waits forever: a request gives up after
`WAIT_S` with a message that says who holds the data.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant import app_link
from assistant.datalock import DataDirLock, DataDirLockedError
from assistant.errors import AssistantError
from assistant.fileio import remove_stale_temp_files

if TYPE_CHECKING:
    from assistant.memory import Embedder

log = logging.getLogger(__name__)

WAIT_S = 30.0  # for the data dir: the app starting up, or another process's short request
ANSWER_S = 300.0  # for the app's answer: a remember may wait for the model's decision
RETRY_S = 0.2


class Backend:
    """Runs the requests of one `assistant mcp` process, one at a time."""

    def __init__(self, root: Path, *, wait_s: float = WAIT_S) -> None:
        self.root = root
        self.wait_s = wait_s
        self._one_at_a_time = threading.Lock()  # one process opens the stores once at a time
        self._embedder: Embedder | None = None  # the built-in model, loaded once

    def run(self, op: str, args: dict[str, Any], client: str) -> str:
        """The answer to one request; AssistantError (with a message for the client's model)
        if it cannot be run."""
        request = {"action": "memory", "op": op, "args": args, "client": client}
        with self._one_at_a_time:
            return self._run(request)

    def _run(self, request: dict[str, Any]) -> str:
        deadline = time.monotonic() + self.wait_s
        while True:
            answer = self._ask_app(request)
            if answer is not None:
                if answer.get("ok") is True and isinstance(answer.get("text"), str):
                    return str(answer["text"])
                if answer.get("retry") is not True:  # the app refused it: say why
                    raise AssistantError(str(answer.get("error") or "Assistant refused it."))
                held = "Assistant is still opening its data"  # it will take the request soon
            else:
                try:
                    return self._run_here(request)
                except DataDirLockedError as exc:
                    held = str(exc)
            if time.monotonic() >= deadline:
                raise AssistantError(f"{held}; gave up after {self.wait_s:.0f} s. Try again.")
            time.sleep(RETRY_S)

    def _ask_app(self, request: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return app_link.ask(self.root, request, ANSWER_S)
        except app_link.AppGoneError:
            log.info("The app closed while it had a request; trying again")
            return None
        except (OSError, ValueError) as exc:  # TimeoutError is an OSError
            raise AssistantError(f"Could not reach the running Assistant: {exc}") from exc

    def _run_here(self, request: dict[str, Any]) -> str:
        """Open the data dir under its lock for this one request (DataDirLockedError if
        someone else has it)."""
        from assistant.mcp_server.operations import answer
        from assistant.workspace import Workspace

        with DataDirLock(self.root):
            remove_stale_temp_files(self.root)
            workspace = Workspace.open(self.root, embedder_before=self._embedder)
            self._embedder = workspace.embedder
            try:
                return answer(workspace, request)
            finally:
                workspace.close()
