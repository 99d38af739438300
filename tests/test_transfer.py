"""Export and import: round trips, conflicts, validation that changes nothing, ChatGPT, the CLI."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.credentials import Credentials
from assistant.errors import InvalidImportError
from assistant.memory import ConversationExistsError, ConversationStore, Message
from assistant.memory.items import MemoryItem, Source
from assistant.memory.semantic import SemanticMemory
from assistant.paths import memory_dir, settings_file
from assistant.settings import Settings
from assistant.transfer import (
    COPY_SUFFIX,
    FORMAT,
    ImportPlan,
    PlannedConversation,
    apply_import,
    export_data,
    parse_import,
    read_conversations,
    write_export,
)
from assistant.workspace import Workspace
from tests import child
from tests.embedders import HashEmbedder
from tests.store_set import StoreSet

SECRET = "sk-test-DO-NOT-EXPORT-4b1d"
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "recall", "arguments": '{"query": "flights"}'},
}


# -- helpers ---------------------------------------------------------------------------------------


def open_stores(root: Path, embedder: HashEmbedder | None = None) -> StoreSet:
    return StoreSet(ConversationStore(root), SemanticMemory.open(memory_dir(root), embedder))


def offline_settings(root: Path) -> None:
    """Settings without an embedding model, so that a workspace never reaches for the network."""
    root.mkdir(parents=True, exist_ok=True)
    Settings(embedding_model="").save(settings_file(root))


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` and the hash of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def fill(stores: StoreSet) -> dict[str, str]:
    """Two conversations (one with tool calls, memory ids and a summary), a temporary one and
    memories in several states; returns some of the ids."""
    convs = stores.conversations
    trip = convs.create("Trip planning")
    first = convs.append(trip.id, "user", "Find flights to Lisbon")
    convs.append(trip.id, "assistant", "", tool_calls=[CALL])
    convs.append(
        trip.id, "tool", "No flights found", tool_call_id="call_1", name="recall", ok=False
    )
    convs.append(trip.id, "assistant", "TP 1234 leaves at 9:40", memory_ids=["m-a", "m-b"])
    convs.set_summary(trip.id, "The user plans a trip to Lisbon.", first.id)
    tea = convs.create("Tea")
    convs.append(tea.id, "user", "I like green tea — sencha, ünïcode ☕")
    scratch = convs.create("Scratch", temporary=True)
    convs.append(scratch.id, "user", "throwaway")

    memory = stores.memory
    fact = memory.add(
        "Prefers aisle seats",
        "preference",
        0.8,
        source=Source(trip.id, first.id),
        tags=["travel"],
        pinned=True,
    )
    memory.add("Lives in Porto", "fact", 0.6)
    old = memory.add("Had a dentist appointment", "event", 0.1)
    memory.archive(old.id)
    gone = memory.add("Forget me", "fact", 0.5)
    memory.forget(gone.id)
    memory.mark_used([fact.id])
    return {"trip": trip.id, "tea": tea.id, "scratch": scratch.id, "fact": fact.id}


def exported(stores: StoreSet, **kwargs: Any) -> dict[str, Any]:
    return export_data(stores, include_memories=True, **kwargs)


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "exported_at"}


@pytest.fixture
def source(data_dir: Path) -> Iterator[tuple[StoreSet, dict[str, str]]]:
    stores = open_stores(data_dir, HashEmbedder())
    ids = fill(stores)
    yield stores, ids
    stores.memory.close()


@pytest.fixture
def target(tmp_path: Path) -> Iterator[StoreSet]:
    stores = open_stores(tmp_path / "target", HashEmbedder())
    yield stores
    stores.memory.close()


# -- export ----------------------------------------------------------------------------------------


def test_export_has_the_contract_shape(source: tuple[StoreSet, dict[str, str]]) -> None:
    stores, ids = source
    data = exported(stores)
    assert list(data) == ["format", "version", "exported_at", "app", "conversations", "memories"]
    assert data["format"] == FORMAT and data["version"] == 1  # nothing of version 2 in it
    assert data["app"] == {"name": "Assistant", "version": data["app"]["version"]}
    datetime.fromisoformat(data["exported_at"])
    # Temporary conversations stay out of "all"; forgotten memories never leave.
    assert [c["id"] for c in data["conversations"]] == [ids["trip"], ids["tea"]]
    trip = data["conversations"][0]
    assert set(trip) == {"id", "title", "created_at", "updated_at", "summary", "messages"}
    assert trip["summary"] == "The user plans a trip to Lisbon."
    assert [m["role"] for m in trip["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert trip["messages"][1]["tool_calls"] == [CALL]
    assert trip["messages"][2]["tool_call_id"] == "call_1"
    assert trip["messages"][2]["ok"] is False  # the tool failed (kept by import: round trip)
    assert trip["messages"][3]["memory_ids"] == ["m-a", "m-b"]
    texts = {m["text"]: m["state"] for m in data["memories"]}
    assert texts == {
        "Prefers aisle seats": "active",
        "Lives in Porto": "active",
        "Had a dentist appointment": "archived",
    }
    assert "vector" not in json.dumps(data)
    assert "memories" not in export_data(stores)


def test_export_of_chosen_conversations(source: tuple[StoreSet, dict[str, str]]) -> None:
    stores, ids = source
    data = export_data(stores, [ids["scratch"], ids["tea"], ids["scratch"]])
    assert [c["id"] for c in data["conversations"]] == [ids["scratch"], ids["tea"]]
    with pytest.raises(KeyError, match="no conversation"):
        export_data(stores, ["nope"])


def test_write_export_is_atomic_and_utf8(
    tmp_path: Path, source: tuple[StoreSet, dict[str, str]]
) -> None:
    stores, _ = source
    out = tmp_path / "out.json"
    out.write_text("old")
    write_export(out, exported(stores))
    text = out.read_text(encoding="utf-8")
    assert "ünïcode ☕" in text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_export_never_contains_the_api_key(data_dir: Path, tmp_path: Path) -> None:
    offline_settings(data_dir)
    credentials = Credentials()
    credentials.set_api_key(SECRET)
    workspace = Workspace.open(data_dir, credentials)
    try:
        fill(StoreSet(workspace.conversations, workspace.memory))
        assert workspace.credentials.api_key() == SECRET
        out = tmp_path / "out.json"
        write_export(out, export_data(workspace, include_memories=True))
    finally:
        workspace.close()
    assert SECRET not in out.read_text(encoding="utf-8")
    cli_out = tmp_path / "cli.json"
    assert main(["export", str(cli_out), "--memories"]) == 0
    assert SECRET not in cli_out.read_text(encoding="utf-8")
    assert SECRET.encode() not in b"".join(
        p.read_bytes() for p in data_dir.rglob("*") if p.is_file()
    )


# -- round trip and conflicts ----------------------------------------------------------------------


def test_round_trip_into_a_fresh_data_dir(
    source: tuple[StoreSet, dict[str, str]], target: StoreSet
) -> None:
    stores, ids = source
    data = exported(stores)
    plan = parse_import(json.dumps(data))
    assert plan.format == "assistant"
    assert (len(plan.conversations), plan.message_count, len(plan.memories)) == (2, 5, 3)
    assert plan.conflicts(target) == [] and plan.memory_conflicts(target) == []
    steps: list[tuple[int, int]] = []
    result = apply_import(
        plan,
        target,
        "skip",
        lambda done, total: steps.append((done, total)),
        keep_pinned=[m.id for m in plan.memories],  # the user ticked them all
    )
    assert (result.conversations_imported, result.memories_imported) == (2, 3)
    assert (result.conversations_skipped, result.conversations_copied) == (0, 0)
    assert result.messages_imported == 5
    assert steps[0] == (0, 5) and steps[-1] == (5, 5)
    assert result.summary() == "Imported 2 conversations and 3 memories"

    # Everything the format carries comes back exactly, in the stores and in a new export.
    assert comparable(exported(target)) == comparable(data)
    for cid in (ids["trip"], ids["tea"]):
        original, imported = stores.conversations.load(cid), target.conversations.load(cid)
        assert imported.messages == original.messages
        assert (imported.title, imported.created_at, imported.updated_at, imported.summary) == (
            original.title,
            original.created_at,
            original.updated_at,
            original.summary,
        )
    for item in stores.memory.all(None):
        if item.state != "forgotten":
            assert target.memory.get(item.id) == item
    # Imported memories are searchable, embedded, and survive a reopen of both stores.
    assert [h.item.text for h in target.memory.search("aisle seats")] == ["Prefers aisle seats"]
    assert target.memory.embedding_status().embedded == 2
    assert target.conversations.search("Lisbon")
    target.memory.close()
    root = target.conversations.directory.parent
    reopened = open_stores(root)
    try:
        assert comparable(exported(reopened)) == comparable(data)
    finally:
        reopened.memory.close()


def test_pinned_and_archived_conversations_stay_so_through_export_and_import(
    source: tuple[StoreSet, dict[str, str]], target: StoreSet
) -> None:
    stores, ids = source
    stores.conversations.set_flags(ids["trip"], pinned=True)
    stores.conversations.set_flags(ids["tea"], archived=True)
    data = exported(stores)
    flags = {c["id"]: (c.get("pinned"), c.get("archived")) for c in data["conversations"]}
    assert flags == {ids["trip"]: (True, None), ids["tea"]: (None, True)}
    plan = parse_import(json.dumps(data))
    apply_import(plan, target, "skip", keep_pinned=[m.id for m in plan.memories])
    listed = {i.id: (i.pinned, i.archived) for i in target.conversations.all()}
    assert listed == {ids["trip"]: (True, False), ids["tea"]: (False, True)}
    assert comparable(exported(target)) == comparable(data)
    bad = json.loads(json.dumps(data))
    bad["conversations"][0]["pinned"] = "yes"
    with pytest.raises(InvalidImportError, match=r"conversations\[0\]\.pinned"):
        parse_import(json.dumps(bad))


def test_second_import_with_skip_changes_nothing(
    source: tuple[StoreSet, dict[str, str]], target: StoreSet
) -> None:
    stores, ids = source
    plan = parse_import(json.dumps(exported(stores)))
    apply_import(plan, target, "skip")
    assert sorted(plan.conflicts(target)) == sorted([ids["trip"], ids["tea"]])
    assert len(plan.memory_conflicts(target)) == 3
    root = target.conversations.directory.parent
    before = snapshot(root)
    result = apply_import(plan, target, "skip")
    assert (result.conversations_imported, result.conversations_skipped) == (0, 2)
    assert (result.memories_imported, result.memories_skipped) == (0, 3)
    assert result.summary() == (
        "Imported 0 conversations (2 skipped as already present) "
        "and 0 memories (3 skipped as already present)"
    )
    assert snapshot(root) == before


def test_second_import_with_copy_copies_conversations_and_never_memories(
    source: tuple[StoreSet, dict[str, str]], target: StoreSet
) -> None:
    stores, ids = source
    data = exported(stores)
    plan = parse_import(json.dumps(data))
    apply_import(plan, target, "skip")
    result = apply_import(plan, target, "copy")
    assert (result.conversations_imported, result.conversations_copied) == (2, 2)
    assert (result.memories_imported, result.memories_skipped) == (0, 3)
    assert result.summary() == (
        "Imported 2 conversations (2 as copies) and 0 memories (3 skipped as already present)"
    )

    listing = target.conversations.all()
    assert len(listing) == 4
    copies = [c for c in listing if c.id not in (ids["trip"], ids["tea"])]
    assert sorted(c.title for c in copies) == sorted(
        ["Trip planning" + COPY_SUFFIX, "Tea" + COPY_SUFFIX]
    )
    trip_copy = next(c for c in copies if c.title.startswith("Trip"))
    assert target.conversations.load(trip_copy.id).messages == (
        target.conversations.load(ids["trip"]).messages
    )
    items = target.memory.all(None)
    assert sorted(i.text for i in items) == sorted(m["text"] for m in data["memories"])
    # The originals are untouched.
    assert comparable(export_data(target, [ids["trip"], ids["tea"]])) == comparable(
        export_data(stores, [ids["trip"], ids["tea"]])
    )


def test_each_copy_of_a_conversation_gets_its_own_title(
    source: tuple[StoreSet, dict[str, str]], target: StoreSet
) -> None:
    stores, ids = source
    plan = parse_import(json.dumps(export_data(stores, [ids["trip"]])))
    for _ in range(4):
        apply_import(plan, target, "copy")
    titles = [c.title for c in target.conversations.all()]
    assert sorted(titles) == [
        "Trip planning",
        "Trip planning (imported 2)",
        "Trip planning (imported 3)",
        "Trip planning (imported)",
    ]
    # Titles stay free for the next copy even when the user renamed one into the pattern.
    renamed = next(c.id for c in target.conversations.all() if c.title.endswith("(imported 3)"))
    target.conversations.rename(renamed, "Trip planning (imported 5)")
    apply_import(plan, target, "copy")
    titles = [c.title for c in target.conversations.all()]
    assert "Trip planning (imported 3)" in titles and len(set(titles)) == len(titles) == 5


def test_import_with_policy_skip_adds_only_what_is_missing(
    source: tuple[StoreSet, dict[str, str]], target: StoreSet
) -> None:
    stores, ids = source
    apply_import(parse_import(json.dumps(export_data(stores, [ids["tea"]]))), target, "skip")
    result = apply_import(parse_import(json.dumps(exported(stores))), target, "skip")
    assert (result.conversations_imported, result.conversations_skipped) == (1, 1)
    assert result.memories_imported == 3


def test_apply_rejects_an_unknown_policy(target: StoreSet) -> None:
    with pytest.raises(ValueError, match="policy"):
        apply_import(ImportPlan("assistant", ()), target, "merge")  # type: ignore[arg-type]


def test_store_import_conversation_never_overwrites(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    message = Message("m1", None, "user", "hi", "2024-05-01T10:00:00.000000Z")
    info = store.import_conversation("abc", "  Old   chat ", "2024-05-01T09:00:00Z", [message])
    assert (info.title, info.message_count, info.updated_at) == (
        "Old chat",
        1,
        message.created_at,
    )
    before = snapshot(data_dir)
    with pytest.raises(ConversationExistsError):
        store.import_conversation("abc", "Other", "2024-05-01T09:00:00Z", [])
    with pytest.raises(ValueError, match=r"messages\[1\]\.parent_id"):
        store.import_conversation(
            "def", "x", "2024-05-01T09:00:00Z", [message, replace(message, id="m2", parent_id="zz")]
        )
    with pytest.raises(ValueError, match="id"):
        store.import_conversation("../evil", "x", "2024-05-01T09:00:00Z", [])
    assert snapshot(data_dir) == before
    assert ConversationStore(data_dir).load("abc").messages == [message]


# -- malformed input -------------------------------------------------------------------------------


def _valid_doc() -> dict[str, Any]:
    message = {
        "id": "m1",
        "parent_id": None,
        "role": "user",
        "content": "hello",
        "created_at": "2024-05-01T10:00:00.000000Z",
    }
    reply = {
        **message,
        "id": "m2",
        "parent_id": "m1",
        "role": "assistant",
        "content": "",
        "tool_calls": [copy.deepcopy(CALL)],
    }
    conversation = {
        "id": "c1",
        "title": "One",
        "created_at": "2024-05-01T10:00:00.000000Z",
        "updated_at": "2024-05-01T10:00:00.000000Z",
        "summary": "",
        "messages": [message, reply],
    }
    second = {**copy.deepcopy(conversation), "id": "c2"}
    second["messages"].append(
        {
            **message,
            "id": "m3",
            "parent_id": "m2",
            "role": "tool",
            "tool_call_id": "call_1",
            "memory_ids": ["x"],
        }
    )
    memory = MemoryItem(
        "mem1",
        "Likes tea",
        "preference",
        0.5,
        datetime(2024, 5, 1, tzinfo=UTC),
        datetime(2024, 5, 1, tzinfo=UTC),
        datetime(2024, 5, 1, tzinfo=UTC),
    ).to_json()
    return {
        "format": FORMAT,
        "version": 1,
        "exported_at": "2024-05-02T00:00:00Z",
        "app": {"name": "Assistant", "version": "0.1.0"},
        "conversations": [conversation, second],
        "memories": [memory],
    }


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], Any]:
    def change(doc: dict[str, Any]) -> Any:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return doc

    return change


def _delete(path: list[Any]) -> Callable[[dict[str, Any]], Any]:
    def change(doc: dict[str, Any]) -> Any:
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        return doc

    return change


MSG = ["conversations", 1, "messages"]
C2 = "of message {} in conversation 2 (“One”)"
MALFORMED: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    (
        "wrong marker",
        _set(["format"], "other.export"),
        'not an Assistant export: its "format" is "other.export", where Assistant\'s exports '
        'have "assistant.export". Choose a file made by File > Export in Assistant',
    ),
    (
        "no marker",
        _delete(["format"]),
        "is not an export from Assistant, ChatGPT or Claude: it holds a JSON object without the "
        '"format": "assistant.export" line',
    ),
    (
        "too new",
        _set(["version"], 3),
        "was exported by a newer version of Assistant (its format is version 3; this version "
        "reads up to 2). Update Assistant, then import it again.",
    ),
    ("version text", _set(["version"], "1"), "the “version” field is wrong: it must be a whole"),
    ("no conversations", _delete(["conversations"]), "the “conversations” field is missing"),
    (
        "conversations object",
        _set(["conversations"], {}),
        "the “conversations” field is wrong: it must be a list",
    ),
    (
        "missing title",
        _delete(["conversations", 1, "title"]),
        "the “title” of conversation 2 is missing (at conversations[1].title)",
    ),
    (
        "empty title",
        _set(["conversations", 0, "title"], " "),
        "the “title” of conversation 1 is wrong: it must not be empty (at conversations[0].title)",
    ),
    (
        "bad id",
        _set(["conversations", 0, "id"], "../x"),
        "the “id” of conversation 1 (“One”) is wrong: '../x' is not a valid id",
    ),
    (
        "duplicate id",
        _set(["conversations", 1, "id"], "c1"),
        "is wrong: 'c1' is also the id of conversation 1 (at conversations[1].id)",
    ),
    (
        "bad time",
        _set(["conversations", 0, "created_at"], "May"),
        "'May' is not a date and time such as 2025-03-01T09:30:00Z "
        "(at conversations[0].created_at)",
    ),
    (
        "summary type",
        _set(["conversations", 0, "summary"], None),
        "the “summary” of conversation 1 (“One”) is wrong: it must be text, not null",
    ),
    (
        "unknown role",
        _set([*MSG, 2, "role"], "bot"),
        f"the “role” {C2.format(3)} is wrong: it must be one of user, assistant, tool, system, "
        "not 'bot' (at conversations[1].messages[2].role)",
    ),
    (
        "no content",
        _set([*MSG, 0, "content"], 3),
        f"the “content” {C2.format(1)} is wrong: it must be text or null, not a number",
    ),
    (
        "deep type",
        _set([*MSG, 1, "tool_calls", 0, "function", "arguments"], {"q": 1}),
        "the “function.arguments” of tool call 1 in message 2 in conversation 2 (“One”) is wrong: "
        "it must be text, not a group of named fields "
        "(at conversations[1].messages[1].tool_calls[0].function.arguments)",
    ),
    (
        "memory id type",
        _set([*MSG, 2, "memory_ids"], [1]),
        "memory id 1 in message 3 in conversation 2 (“One”) is wrong: it must be text",
    ),
    (
        "message type",
        _set([*MSG, 1], 7),
        "message 2 in conversation 2 (“One”) is wrong: it must be a group of named fields, not a "
        "number (at conversations[1].messages[1])",
    ),
    (
        "calls object",
        _set([*MSG, 1, "tool_calls"], {}),
        f"the “tool_calls” {C2.format(2)} is wrong: it must be a list",
    ),
    (
        "call type",
        _set([*MSG, 1, "tool_calls", 0, "type"], "x"),
        "the “type” of tool call 1 in message 2",
    ),
    (
        "blank message id",
        _set([*MSG, 0, "id"], " "),
        f"the “id” {C2.format(1)} is wrong: it must not be empty",
    ),
    (
        "no parent field",
        _delete([*MSG, 0, "parent_id"]),
        f"the “parent_id” {C2.format(1)} is missing",
    ),
    ("message missing id", _delete([*MSG, 0, "id"]), f"the “id” {C2.format(1)} is missing"),
    (
        "dup message",
        _set([*MSG, 1, "id"], "m1"),
        f"the “id” {C2.format(2)} is wrong: 'm1' is used by an earlier message too",
    ),
    (
        "orphan parent",
        _set([*MSG, 1, "parent_id"], "zz"),
        f"the “parent_id” {C2.format(2)} is wrong: 'zz' is not an earlier message",
    ),
    (
        "tool w/o call",
        _delete([*MSG, 2, "tool_call_id"]),
        f"the “tool_call_id” {C2.format(3)} is wrong: a tool message needs the call it answers",
    ),
    (
        "user tool calls",
        _set([*MSG, 0, "tool_calls"], [CALL]),
        f"the “tool_calls” {C2.format(1)} is wrong: only assistant messages can have tool calls",
    ),
    (
        "memory kind",
        _set(["memories", 0, "kind"], "rumour"),
        "the “kind” of memory 1 (“Likes tea”) is wrong: 'rumour' is not a kind Assistant knows",
    ),
    (
        "memory importance",
        _set(["memories", 0, "importance"], 7),
        "the “importance” of memory 1 (“Likes tea”) is wrong: it must be between 0 and 1, not 7",
    ),
    ("memory pinned", _set(["memories", 0, "pinned"], "yes"), "it must be true or false, not text"),
    (
        "memory forgotten",
        _set(["memories", 0, "state"], "forgotten"),
        "the “state” of memory 1 (“Likes tea”) is wrong: it must be one of active, archived",
    ),
    ("memory time", _set(["memories", 0, "created_at"], 5), "(at memories[0].created_at)"),
    (
        "memories object",
        _set(["memories"], {"a": 1}),
        "the “memories” field is wrong: it must be a list",
    ),
]
# What every error of an Assistant export's field ends with: what to do, then nothing changed.
REDO = "export it again from the app that made it, or correct that entry."

RAW_MALFORMED: list[tuple[str, bytes, str]] = [
    (
        "not json",
        b'{"format": "assistant.export", ',
        "conversations.json is not valid JSON: expecting property name enclosed in double quotes "
        "at line 1, column 32. If it is an export, it may be damaged or only partly downloaded",
    ),
    ("empty file", b"", "conversations.json is empty. Choose a file made by File > Export"),
    ("not utf-8", b"\xff\xfe\x00{", "conversations.json is not UTF-8 text"),
    ("NaN", b'{"format": "assistant.export", "version": NaN}', "is not valid JSON: NaN is not a"),
    (
        "number",
        b"42",
        "conversations.json is not an export from Assistant, ChatGPT or Claude: it holds only a "
        "number, not conversations. Choose a file",
    ),
    ("string", b'"hello"', "it holds only a string, not conversations"),
    (
        "chatgpt no mapping",
        b'[{"title": "x"}]',
        "conversations.json is not an export from Assistant, ChatGPT or Claude: its first entry, "
        "“x”, is neither a ChatGPT conversation (it has no “mapping”) nor a Claude one",
    ),
    (
        "chatgpt not objects",
        b"[1, 2]",
        "its first entry, “conversation 1”, is a number, not a conversation",
    ),
    (
        "empty list",
        b"[]",
        "conversations.json holds no conversations to import. Its list of conversations is empty",
    ),
    (
        "only empty",
        b'[{"mapping": {}}]',
        "conversations.json holds no conversations to import. 1 conversation without text",
    ),
    (
        "truncated",
        b'[{"mapping": {}}, {"mapp',
        "conversations.json is not valid JSON: it ends too early (the file may be cut short)",
    ),
    ("garbage after", b'[{"mapping": {}}] x', "there is more text after the end of the JSON"),
    (
        "deep",
        b"[" * 600 + b"]" * 600,
        "conversations.json is not an export: its JSON is nested more than 512 levels deep",
    ),
]


@pytest.fixture
def populated(data_dir: Path) -> Iterator[StoreSet]:
    """A data dir with data in it, whose files must not change."""
    stores = open_stores(data_dir, HashEmbedder())
    fill(stores)
    doc = _valid_doc()
    apply_import(parse_import(json.dumps(doc)), stores, "skip")
    yield stores
    stores.memory.close()


def test_the_valid_sample_parses() -> None:
    plan = parse_import(json.dumps(_valid_doc()).encode())
    assert (len(plan.conversations), plan.message_count, len(plan.memories)) == (2, 5, 1)


@pytest.mark.parametrize(("name", "change", "expected"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_export_names_the_field_and_changes_nothing(
    populated: StoreSet,
    data_dir: Path,
    name: str,
    change: Callable[[dict[str, Any]], Any],
    expected: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = snapshot(data_dir)
    raw = json.dumps(change(_valid_doc()))
    with pytest.raises(InvalidImportError) as exc:
        parse_import(raw)
    message = str(exc.value)
    assert expected in message
    assert message.startswith("conversations.json ")  # a sentence about the file
    if "wrong" in message or "missing" in message:
        assert message.endswith(REDO)  # and what to do
    assert snapshot(data_dir) == before
    bad = data_dir.parent / "bad.json"
    bad.write_text(raw, encoding="utf-8")
    populated.memory.close()
    before = snapshot(data_dir)
    capsys.readouterr()
    assert main(["import", str(bad), "--on-conflict", "copy"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("assistant: bad.json ") and expected in err
    assert err.endswith(" Nothing was changed.\n")
    assert snapshot(data_dir) == before


@pytest.mark.parametrize(
    ("name", "raw", "expected"), RAW_MALFORMED, ids=[m[0] for m in RAW_MALFORMED]
)
def test_malformed_file_is_a_clear_error(
    populated: StoreSet, data_dir: Path, name: str, raw: bytes, expected: str
) -> None:
    before = snapshot(data_dir)
    with pytest.raises(InvalidImportError) as exc:
        parse_import(raw)
    assert expected in str(exc.value)
    assert snapshot(data_dir) == before


def test_cli_error_is_printed_and_exits_1(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    doc = _valid_doc()
    doc["conversations"][1]["messages"][2]["role"] = "bot"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["import", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "assistant: bad.json can't be imported: the “role” of message 3 in conversation 2"
    )
    assert main(["import", str(tmp_path / "missing.json")]) == 1
    assert "assistant: missing.json could not be read (No such file or directory; it is at " in (
        capsys.readouterr().err
    )


# -- ChatGPT -------------------------------------------------------------------------------------


def _node(
    node_id: str,
    parent: str | None,
    children: list[str],
    role: str | None = None,
    *,
    parts: list[Any] | None = None,
    at: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "update_time": None,
            "content": extra.pop("content", {"content_type": "text", "parts": parts or []}),
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": extra.pop("metadata", {}),
            "recipient": extra.pop("recipient", "all"),
        }
    return {"id": node_id, "message": message, "parent": parent, "children": children}


T0 = 1_700_000_000.5  # 2023-11-14T22:13:20.5Z


def chatgpt_sample() -> list[dict[str, Any]]:
    """Two conversations as ChatGPT exports them: one with an edited prompt (two branches),
    hidden system context, a browsing tool call, an image part; one with no text at all."""
    nodes = [
        _node("root", None, ["sys"]),
        _node(
            "sys",
            "root",
            ["u1", "u1b"],
            "system",
            parts=[""],
            metadata={"is_visually_hidden_from_conversation": True},
        ),
        # First branch: the original prompt and its answer (not current).
        _node("u1", "sys", ["a1"], "user", parts=["What is the capital of Portugal?"], at=T0),
        _node("a1", "u1", [], "assistant", parts=["Lisbon."], at=T0 + 5),
        # Second branch: the edited prompt, which the user kept going with.
        _node(
            "u1b",
            "sys",
            ["call"],
            "user",
            at=T0 + 60,
            content={
                "content_type": "multimodal_text",
                "parts": ["What is the capital of Portugal?", {"asset_pointer": "file://x"}],
            },
        ),
        _node(
            "call",
            "u1b",
            ["tool"],
            "assistant",
            parts=['search("capital of Portugal")'],
            at=T0 + 61,
            recipient="browser",
        ),
        _node("tool", "call", ["a1b"], "tool", parts=["Lisbon is the capital"], at=T0 + 62),
        _node("a1b", "tool", ["img"], "assistant", parts=["It is ", "Lisbon."], at=T0 + 63),
        _node(
            "img",
            "a1b",
            ["code"],
            "user",
            at=T0 + 70,
            content={"content_type": "multimodal_text", "parts": [{"asset_pointer": "file://y"}]},
        ),
        _node(
            "code",
            "img",
            ["u2"],
            "assistant",
            at=T0 + 71,
            content={"content_type": "code", "language": "python", "text": "print(1)"},
        ),
        _node("u2", "code", ["a2"], "user", parts=["Thanks!"]),
        _node("a2", "u2", [], "assistant", parts=["You're welcome."], at=T0 + 90),
    ]
    first = {
        "title": "Capital  of Portugal",
        "create_time": T0,
        "update_time": T0 + 90,
        "mapping": {n["id"]: n for n in nodes},
        "moderation_results": [],
        "current_node": "a2",
        "plugin_ids": None,
        "conversation_id": "6a1c2f3e-0000-4000-8000-000000000001",
        "id": "6a1c2f3e-0000-4000-8000-000000000001",
        "default_model_slug": "gpt-4o",
    }
    empty = {
        "title": None,
        "create_time": None,
        "update_time": None,
        "mapping": {
            "r": _node("r", None, ["s"]),
            "s": _node("s", "r", [], "system", parts=["You are ChatGPT"]),
        },
        "current_node": "s",
        "id": "6a1c2f3e-0000-4000-8000-000000000002",
    }
    no_current = {
        "title": "",
        "create_time": None,
        "update_time": None,
        "mapping": {
            "r": _node("r", None, ["x", "y"]),
            "x": _node("x", "r", [], "user", parts=["older"], at=T0),
            "y": _node("y", "r", [], "user", parts=["newer"], at=T0 + 1),
        },
    }
    return [first, empty, no_current]


def test_chatgpt_imports_only_the_current_branch_in_order(target: StoreSet) -> None:
    plan = parse_import(json.dumps(chatgpt_sample()))
    assert plan.format == "chatgpt" and plan.format_name.startswith("ChatGPT")
    assert len(plan.conversations) == 2 and plan.message_count == 7
    assert plan.notes == ("1 conversation without text messages will be left out.",)
    first, last = read_conversations(plan)
    assert plan.conversations[0] == PlannedConversation.of(first)
    assert first.id == "6a1c2f3e-0000-4000-8000-000000000001"
    assert first.title == "Capital of Portugal"
    assert first.created_at == "2023-11-14T22:13:20.500000Z"
    # Images stay as placeholders and code as a code block, so that the turns keep their order.
    assert [(m.role, m.content) for m in first.messages] == [
        ("user", "What is the capital of Portugal?\n[image]"),
        ("assistant", "It is \nLisbon."),
        ("user", "[image]"),
        ("assistant", "```python\nprint(1)\n```"),
        ("user", "Thanks!"),
        ("assistant", "You're welcome."),
    ]
    assert [m.id for m in first.messages] == ["u1b", "a1b", "img", "code", "u2", "a2"]
    assert [m.parent_id for m in first.messages] == [None, "u1b", "a1b", "img", "code", "u2"]
    times = [m.created_at for m in first.messages]
    # "Thanks!" has no time of its own and takes the one before it.
    assert times == [
        "2023-11-14T22:14:20.500000Z",
        "2023-11-14T22:14:23.500000Z",
        "2023-11-14T22:14:30.500000Z",
        "2023-11-14T22:14:31.500000Z",
        "2023-11-14T22:14:31.500000Z",
        "2023-11-14T22:14:50.500000Z",
    ]
    # Without a current_node, the newest leaf is followed; an empty title gets a default one.
    assert [m.content for m in last.messages] == ["newer"]
    assert last.title == "ChatGPT conversation"
    assert last.id.startswith("chatgpt-")
    # No conversation time: the first message's, never the time of the import.
    assert last.created_at == "2023-11-14T22:13:21.500000Z"

    result = apply_import(plan, target, "skip")
    assert (result.conversations_imported, result.messages_imported) == (2, 7)
    loaded = target.conversations.load(first.id)
    assert list(loaded.messages) == list(first.messages)
    assert loaded.updated_at == "2023-11-14T22:14:50.500000Z"
    # The same file again: everything is found already here.
    again = parse_import(json.dumps(chatgpt_sample()))
    assert sorted(again.conflicts(target)) == sorted(c.id for c in plan.conversations)
    assert apply_import(again, target, "skip").conversations_skipped == 2


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            _set([0, "mapping", "a2", "parent"], "ghost"),
            "the “parent” of message “a2” is wrong: 'ghost' is not a message of this conversation "
            "(at mapping.a2.parent)",
        ),
        (_set([0, "mapping", "u1b", "parent"], "a1b"), "the parent links form a cycle"),
        (
            _set([0, "current_node"], "ghost"),
            "the “current_node” field is wrong: 'ghost' is not a message of this conversation",
        ),
        (
            _set([0, "create_time"], "yesterday"),
            "the “create_time” field is wrong: it must be a number of seconds or null, not text",
        ),
        (_set([0, "mapping", "a2", "message", "create_time"], 1e300), "not a usable time"),
        (
            _set([0, "mapping", "a2", "message", "author"], None),
            "the “message.author” of message “a2” is wrong: it must be a group of named fields",
        ),
        (
            _set([0, "mapping", "a2"], "node"),
            "message “a2” is wrong: it must be a group of named fields, not text",
        ),
        (
            _delete([0, "mapping"]),
            "is neither a ChatGPT conversation (it has no “mapping”) nor a Claude one",
        ),
    ],
)
def test_a_bad_chatgpt_conversation_is_skipped_and_named(
    target: StoreSet, change: Callable[[Any], Any], expected: str
) -> None:
    plan = parse_import(json.dumps(change(chatgpt_sample())))
    assert [c.title for c in plan.conversations] == ["ChatGPT conversation"]
    (bad,) = plan.unreadable
    assert bad.name == "Capital of Portugal" and expected in bad.reason
    note = plan.unreadable_note()
    assert note is not None
    assert note.startswith("1 conversation could not be read: ")
    assert "'Capital of Portugal' (" in note
    result = apply_import(plan, target, "skip")
    assert (result.conversations_imported, result.messages_imported) == (1, 1)


def test_a_bad_mapping_value_is_named(target: StoreSet) -> None:
    sample = chatgpt_sample()
    sample[2]["mapping"] = []
    plan = parse_import(json.dumps(sample))
    (bad,) = plan.unreadable
    assert (
        bad.reason == "the “mapping” field is wrong: it must be a group of named fields, not a list"
    )


# -- command line ----------------------------------------------------------------------------------


def test_cli_export_and_import(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    offline_settings(data_dir)
    stores = open_stores(data_dir)
    ids = fill(stores)
    stores.memory.close()
    out = tmp_path / "out.json"
    assert main(["export", str(out), "--memories"]) == 0
    assert capsys.readouterr().out == f"Exported 2 conversations and 3 memories to {out}\n"

    other = tmp_path / "other"
    offline_settings(other)
    assert main(["--data-dir", str(other), "import", str(out)]) == 0
    assert capsys.readouterr().out == "Imported 2 conversations and 3 memories\n"
    # --data-dir also works after the subcommand; the default policy is skip.
    assert main(["import", str(out), "--data-dir", str(other)]) == 0
    assert capsys.readouterr().out == (
        "Imported 0 conversations (2 skipped as already present) "
        "and 0 memories (3 skipped as already present)\n"
    )
    assert main(["import", str(out), "--data-dir", str(other), "--on-conflict", "copy"]) == 0
    assert "Imported 2 conversations (2 as copies)" in capsys.readouterr().out
    assert len(ConversationStore(other).all()) == 4

    one = tmp_path / "one.json"
    assert main(["export", str(one), "--conversation", ids["tea"]]) == 0
    assert capsys.readouterr().out == f"Exported 1 conversation to {one}\n"
    assert [c["title"] for c in json.loads(one.read_text())["conversations"]] == ["Tea"]
    assert main(["export", str(tmp_path / "x.json"), "--conversation", "nope"]) == 1
    assert "assistant: There is no conversation with id 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_cli_without_subcommand_still_parses() -> None:
    from assistant.cli import build_parser

    args = build_parser().parse_args(["--self-test", "--data-dir", "x"])
    assert (args.command, args.self_test, args.data_dir) == (None, True, "x")


@pytest.mark.slow
def test_cli_in_a_subprocess(data_dir: Path, tmp_path: Path) -> None:
    offline_settings(data_dir)
    stores = open_stores(data_dir)
    fill(stores)
    stores.memory.close()
    out = tmp_path / "out.json"
    result = child.assistant("export", str(out), "--memories", root=data_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Exported 2 conversations and 3 memories to {out}\n"

    other = tmp_path / "other"
    offline_settings(other)
    result = child.assistant("import", str(out), root=other)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Imported 2 conversations and 3 memories\n"

    before = snapshot(other)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "assistant.export", "version": 9, "conversations": []}')
    result = child.assistant("import", str(bad), root=other)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "assistant: bad.json was exported by a newer version of Assistant (its format is version 9"
    )
    assert result.stdout == ""
    assert snapshot(other) == before
