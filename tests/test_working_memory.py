"""Working memory: changes, bounds, validation, persistence and change callbacks."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from assistant.memory.working import (
    MAX_NOTES,
    MAX_RESULT_CHARS,
    MAX_RESULTS,
    MAX_SCRATCHPAD_CHARS,
    MAX_SUBGOALS,
    TRUNCATED,
    WorkingMemory,
    WorkingMemoryStore,
)
from assistant.workspace import Workspace


@pytest.fixture
def memory_dir(data_dir: Path) -> Path:
    return data_dir / "memory"


def test_empty_by_default(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    memory = store.get("c1")
    assert memory == WorkingMemory()
    assert memory.is_empty()
    assert memory.to_prompt() == ""
    assert not (memory_dir / "working.json").exists()


def test_round_trip_through_reopen(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    store.update("c1", task="Plan the trip to Lisbon")
    store.update("c1", push_subgoal="book flights")
    store.update("c1", push_subgoal="compare hotels", note="budget is 900 EUR")
    store.update("c1", result_name="flights", result="TP 1234 on May 3")
    store.update("c2", note="other conversation")

    reopened = WorkingMemoryStore(memory_dir)
    assert reopened.warnings == []
    memory = reopened.get("c1")
    assert memory.task == "Plan the trip to Lisbon"
    assert memory.subgoals == ["book flights", "compare hotels"]
    assert memory.scratchpad == ["budget is 900 EUR"]
    assert memory.results == {"flights": "TP 1234 on May 3"}
    assert reopened.get("c2").scratchpad == ["other conversation"]

    raw = json.loads((memory_dir / "working.json").read_text())
    assert raw["version"] == 1
    assert set(raw["conversations"]) == {"c1", "c2"}


def test_subgoal_stack_and_clear(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    store.update("c", push_subgoal="a")
    store.update("c", push_subgoal="b")
    assert store.update("c", pop_subgoal=True).subgoals == ["a"]
    # Pop then push replaces the current subgoal.
    assert store.update("c", pop_subgoal=True, push_subgoal="c").subgoals == ["c"]
    cleared = store.update("c", clear=True, task="fresh start")
    assert cleared == WorkingMemory(task="fresh start")
    assert store.update("c", task="").is_empty()
    assert "c" not in json.loads((memory_dir / "working.json").read_text())["conversations"]


def test_get_returns_a_snapshot(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    store.update("c", note="kept")
    snapshot = store.get("c")
    snapshot.scratchpad.append("not kept")
    snapshot.results["x"] = "y"
    assert store.get("c") == WorkingMemory(scratchpad=["kept"])


def test_validation_errors_change_nothing(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    store.update("c", task="t")
    with pytest.raises(ValueError, match="result_name and result"):
        store.update("c", result="orphan value")
    with pytest.raises(ValueError, match="result_name and result"):
        store.update("c", result_name="orphan name")
    with pytest.raises(ValueError, match="no subgoal to pop"):
        store.update("c", task="changed", pop_subgoal=True)
    with pytest.raises(ValueError, match="note"):
        store.update("c", note="   ")
    with pytest.raises(ValueError, match="subgoal"):
        store.update("c", push_subgoal="")
    store.update("c", push_subgoal="only")
    with pytest.raises(ValueError, match="no subgoal to pop"):
        store.update("c", clear=True, pop_subgoal=True)
    assert store.get("c") == WorkingMemory(task="t", subgoals=["only"])
    assert WorkingMemoryStore(memory_dir).get("c") == store.get("c")


def test_scratchpad_keeps_newest_notes(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    for i in range(MAX_NOTES + 5):
        store.update("c", note=f"note {i}")
    pad = store.get("c").scratchpad
    assert len(pad) == MAX_NOTES
    assert pad[0] == "note 5"
    assert pad[-1] == f"note {MAX_NOTES + 4}"


def test_scratchpad_character_bound(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    for i in range(5):
        store.update("c", note=f"{i}" * 1500)
    pad = store.get("c").scratchpad
    assert sum(len(n) for n in pad) <= MAX_SCRATCHPAD_CHARS
    assert pad == ["3" * 1500, "4" * 1500]
    huge = store.update("c", note="x" * (MAX_SCRATCHPAD_CHARS * 2)).scratchpad
    assert len(huge) == 1
    assert len(huge[0]) == MAX_SCRATCHPAD_CHARS
    assert huge[0].endswith(TRUNCATED)


def test_results_are_bounded(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    for i in range(MAX_RESULTS + 3):
        store.update("c", result_name=f"r{i}", result=str(i))
    store.update("c", result_name="r3", result="updated")  # updating moves it to the end
    store.update("c", result_name="long", result="y" * 5000)
    results = store.get("c").results
    assert len(results) == MAX_RESULTS
    assert list(results)[-2:] == ["r3", "long"]
    assert "r4" not in results
    assert results["r3"] == "updated"
    assert len(results["long"]) == MAX_RESULT_CHARS
    assert results["long"].endswith(TRUNCATED)


def test_subgoal_stack_is_bounded(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    for i in range(MAX_SUBGOALS):
        store.update("c", push_subgoal=f"g{i}")
    with pytest.raises(ValueError, match="full"):
        store.update("c", push_subgoal="one too many")


def test_to_prompt(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    memory = store.update("c", task="Write the report", push_subgoal="outline")
    memory = store.update("c", note="line one\nline two", result_name="sources", result="3 papers")
    assert memory.to_prompt() == (
        "Working memory:\n"
        "Task: Write the report\n"
        "Subgoals (current last):\n"
        "- outline\n"
        "Scratchpad:\n"
        "- line one\n  line two\n"
        "Results:\n"
        "- sources: 3 papers"
    )


def test_subscribe_and_unsubscribe(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    seen: list[tuple[str, bool]] = []

    def on_change(conversation_id: str) -> None:
        # Called outside the lock: another thread can read the store meanwhile.
        reader = threading.Thread(target=store.get, args=(conversation_id,))
        reader.start()
        reader.join(timeout=5)
        seen.append((conversation_id, reader.is_alive()))

    unsubscribe = store.subscribe(on_change)
    store.update("a", task="x")
    store.update("a", task="x")  # no change, no callback
    store.drop("a")
    store.drop("a")  # nothing left to drop
    unsubscribe()
    store.update("b", task="y")
    assert seen == [("a", False), ("a", False)]


def test_failing_subscriber_does_not_break_updates(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    calls: list[str] = []

    def broken(_: str) -> None:
        raise RuntimeError("boom")

    store.subscribe(broken)
    store.subscribe(calls.append)
    assert store.update("c", task="t").task == "t"
    assert calls == ["c"]


def test_drop_persists(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)
    store.update("a", task="x")
    store.update("b", task="y")
    store.drop("a")
    reopened = WorkingMemoryStore(memory_dir)
    assert reopened.get("a").is_empty()
    assert reopened.get("b").task == "y"


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[]",
        b'{"version": 1, "conversations": {"c": {"subgoals": "not a list"}}}',
        b'{"version": "x", "conversations": {}}',
    ],
)
def test_corrupt_file_is_moved_aside(memory_dir: Path, content: bytes) -> None:
    memory_dir.mkdir(parents=True)
    (memory_dir / "working.json").write_bytes(content)
    store = WorkingMemoryStore(memory_dir)
    assert store.get("c").is_empty()
    assert len(store.warnings) == 1
    assert "moved it to working.json.corrupt-" in store.warnings[0]
    kept = list(memory_dir.glob("working.json.corrupt-*"))
    assert len(kept) == 1
    assert kept[0].read_bytes() == content
    store.update("c", task="works again")
    assert WorkingMemoryStore(memory_dir).get("c").task == "works again"


def test_concurrent_updates_lose_nothing(memory_dir: Path) -> None:
    store = WorkingMemoryStore(memory_dir)

    def work(name: str) -> None:
        for i in range(10):
            store.update("c", result_name=f"{name}{i}", result="v")

    threads = [threading.Thread(target=work, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(WorkingMemoryStore(memory_dir).get("c").results) == 20


def test_deleting_a_conversation_drops_its_working_memory(data_dir: Path) -> None:
    workspace = Workspace.open(data_dir)
    kept, deleted = (workspace.conversations.create(title).id for title in ("Kept", "Deleted"))
    for cid in (kept, deleted):
        workspace.working.update(cid, task=f"Plan for {cid}")
    workspace.conversations.delete(deleted)
    assert workspace.working.conversation_ids() == [kept]
    workspace.close()
    stored = json.loads((data_dir / "memory" / "working.json").read_text())
    assert list(stored["conversations"]) == [kept]


def test_working_memory_of_conversations_deleted_before_is_dropped_at_open(
    data_dir: Path,
) -> None:
    WorkingMemoryStore(data_dir / "memory").update(
        "c" * 32, task="A plan whose conversation is gone"
    )
    workspace = Workspace.open(data_dir)
    assert workspace.working.conversation_ids() == []
    workspace.close()
