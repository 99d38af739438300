"""One fixed sequence of writes to every store of a data dir, for the failpoint harness:
`python -m tests.reliability.workload DIR`.

It holds the data dir's lock like the app and prints one JSON line after each write returned
(acknowledged, so promised durable): `{"ack": WHAT, ...}`. Run with `ASSISTANT_FAILPOINTS`
(see `assistant.failpoints`) it records the failpoints it passes, or dies at one of them; the
harness then checks the data dir against what was acknowledged (`tests.reliability.crashes`).
Every store is here: settings, working memory, conversations (create, append, rename, summary,
delete, listing, message vectors, its project), the memory log and its caches (add, edit,
forget, a move to a project, compaction, close and reopen), projects (create, change, delete),
an import, the review inbox (propose, accept, reject), and the knowledge index (a folder read,
a file changed three times and one removed, with vectors saved after each change, both files
compacted on the way: their thresholds are lowered here).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from assistant.datalock import DataDirLock
from assistant.fileio import remove_stale_temp_files
from assistant.knowledge import Knowledge, passage_log
from assistant.knowledge import index as knowledge_index
from assistant.memory import ConversationStore, Inbox, Proposal, Review, TopicStore
from assistant.memory.semantic import SemanticMemory
from assistant.memory.working import WorkingMemoryStore
from assistant.paths import memory_dir, settings_file
from assistant.projects import ProjectStore
from assistant.settings import Settings
from assistant.transfer import apply_import, parse_import
from tests.embedders import HashEmbedder
from tests.store_set import StoreSet

STAMP = "2024-05-01T10:00:00+00:00"
IMPORTED = "imported0conversation"
# What the workload writes to its project, in order: (name, isolated).
PROJECT_STATES = (("Crash project", False), ("Renamed project", True))
# Proposed for review (their first word their own): one is accepted, one rejected, one waits.
PROPOSED = ("zq20x keeps bees on the roof", "zq21x sails catamarans", "zq22x brews pear cider")
KNOWN = ("a.md", "b.md", "c.md")  # the knowledge folder's files


def knowledge_folder(root: Path) -> Path:
    """The knowledge folder of the workload on `root`: beside the data dir (the user's files)."""
    return root.with_name(root.name + "-docs")


def knowledge_text(name: str, version: int) -> str:
    """The text of a file of the knowledge folder in one of its versions (a word of its own, and
    a size of its own: a change within a tick of the clock keeps the modification time)."""
    return f"# {name}\n\nThe harbour note zqk{name[0]}{version}x about boats{'!' * version}.\n"


def ack(what: str, **details: Any) -> None:
    """Say that a write returned."""
    print(json.dumps({"ack": what, **details}), flush=True)


def memory_text(n: int) -> str:
    """The text of the n-th memory: words of its own, so that a leftover copy is found."""
    return f"remembered fact zq{n}x about topic {n % 3}"


def export() -> bytes:
    """An export of one conversation of three messages and one memory."""
    messages = [
        {
            "id": f"m{j}",
            "parent_id": f"m{j - 1}" if j else None,
            "role": "user" if j % 2 == 0 else "assistant",
            "content": f"imported line {j} about the harbour",
            "created_at": STAMP,
        }
        for j in range(3)
    ]
    memory = {
        "id": "imported0memory",
        "text": memory_text(99),
        "kind": "fact",
        "importance": 0.5,
        "pinned": False,
        "created_at": STAMP,
        "updated_at": STAMP,
        "last_accessed": STAMP,
        "state": "active",
    }
    document = {
        "format": "assistant.export",
        "version": 1,
        "exported_at": STAMP,
        "app": {"name": "Assistant", "version": "0"},
        "conversations": [
            {
                "id": IMPORTED,
                "title": "Imported",
                "created_at": STAMP,
                "updated_at": STAMP,
                "summary": "",
                "messages": messages,
            }
        ],
        "memories": [memory],
    }
    return json.dumps(document).encode("utf-8")


def run(root: Path) -> None:
    """The writes, in order (see the module's docstring)."""
    path = settings_file(root)
    Settings(memories_per_prompt=7).save(path)
    ack("settings", value=7)

    conversations = ConversationStore(root, HashEmbedder())
    working = WorkingMemoryStore(memory_dir(root))
    cid = conversations.create("Crash test").id
    ack("conversation", id=cid)
    working.update(cid, task="plan the trip")
    ack("working", id=cid, task="plan the trip")
    for n in range(3):
        message = conversations.append(cid, "user" if n % 2 == 0 else "assistant", f"line {n}")
        ack("message", id=cid, message=message.id)
    conversations.rename(cid, "Renamed")
    ack("title", id=cid, title="Renamed")
    conversations.set_summary(cid, "a summary", message.id)
    ack("summary", id=cid)
    projects = ProjectStore(root)
    project = projects.create(PROJECT_STATES[0][0])
    ack("project", id=project.id, state=0)
    projects.update(project.id, name=PROJECT_STATES[1][0], isolated=PROJECT_STATES[1][1])
    ack("project", id=project.id, state=1)
    conversations.set_project(cid, project.id)
    ack("conversation-project", id=cid, project=project.id)

    memory = SemanticMemory.open(memory_dir(root), HashEmbedder())
    items = []
    for n in range(6):
        items.append(memory.add(memory_text(n)))
        ack("memory", id=items[-1].id, text=memory_text(n))
    edited = memory.update(items[0].id, text=memory_text(10))
    ack("edit", id=edited.id, text=edited.text)
    memory.move(items[3].id, project.id)
    ack("moved", id=items[3].id, project=project.id)
    _forget(memory, items[1].id, memory_text(1))
    memory.compact()
    ack("compact")
    apply_import(parse_import(export()), StoreSet(conversations, memory), "skip")
    ack("import", id=IMPORTED, text=memory_text(99))
    items.append(memory.add(memory_text(6)))
    ack("memory", id=items[-1].id, text=memory_text(6))
    memory.close()
    ack("closed")

    # The next close compacts the log to less than the cache written above reflects.
    memory = SemanticMemory.open(memory_dir(root), HashEmbedder())
    for n in (2, 4, 5):
        _forget(memory, items[n].id, memory_text(n))
    edited = memory.update(items[3].id, text=memory_text(13))
    ack("edit", id=edited.id, text=edited.text)
    _review(root, memory)
    memory.close()
    ack("closed")

    conversations.embed_pending()
    conversations.close()
    ack("message-vectors")
    empty = conversations.create("Empty").id
    ack("conversation", id=empty)
    conversations.delete(empty)
    ack("deleted", id=empty)
    gone = projects.create("Gone")
    ack("project", id=gone.id, state=None)
    projects.delete(gone.id)
    ack("project-deleted", id=gone.id)
    conversations.all()  # saves the listing
    ack("listing")
    working.update(cid, task="book the train")
    ack("working", id=cid, task="book the train")
    Settings(memories_per_prompt=8).save(path)
    ack("settings", value=8)
    _knowledge(root)
    ack("done")


def _knowledge(root: Path) -> None:
    """The knowledge index: a folder read and embedded, a file changed, one removed."""
    passage_log.COMPACT_FROM = 0  # compacted once stale entries outweigh the live ones
    knowledge_index.COMPACT_VECTORS_FROM = 0  # and the vectors once unused rows do
    folder = knowledge_folder(root)
    folder.mkdir(exist_ok=True)
    for name in KNOWN:
        (folder / name).write_text(knowledge_text(name, 0))
    knowledge = Knowledge(root, HashEmbedder())
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    knowledge.sync()
    ack("knowledge", files={str(folder / n): 0 for n in KNOWN})
    for version in range(1, 4):
        _embedded(knowledge)
        (folder / "b.md").write_text(knowledge_text("b.md", version))
        knowledge.refresh(str(folder / "b.md"))
        ack("knowledge-changed", path=str(folder / "b.md"), version=version)
    (folder / "c.md").unlink()
    knowledge.refresh(str(folder / "c.md"))
    ack("knowledge-removed", path=str(folder / "c.md"))
    _embedded(knowledge)
    knowledge.close()
    ack("knowledge-closed")


def _embedded(knowledge: Knowledge) -> None:
    knowledge.index.embed_pending()
    knowledge.index.save()
    ack("knowledge-vectors")


def _review(root: Path, memory: SemanticMemory) -> None:
    """Proposals in the review inbox: one accepted, one rejected, one left waiting."""
    inbox = Inbox(memory_dir(root))
    review = Review(inbox, memory, TopicStore(memory_dir(root)))
    proposals = inbox.propose(Proposal(text) for text in PROPOSED)
    ack("proposed", ids=[p.id for p in proposals])
    accepted, rejected = proposals[0], proposals[1]
    print(json.dumps({"reviewing": accepted.id}), flush=True)  # done or not
    (edit,) = review.accept([accepted.id]).edits
    ack("accepted", id=accepted.id, text=accepted.text, memory=edit.after.id)
    print(json.dumps({"reviewing": rejected.id}), flush=True)
    review.reject([rejected.id])
    ack("rejected", id=rejected.id, text=rejected.text)


def _forget(memory: SemanticMemory, item_id: str, text: str) -> None:
    print(json.dumps({"forgetting": item_id, "text": text}), flush=True)  # done or not
    memory.forget(item_id)
    ack("forget", id=item_id, text=text)


def main(argv: list[str]) -> int:
    """Run the workload once on DIR."""
    root = Path(argv[0])
    with DataDirLock(root):
        remove_stale_temp_files(root)
        run(root)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
