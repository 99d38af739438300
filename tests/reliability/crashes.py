"""The failpoint harness, in the spirit of SQLite's crash tests: run the workload
(`tests.reliability.workload`) once to list every failpoint it passes, then once per failpoint
and occurrence with a crash (SIGKILL) there, and after each crash reopen the data dir and check
what must hold whatever the moment of the crash (`check`):

- every acknowledged write is there (settings, working memory, messages, titles, summaries,
  memories and their edits, projects and moves into them, imports, proposals waiting for
  review, accepted ones as memories, rejected ones as tombstones), and nothing acknowledged as
  deleted or forgotten is;
- a forgotten memory is not active, and once a close (which compacts) was acknowledged after
  its forget, no file of the data dir holds its words; nor, once acknowledged, a rejected
  proposal's;
- every vector on disk belongs to the current text of its memory or message, or of its
  knowledge passage;
- the knowledge index holds, for each file, a version the file had, never older than one
  acknowledged, and no file acknowledged as removed; scanned, it is what the files give;
- the derived files agree with the logs: reopening after deleting every cache gives the same;
- nothing is reported on reopening (a crash is not damage), and nothing is left in a
  `.corrupt-*` copy or deleted that had content.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.datalock import DataDirLock
from assistant.failpoints import ENV
from assistant.fileio import remove_stale_temp_files
from assistant.knowledge import Knowledge
from assistant.knowledge.index import digest
from assistant.knowledge.library import KNOWLEDGE_DIR
from assistant.knowledge.vector_log import VectorLog
from assistant.memory import ConversationStore, Inbox
from assistant.memory.message_vectors import MessageVectors
from assistant.memory.semantic import SemanticMemory
from assistant.memory.working import WorkingMemoryStore
from assistant.paths import conversations_dir, memory_dir, settings_file
from assistant.projects import ProjectStore
from assistant.settings import Settings
from tests.embedders import HashEmbedder, hashed_vector
from tests.reliability.workload import PROJECT_STATES, PROPOSED, knowledge_text

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120  # a guard against a hang, not a speed limit
SAME_VECTOR = 0.98  # cosine: the stored vector is the text's (8-bit rows are not exact)
DERIVED = (
    "memory/semantic-index.npz",
    "memory/vectors-*",
    "conversations/index.json",
    "knowledge/passages.jsonl",
    "knowledge/vectors-*",
)
DERIVED_MESSAGES = "conversations/vectors-*"


@dataclass
class Run:
    """What the workload said before it ended (or was killed)."""

    acks: list[dict[str, Any]] = field(default_factory=list)
    forgetting: set[str] = field(default_factory=set)  # forgets asked for: done or not
    reviewing: set[str] = field(default_factory=set)  # proposals accepted or rejected, or not
    crashed: bool = False

    def acked(self, what: str) -> list[dict[str, Any]]:
        """The acknowledgements of one kind, in order."""
        return [a for a in self.acks if a["ack"] == what]


def workload(root: Path, failpoints: str = "") -> Run:
    """Run the workload on `root` (with `ASSISTANT_FAILPOINTS=failpoints`) to its end or crash."""
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    env[ENV] = failpoints
    proc = subprocess.run(
        [sys.executable, "-m", "tests.reliability.workload", str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    run = Run(crashed=proc.returncode != 0)
    if proc.returncode not in (0, -9, 137):
        raise RuntimeError(f"the workload failed: {proc.stderr.decode()[-3000:]}")
    for line in proc.stdout.decode().split("\n")[:-1]:  # a kill can cut the last one short
        record = json.loads(line)
        if "forgetting" in record:
            run.forgetting.add(record["forgetting"])
        elif "reviewing" in record:
            run.reviewing.add(record["reviewing"])
        else:
            run.acks.append(record)
    return run


def failpoints(tmp: Path) -> list[str]:
    """Every failpoint the workload passes, in order, as often as it passes each."""
    trace = tmp / "trace.txt"
    root = tmp / "traced"
    root.mkdir()
    run = workload(root, f"trace:{trace}")
    problems = check(root, run)
    assert run.acks[-1]["ack"] == "done" and not problems, problems
    return trace.read_text(encoding="utf-8").split()


def crash_points(trace: list[str], *, every: bool = True) -> list[tuple[str, int]]:
    """(failpoint, occurrence) to crash at: each failpoint's first, middle and last passage
    (`every`), or only its first."""
    counts = Counter(trace)
    points: list[tuple[str, int]] = []
    for name in dict.fromkeys(trace):
        n = counts[name]
        chosen = sorted({1, (n + 1) // 2, n}) if every else [1]
        points += [(name, at) for at in chosen]
    return points


def crash_and_check(tmp: Path, name: str, at: int) -> list[str]:
    """Crash the workload at the `at`-th passage of failpoint `name`; the problems found."""
    root = tmp / f"{name}@{at}"
    root.mkdir()
    run = workload(root, f"crash:{name}@{at}")
    if not run.crashed:
        return [f"{name}@{at}: the workload did not reach it"]
    return [f"{name}@{at}: {p}" for p in check(root, run)]


# -- the checks ---------------------------------------------------------------------------------


@dataclass
class State:
    """What a data dir holds, as the stores read it."""

    settings: int
    working: dict[str, str]
    # title, summary, message ids, project
    conversations: dict[str, tuple[str, str, tuple[str, ...], str | None]]
    memories: dict[str, tuple[str, str, str | None]]  # id: text, state, project (not forgotten)
    projects: dict[str, tuple[str, bool]]  # id: name, isolated
    inbox: tuple[str, ...]  # the ids of the proposals waiting for review
    buried: tuple[str, ...]  # the proposed texts that are forgotten facts (rejected)
    knowledge: dict[str, tuple[str, ...]]  # path: its passages, once the folder was scanned


def check(root: Path, run: Run) -> list[str]:
    """What is wrong in `root` after `run` (see the module's docstring)."""
    problems: list[str] = []
    with DataDirLock(root):  # the killed workload's lock is stale: taken over
        remove_stale_temp_files(root)
        problems += _knowledge_problems(root, run)
        state = _open(root, problems, with_vectors=True)
        problems += _missing(state, run)
        problems += _leftovers(root, run)
        for pattern in (*DERIVED, DERIVED_MESSAGES):
            for path in root.glob(pattern):
                path.unlink()
        rebuilt = _open(root, [], with_vectors=False)
    if rebuilt != state:
        problems.append(f"the caches disagreed with the logs: {state} != {rebuilt} rebuilt")
    return problems


def _open(root: Path, problems: list[str], *, with_vectors: bool) -> State:
    """Open every store, note its warnings and (`with_vectors`) any stale vector."""
    settings, warnings = Settings.load(settings_file(root))
    working = WorkingMemoryStore(memory_dir(root))
    memory = SemanticMemory.open(memory_dir(root), HashEmbedder())
    conversations = ConversationStore(root, HashEmbedder())
    projects = ProjectStore(root)
    try:
        listing = conversations.all()
        warnings += working.warnings + memory.warnings + conversations.warnings
        warnings += projects.warnings
        problems += [f"reported on opening: {w}" for w in warnings]
        loaded = {info.id: conversations.load(info.id) for info in listing}
        if with_vectors:
            problems += _stale_memory_vectors(memory)
            problems += _stale_message_vectors(root, loaded)
        return State(
            settings.memories_per_prompt,
            {cid: working.get(cid).task for cid in working.conversation_ids()},
            {
                cid: (c.title, c.summary, tuple(m.id for m in c.messages), c.project)
                for cid, c in loaded.items()
            },
            {
                i.id: (i.text, i.state, i.project)
                for i in memory.all(None)
                if i.state != "forgotten"
            },
            {p.id: (p.name, p.isolated) for p in projects.all()},
            tuple(p.id for p in Inbox(memory_dir(root)).pending()),
            tuple(t for t in PROPOSED if memory.resemblance(t) is not None),
            _scanned(root),
        )
    finally:
        memory.close()
        conversations.close()


def _scanned(root: Path) -> dict[str, tuple[str, ...]]:
    """The knowledge index once its folder was scanned: each file's passages."""
    knowledge = Knowledge(root, HashEmbedder())
    try:
        knowledge.sync()
        return {
            p: tuple(c.text for c in knowledge.index.chunks_of(p)) for p in knowledge.index.paths()
        }
    finally:
        knowledge.close()


def _knowledge_problems(root: Path, run: Run) -> list[str]:
    """What is wrong with the knowledge index as a crash left it (before any scan)."""
    if not (root / KNOWLEDGE_DIR / "folders.json").exists():
        return []
    knowledge = Knowledge(root, HashEmbedder())
    try:
        knowledge.load()
        problems = [f"reported on opening: {w}" for w in knowledge.index.warnings]
        versions = {path: 0 for a in run.acked("knowledge") for path in a["files"]}
        for a in run.acked("knowledge-changed"):
            versions[a["path"]] = a["version"]
        removed = {a["path"] for a in run.acked("knowledge-removed")}
        held = {p: [c.text for c in knowledge.index.chunks_of(p)] for p in knowledge.index.paths()}
        for path, at in versions.items():
            name = Path(path).name
            had = [knowledge_text(name, v) for v in range(4)]
            chunks = held.get(path)
            if path in removed:
                if chunks is not None:
                    problems.append(f"knowledge: {name} is indexed after its removal")
            elif chunks is None and Path(path).exists():  # a removal under way may be done
                problems.append(f"knowledge: {name} is not indexed")
            elif chunks is not None and not any(all(c in v for c in chunks) for v in had[at:]):
                problems.append(f"knowledge: {name} holds {chunks!r}, older than version {at}")
        problems += _stale_passage_vectors(root, held)
        return problems
    finally:
        knowledge.close()


def _stale_passage_vectors(root: Path, held: dict[str, list[str]]) -> list[str]:
    vectors = VectorLog.load(root / KNOWLEDGE_DIR, HashEmbedder().name)
    if vectors is None:
        return []
    stale = []
    texts = {digest(t): t for chunks in held.values() for t in chunks}
    for text_digest, row in vectors.digests().items():
        text = texts.get(text_digest)
        if text is None:
            continue  # a text no file has now: dropped at a compaction
        if float(vectors.rows([row])[0] @ hashed_vector(text, vectors.dim)) < SAME_VECTOR:
            stale.append(f"a knowledge passage has the vector of another text ({text!r})")
    vectors.close()
    return stale


def _stale_memory_vectors(memory: SemanticMemory) -> list[str]:
    index = memory._index  # the harness looks inside: which row each memory has
    vectors = index.vectors
    if vectors is None:
        return []
    stale = []
    for item in memory.all():
        slot = index.slot(item.id)
        if vectors.has(slot):
            cosine = float(vectors._m[slot] @ hashed_vector(item.text, vectors.dim))
            if cosine < SAME_VECTOR:
                stale.append(f"memory {item.id} has the vector of another text ({item.text!r})")
    return stale


def _stale_message_vectors(root: Path, loaded: dict[str, Any]) -> list[str]:
    vectors = MessageVectors.load(conversations_dir(root), HashEmbedder().name)
    if vectors is None:
        return []
    stale = []
    for cid, conversation in loaded.items():
        for message in conversation.messages:
            row = vectors.row((cid, message.id))
            if row >= 0:
                cosine = float(vectors.rows([row])[0] @ hashed_vector(message.content, vectors.dim))
                if cosine < SAME_VECTOR:
                    stale.append(f"message {cid}/{message.id} has the vector of another text")
    return stale


def _missing(state: State, run: Run) -> list[str]:
    """The acknowledged writes that are not in `state`, and what is there but should not be."""
    problems = []
    settings = [a["value"] for a in run.acked("settings")]
    if state.settings < (settings[-1] if settings else 6):
        problems.append(f"settings {state.settings} after {settings[-1]} was acknowledged")
    tasks = ["plan the trip", "book the train"]
    for a in run.acked("working")[-1:]:
        if state.working.get(a["id"]) not in tasks[tasks.index(a["task"]) :]:
            problems.append(f"working memory {state.working.get(a['id'])!r} after {a['task']!r}")
    deleted = {a["id"] for a in run.acked("deleted")}
    for a in run.acked("conversation"):
        if (a["id"] in state.conversations) == (a["id"] in deleted):
            problems.append(f"conversation {a['id']} {'kept' if a['id'] in deleted else 'lost'}")
    for a in run.acked("message"):
        if a["message"] not in state.conversations.get(a["id"], ("", "", (), None))[2]:
            problems.append(f"message {a['id']}/{a['message']} lost")
    for a in run.acked("title"):
        if state.conversations[a["id"]][0] != a["title"]:
            problems.append(f"title {a['title']!r} lost")
    for a in run.acked("summary"):
        if not state.conversations[a["id"]][1]:
            problems.append("summary lost")
    forgotten = {a["id"] for a in run.acked("forget")}
    edits = {a["id"]: a["text"] for a in run.acked("edit")}
    for a in run.acked("memory"):
        have = state.memories.get(a["id"])
        if a["id"] in forgotten:
            if have is not None and have[1] == "active":
                problems.append(f"forgotten memory {a['id']} came back")
        elif a["id"] not in run.forgetting and have is None:
            problems.append(f"memory {a['id']} lost")
        elif have is not None and have[0] != edits.get(a["id"], have[0]):
            problems.append(f"memory {a['id']} reads {have[0]!r}, not {edits[a['id']]!r}")
    problems += _unreviewed(state, run)
    for a in run.acked("import"):
        if len(state.conversations.get(a["id"], ("", "", (), None))[2]) != 3:
            problems.append(f"imported conversation {a['id']} lost")
        if all(text != a["text"] for text, _, _ in state.memories.values()):
            problems.append("imported memory lost")
    return problems + _projects_missing(state, run)


def _projects_missing(state: State, run: Run) -> list[str]:
    """The acknowledged project writes that are not in `state` (a later write may be)."""
    problems = []
    deleted = {a["id"] for a in run.acked("project-deleted")}
    last = {a["id"]: a["state"] for a in run.acked("project")}
    for project_id, at in last.items():
        have = state.projects.get(project_id)
        if project_id in deleted:
            if have is not None:
                problems.append(f"deleted project {project_id} kept")
        elif at is not None and have not in PROJECT_STATES[at:]:
            problems.append(f"project {project_id} is {have}, not {PROJECT_STATES[at]}")
    for a in run.acked("conversation-project"):
        if state.conversations[a["id"]][3] != a["project"]:
            problems.append(f"conversation {a['id']} is not in project {a['project']}")
    for a in run.acked("moved"):
        have = state.memories.get(a["id"])
        if have is not None and have[2] != a["project"]:
            problems.append(f"memory {a['id']} is not in project {a['project']}")
    return problems


def _unreviewed(state: State, run: Run) -> list[str]:
    """Proposals lost or still waiting after their review, accepted ones not remembered,
    rejected ones not buried."""
    problems = []
    reviewed = {a["id"] for a in (*run.acked("accepted"), *run.acked("rejected"))}
    for a in run.acked("proposed"):
        for proposal_id in a["ids"]:
            waiting = proposal_id in state.inbox
            if proposal_id in reviewed and waiting:
                problems.append(f"proposal {proposal_id} waits after its review")
            elif proposal_id not in run.reviewing and not waiting:
                problems.append(f"proposal {proposal_id} lost")
    for a in run.acked("accepted"):
        if state.memories.get(a["memory"], ("", ""))[0] != a["text"]:
            problems.append(f"accepted proposal {a['id']} is no memory")
    for a in run.acked("rejected"):
        if a["text"] not in state.buried:
            problems.append(f"rejected proposal {a['id']} left no tombstone")
    return problems


def _leftovers(root: Path, run: Run) -> list[str]:
    """Words of memories forgotten before an acknowledged close still on disk; copies aside."""
    problems = [f"a copy aside: {p.name}" for p in root.rglob("*.corrupt-*")]
    closes = [i for i, a in enumerate(run.acks) if a["ack"] == "closed"]
    gone = [
        a["text"].split()[2].encode()  # its own word, "zq<n>x"
        for i, a in enumerate(run.acks)
        if a["ack"] == "forget" and any(c > i for c in closes)
    ]
    gone += [a["text"].split()[0].encode() for a in run.acked("rejected")]
    for path in root.rglob("*"):
        if path.is_file() and path.name != "assistant.lock":
            data = path.read_bytes()
            problems += [f"{path.name} still holds {w.decode()!r}" for w in gone if w in data]
    return problems
