"""A process that writes to a data dir as fast as it can, to be killed: `python -m
tests.reliability.writer KIND DIR`.

It holds the data dir's lock like the app, prints `ready`, then one `ack ...` line after each
write has returned (so is promised durable). The harness kills it at a random moment and checks
that every acknowledged write is there. KIND is one of WRITERS.
"""

from __future__ import annotations

import itertools
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

from assistant.datalock import DataDirLock
from assistant.fileio import remove_stale_temp_files
from assistant.memory import ConversationStore
from assistant.memory.semantic import SemanticMemory
from assistant.memory.working import WorkingMemoryStore
from assistant.paths import memory_dir, settings_file
from assistant.settings import Settings
from assistant.transfer import apply_import, parse_import
from tests.store_set import StoreSet


def ack(*parts: object) -> None:
    """Say that a write returned."""
    print("ack", *parts, flush=True)


def memories(root: Path) -> None:
    """Adds, forgets (each acknowledged), compactions and close/reopen cycles (cache writes)."""
    memory = SemanticMemory.open(memory_dir(root))
    print("ready", flush=True)
    for i in itertools.count():
        item = memory.add(f"memory {uuid.uuid4().hex} number {i}")
        ack("add", item.id)
        if i % 5 == 4:
            victim = memory.all()[-1]
            print("forgetting", victim.id, flush=True)  # it may be done without its ack
            memory.forget(victim.id)
            ack("forget", victim.id)
        if i % 11 == 10:
            memory.compact()
        if i % 17 == 16:
            memory.close()  # writes the index and vector caches, drops forgotten items
            memory = SemanticMemory.open(memory_dir(root))


def messages(root: Path) -> None:
    """Messages appended to a few conversations."""
    store = ConversationStore(root)
    print("ready", flush=True)
    cid = store.create().id
    for i in itertools.count():
        if i % 25 == 24:
            cid = store.create().id
        message = store.append(cid, "user", f"message {i}")
        ack(cid, message.id)


def working(root: Path) -> None:
    """Working memory snapshots of one conversation: a counter in a named result."""
    conversation = working_conversation(root) or ConversationStore(root).create("Kill test").id
    store = WorkingMemoryStore(memory_dir(root))
    print("ready", flush=True)
    for i in itertools.count(int(store.get(conversation).results.get("n", "-1")) + 1):
        store.update(conversation, result_name="n", result=str(i))
        ack(i)


def working_conversation(root: Path) -> str | None:
    """The conversation whose working memory the `working` writer saves (once made)."""
    listing = ConversationStore(root).all()
    return listing[0].id if listing else None


def settings(root: Path) -> None:
    """Settings snapshots: a counter in the chat model's name."""
    path = settings_file(root)
    start = Settings.load(path)[0].memories_per_prompt
    print("ready", flush=True)
    for i in itertools.count(start + 1):
        Settings(memories_per_prompt=i).save(path)
        ack(i)


def imports(root: Path) -> None:
    """Imports of small exports: each conversation has three messages and one memory."""
    stores = StoreSet(ConversationStore(root), SemanticMemory.open(memory_dir(root)))
    print("ready", flush=True)
    for _ in itertools.count():
        cid = uuid.uuid4().hex
        stamp = "2024-05-01T10:00:00+00:00"
        export = {
            "format": "assistant.export",
            "version": 1,
            "exported_at": stamp,
            "app": {"name": "Assistant", "version": "0"},
            "conversations": [
                {
                    "id": cid,
                    "title": "Imported",
                    "created_at": stamp,
                    "updated_at": stamp,
                    "summary": "",
                    "messages": [
                        {
                            "id": f"m{j}",
                            "parent_id": f"m{j - 1}" if j else None,
                            "role": "user",
                            "content": f"line {j}",
                            "created_at": stamp,
                        }
                        for j in range(3)
                    ],
                }
            ],
        }
        apply_import(parse_import(json.dumps(export).encode()), stores, "skip")
        ack(cid)


WRITERS: dict[str, Callable[[Path], None]] = {
    "memories": memories,
    "messages": messages,
    "working": working,
    "settings": settings,
    "imports": imports,
}


def main(argv: list[str]) -> int:
    """Run one writer until killed."""
    kind, root = argv[0], Path(argv[1])
    with DataDirLock(root):
        remove_stale_temp_files(root)
        WRITERS[kind](root)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
