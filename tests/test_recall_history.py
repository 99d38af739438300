"""The `recall` tool finds current facts, and with `include_history` what held before and when."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from assistant.agent.builtin_tools import ToolContext, builtin_registry, held
from assistant.memory import SemanticMemory
from tests.embedders import HashEmbedder


def recall(memory: SemanticMemory, context: ToolContext, **arguments: object) -> str:
    scope = {"memory": memory, "context": context}
    return builtin_registry().call("recall", json.dumps(arguments), scope)


def test_recall_shows_what_held_before_only_when_asked(data_dir: Path) -> None:
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    porto = memory.add("The user lives in Porto", valid_from=datetime(2019, 5, 1, tzinfo=UTC))
    lisbon = memory.supersede(porto.id, "The user lives in Lisbon", by="curator", reason="moved")
    context = ToolContext("c1", "m1")
    now = recall(memory, context, query="where does the user live")
    assert lisbon.id in now and porto.id not in now and "held" not in now
    before = recall(memory, context, query="where does the user live", include_history=True)
    assert porto.id in before and lisbon.id in before
    old = memory.get(porto.id)
    assert old is not None and old.valid_to is not None
    until = old.valid_to.astimezone().strftime("%Y-%m-%d")
    assert f"(held from 2019-05-01 until {until}; replaced by [{lisbon.id}]" in before
    assert "(current;" in before
    assert set(context.recalled) == {lisbon.id, porto.id}  # both were shown to the model
    memory.close()


def test_the_schema_offers_history(data_dir: Path) -> None:
    (schema,) = [s for s in builtin_registry().schemas() if s["function"]["name"] == "recall"]
    parameters = schema["function"]["parameters"]["properties"]
    assert parameters["include_history"]["type"] == "boolean"
    assert "before" in parameters["include_history"]["description"]


def test_an_archived_memory_says_so(data_dir: Path) -> None:
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    item = memory.archive(memory.add("The user collected stamps").id)
    assert held(item).startswith(" (archived ")
    memory.close()
