"""The limits of writing hold on reading: what is over them is kept aside and reported, not
loaded whole."""

from __future__ import annotations

import json
from pathlib import Path

from assistant.memory.working import (
    MAX_RESULT_CHARS,
    MAX_SUBGOAL_CHARS,
    MAX_SUBGOALS,
    MAX_TASK_CHARS,
    WorkingMemoryStore,
)


def test_working_memory_over_its_limits_is_cut_on_load_and_the_file_kept(tmp_path: Path) -> None:
    path = tmp_path / "working.json"
    entry = {
        "task": "t" * 100_000,
        "subgoals": [f"goal {n} " + "g" * 5000 for n in range(200)],
        "scratchpad": ["note"],
        "results": {"big": "r" * 100_000},
    }
    doc = {"version": 1, "conversations": {"c1": entry, "c2": {"task": "small"}}}
    data = json.dumps(doc).encode()
    path.write_bytes(data)
    store = WorkingMemoryStore(tmp_path)
    memory = store.get("c1")
    assert len(memory.task) <= MAX_TASK_CHARS
    assert len(memory.subgoals) == MAX_SUBGOALS
    assert all(len(s) <= MAX_SUBGOAL_CHARS for s in memory.subgoals)
    assert memory.subgoals[-1].startswith("goal 199")  # the current subgoal is the last
    assert len(memory.results["big"]) <= MAX_RESULT_CHARS
    assert store.get("c2").task == "small"
    kept = list(tmp_path.glob("working.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == data
    assert any("over its limits" in w and kept[0].name in w for w in store.warnings), store.warnings


def test_working_memory_within_its_limits_loads_quietly(tmp_path: Path) -> None:
    store = WorkingMemoryStore(tmp_path)
    store.update("c1", task="plan", push_subgoal="book", note="n", result_name="r", result="v")
    again = WorkingMemoryStore(tmp_path)
    assert again.get("c1") == store.get("c1")
    assert again.warnings == []
    assert not list(tmp_path.glob("*.corrupt-*"))
