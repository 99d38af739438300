"""Memories written through MCP: origin `mcp` with the client's name, kept by the log, the index
cache and the history, and said in words ("Remembered by Claude Desktop")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.mcp_server.operations import answer
from assistant.memory import ForgottenFactError, MemoryItem, SemanticMemory
from assistant.memory.index_cache import CACHE_NAME
from assistant.memory.items import MemoryEvent
from assistant.memory.semantic import LOG_NAME
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.ui.memory.wording import by_text, event_text, no_source_reason, origin_short
from assistant.ui.memory.wording import origin_text as origin_words
from assistant.workspace import Workspace


def test_the_client_is_kept_by_the_log_and_the_index_cache(tmp_path: Path) -> None:
    memory = SemanticMemory.open(tmp_path)
    item = memory.add("The user's cat is Miso.", origin="mcp", client="Claude Desktop")
    merged = memory.merge_into(item.id, "The user's cat is Miso, a tabby.", by="mcp", client="Jan")
    plain = memory.add("The user likes tea.")
    memory.close()
    records = [json.loads(line) for line in (tmp_path / LOG_NAME).open()]
    versions = {
        (r["op"], r.get("item", r.get("event", {})).get("text")): r["version"] for r in records
    }
    assert versions[("put", "The user likes tea.")] == 2  # nothing new in it: readable by 2
    assert {r["version"] for r in records if "client" in json.dumps(r)} == {3}
    for cached in (True, False):
        if not cached:
            (tmp_path / CACHE_NAME).unlink()  # replay the log
        memory = SemanticMemory.open(tmp_path)
        again = memory.get(item.id)
        assert again is not None and (again.origin, again.client) == ("mcp", "Claude Desktop")
        assert again.text == merged.text
        assert memory.get(plain.id) == plain
        memory.load_history()
        created, refined = memory.history(item.id)
        assert (created.by, created.client) == ("mcp", "Claude Desktop")
        assert (refined.type, refined.by, refined.client) == ("merged", "mcp", "Jan")
        memory.close()


def test_a_client_must_be_a_string() -> None:
    raw = MemoryItem.new("A fact.", "fact", 0.5, origin="mcp", client="Jan").to_json()
    assert MemoryItem.from_json(raw).client == "Jan"
    with pytest.raises(ValueError, match="client: expected a string"):
        MemoryItem.from_json({**raw, "client": 7})
    event = {"memory_id": "a", "type": "created", "at": raw["created_at"], "by": "mcp"}
    with pytest.raises(ValueError, match="client: expected a string"):
        MemoryEvent.from_json({**event, "client": ["Jan"]})


def test_a_forgotten_fact_is_not_learned_again_through_mcp(tmp_path: Path) -> None:
    memory = SemanticMemory.open(tmp_path)
    memory.forget(memory.add("The user's PIN is 4821.").id)
    with pytest.raises(ForgottenFactError):
        memory.add("The user's PIN is 4821.", origin="mcp", client="Claude Desktop")
    memory.close()


def test_the_client_in_words() -> None:
    item = MemoryItem.new("The user's cat is Miso.", "fact", 0.5, origin="mcp", client="LM Studio")
    assert origin_short(item) == "Remembered by LM Studio"
    assert origin_words(item, lambda _cid: None).startswith("Remembered by LM Studio on ")
    assert no_source_reason(item, False) == "No source: LM Studio sent it (through MCP)"
    created = MemoryEvent(item.id, "created", item.created_at, by="mcp", client="LM Studio")
    assert event_text(created, item) == "Remembered by LM Studio"
    merged = MemoryEvent(
        item.id, "merged", item.created_at, by="mcp", client="Jan", text_before="The cat."
    )
    assert event_text(merged, item) == "Refined by Jan: was 'The cat.'"
    assert by_text("mcp", None) == "an MCP client"
    unnamed = item._replace(client=None)
    assert origin_short(unnamed) == "Remembered by an MCP client"
    claude = item._replace(client="claude-ai")  # how Claude Desktop names itself
    assert origin_short(claude) == "Remembered by Claude Desktop"
    assert by_text("mcp", "claude-ai") == "Claude Desktop"


def test_the_client_survives_export_and_import(tmp_path: Path) -> None:
    from assistant.memory import ConversationStore
    from assistant.transfer import apply_import, export_data, parse_import
    from tests.store_set import StoreSet

    source = StoreSet(ConversationStore(tmp_path / "a"), SemanticMemory.open(tmp_path / "a" / "m"))
    item = source.memory.add("The user's cat is Miso.", origin="mcp", client="Claude Desktop")
    text = json.dumps(export_data(source, include_memories=True))
    target = StoreSet(ConversationStore(tmp_path / "b"), SemanticMemory.open(tmp_path / "b" / "m"))
    apply_import(parse_import(text), target, "skip")
    there = target.memory.get(item.id)
    assert there is not None and (there.origin, there.client) == ("mcp", "Claude Desktop")
    [created] = target.memory.history(item.id)
    assert (created.by, created.client) == ("mcp", "Claude Desktop")
    source.memory.close()
    target.memory.close()


def test_a_memory_sent_for_review_keeps_the_clients_name(data_dir: Path) -> None:
    Settings(memory_policy="ask", embedding_model="").save(settings_file(data_dir))
    workspace = Workspace.open(data_dir, embed=False)
    try:
        request = {"op": "remember", "args": {"text": "The user's cat is Miso."}, "client": "QA"}
        assert answer(workspace, request).startswith("Proposed, not remembered yet")
    finally:
        workspace.close()
    workspace = Workspace.open(data_dir, embed=False)  # the name is kept by the inbox file
    try:
        (waiting,) = workspace.inbox.pending()
        assert (waiting.by, waiting.client) == ("mcp", "QA")
        workspace.review().accept([waiting.id])
        (item,) = workspace.memory.all()
        assert (item.origin, item.client) == ("mcp", "QA")
        assert origin_short(item) == "Remembered by QA"
    finally:
        workspace.close()
