"""SIGKILL a writer process at random moments and check that no acknowledged write was lost."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from assistant.datalock import DataDirLock
from assistant.workspace import Workspace
from tests.reliability.writer import working_conversation

REPO = Path(__file__).resolve().parents[2]
READY_WAIT_S = 60.0


@dataclass
class Acked:
    """Everything the writer said was done, over all its runs on one data dir."""

    added: set[str] = field(default_factory=set)
    forgotten: set[str] = field(default_factory=set)
    forgetting: set[str] = field(default_factory=set)  # asked for; done or not
    messages: dict[str, set[str]] = field(default_factory=dict)
    counter: int = -1  # working memory or settings: the last value saved
    imported: set[str] = field(default_factory=set)
    writes: int = 0


@dataclass
class Outcome:
    """What one kill cost: the acknowledged writes missing afterwards (should be none)."""

    writes: int
    lost: list[str]
    warnings: list[str]


def run_and_kill(kind: str, root: Path, acked: Acked, rng: random.Random, log: Path) -> Outcome:
    """Start the writer, kill it with SIGKILL after a random time, check the data dir."""
    log.write_bytes(b"")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.writer", kind, str(root)],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.PIPE,
        )
    deadline = time.monotonic() + READY_WAIT_S
    while b"ready" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate()
            raise RuntimeError(f"the {kind} writer did not start: {err.decode()[-2000:]}")
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.5))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.stderr is not None
    proc.stderr.close()
    before = acked.writes
    complete = log.read_text().split("\n")[:-1]  # a kill can cut the last line short
    _record(kind, complete, acked)
    lost, warnings = check(kind, root, acked)
    return Outcome(acked.writes - before, lost, warnings)


def _record(kind: str, lines: list[str], acked: Acked) -> None:
    for line in lines:
        if line.startswith("forgetting "):
            acked.forgetting.add(line.split()[1])
        if not line.startswith("ack "):
            continue
        parts = line.split()[1:]
        acked.writes += 1
        if kind == "memories":
            (acked.added if parts[0] == "add" else acked.forgotten).add(parts[1])
        elif kind == "messages":
            acked.messages.setdefault(parts[0], set()).add(parts[1])
        elif kind in ("working", "settings"):
            acked.counter = int(parts[0])
        else:
            acked.imported.add(parts[0])


def check(kind: str, root: Path, acked: Acked) -> tuple[list[str], list[str]]:
    """The acknowledged writes missing from `root`, and the problems reported on opening it."""
    with DataDirLock(root):  # the killed writer's lock is stale: taken over
        workspace = Workspace.open(root)
        try:
            return _missing(kind, workspace, acked), workspace.warnings
        finally:
            workspace.close()


def _missing(kind: str, ws: Workspace, acked: Acked) -> list[str]:
    if kind == "memories":
        active = {i.id for i in ws.memory.all()}
        lost = [f"memory {i}" for i in acked.added - acked.forgetting if i not in active]
        return lost + [f"forget of {i}" for i in acked.forgotten & active]
    if kind == "messages":
        lost = []
        for cid, ids in acked.messages.items():
            have = {m.id for m in ws.conversations.load(cid).messages}
            lost += [f"message {cid}/{m}" for m in ids - have]
        return lost
    if kind == "working":
        conversation = working_conversation(ws.root)
        value = (
            -1 if conversation is None else int(ws.working.get(conversation).results.get("n", "-1"))
        )
        # Later values may be saved without their ack; an older one means a lost write.
        return [] if value >= acked.counter else [f"working n={value} after ack {acked.counter}"]
    if kind == "settings":
        value = ws.settings.memories_per_prompt
        return [] if value >= acked.counter else [f"settings {value} after ack {acked.counter}"]
    return [
        f"import {cid}"
        for cid in acked.imported
        if not ws.conversations.exists(cid) or len(ws.conversations.load(cid).messages) != 3
    ]
