"""Conversation store: files, the cached listing, prompt windows, recovery and search."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assistant.errors import StorageError
from assistant.memory import (
    Conversation,
    ConversationNotFoundError,
    ConversationStore,
    Message,
    conversation_file,
)

CALL = {"id": "call_1", "type": "function", "function": {"name": "recall", "arguments": '{"q":1}'}}


@pytest.fixture
def store(data_dir: Path) -> ConversationStore:
    return ConversationStore(data_dir)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each conversation file was read and parsed."""
    counts: Counter[str] = Counter()
    real = conversation_file.read_conversation

    def counting(path: Path, *args: Any) -> Any:
        counts[path.stem] += 1
        return real(path, *args)

    monkeypatch.setattr(conversation_file, "read_conversation", counting)
    return counts


def file_of(store: ConversationStore, conversation_id: str) -> Path:
    return store.directory / f"{conversation_id}.jsonl"


def test_round_trip_through_reopen(data_dir: Path, store: ConversationStore) -> None:
    info = store.create("Trip planning")
    user = store.append(info.id, "user", "Find flights to Lisbon")
    call = store.append(info.id, "assistant", "", tool_calls=[{**CALL, "index": 0}])
    result = store.append(info.id, "tool", "2 flights", tool_call_id="call_1", name="recall")
    answer = store.append(info.id, "assistant", "TP 1234", memory_ids=["m1", "m2"])

    loaded = ConversationStore(data_dir).load(info.id)
    assert loaded.title == "Trip planning"
    assert loaded.created_at == info.created_at
    assert loaded.updated_at == answer.created_at
    assert not loaded.temporary
    assert loaded.messages == [user, call, result, answer]
    assert [m.parent_id for m in loaded.messages] == [None, user.id, call.id, result.id]
    assert call.tool_calls == (CALL,)  # the streaming "index" is not kept
    assert answer.memory_ids == ("m1", "m2")
    assert user.created_at.endswith("Z")

    records = [json.loads(line) for line in file_of(store, info.id).read_text().splitlines()]
    assert all(r["version"] == 1 for r in records)
    assert [r["type"] for r in records] == ["meta"] + ["message"] * 4
    assert records[0] == {
        "version": 1,
        "type": "meta",
        "id": info.id,
        "title": "Trip planning",
        "created_at": info.created_at,
        "temporary": False,
    }
    assert records[1] == {"version": 1, "type": "message", **user.to_json()}
    assert set(user.to_json()) == {"id", "parent_id", "role", "content", "created_at"}
    assert Message.from_json(answer.to_json()) == answer


def test_to_openai() -> None:
    call = Message("a", None, "assistant", "", "t", tool_calls=(CALL,))
    assert call.to_openai() == {"role": "assistant", "content": "", "tool_calls": [CALL]}
    tool = Message("b", "a", "tool", "ok", "t", tool_call_id="call_1", name="recall")
    assert tool.to_openai() == {
        "role": "tool",
        "content": "ok",
        "tool_call_id": "call_1",
        "name": "recall",
    }
    user = Message("c", "b", "user", "hi", "t", memory_ids=("m",))
    assert user.to_openai() == {"role": "user", "content": "hi"}
    call.to_openai()["tool_calls"][0]["function"]["name"] = "changed"
    assert call.tool_calls[0]["function"]["name"] == "recall"


def test_a_tool_failure_is_a_flag_kept_on_disk(data_dir: Path, store: ConversationStore) -> None:
    cid = store.create("Tools").id
    store.append(cid, "assistant", "", tool_calls=[CALL])
    failed = store.append(cid, "tool", "No such memory", tool_call_id="call_1", ok=False)
    done = store.append(cid, "tool", "Error: is what the user wrote", tool_call_id="call_1")
    assert (failed.to_json()["ok"], done.to_json()["ok"]) == (False, True)
    assert ConversationStore(data_dir).load(cid).messages[1:] == [failed, done]
    with pytest.raises(ValueError, match="ok: only a tool message can fail"):
        store.append(cid, "assistant", "hi", ok=False)
    # Tool messages written before the flag existed failed when their text began "Error:".
    older = {"id": "t", "parent_id": None, "role": "tool", "tool_call_id": "call_1"}
    older["created_at"] = done.created_at
    assert not Message.from_json({**older, "content": "Error: no such memory"}).ok
    assert Message.from_json({**older, "content": "3 found"}).ok


def test_validation(store: ConversationStore) -> None:
    cid = store.create().id
    with pytest.raises(ValueError, match="role"):
        store.append(cid, "robot", "hi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tool_call_id"):
        store.append(cid, "tool", "result")
    with pytest.raises(ValueError, match="only assistant"):
        store.append(cid, "user", "hi", tool_calls=[CALL])
    with pytest.raises(ValueError, match="arguments"):
        store.append(cid, "assistant", "", tool_calls=[{"id": "x", "function": {"name": "f"}}])
    with pytest.raises(ValueError, match="title"):
        store.rename(cid, "  \n ")
    with pytest.raises(ValueError, match="no message"):
        store.set_summary(cid, "summary", "nope")
    assert store.load(cid).messages == []
    with pytest.raises(ValueError, match="created_at: missing"):
        Message.from_json({"id": "x", "parent_id": None, "role": "user", "content": "hi"})


@pytest.mark.parametrize("bad_id", ["0" * 32, "../../etc/passwd", ""])
def test_missing_conversation(store: ConversationStore, bad_id: str) -> None:
    for call in (
        lambda: store.load(bad_id),
        lambda: store.append(bad_id, "user", "hi"),
        lambda: store.rename(bad_id, "x"),
        lambda: store.delete(bad_id),
    ):
        with pytest.raises(ConversationNotFoundError) as excinfo:
            call()
        assert isinstance(excinfo.value, KeyError)
        assert isinstance(excinfo.value, StorageError)
        assert str(excinfo.value) == f"There is no conversation with id {bad_id!r}."
    assert not (store.directory / f"{'0' * 32}.jsonl").exists()


def test_rename_summary_and_delete(data_dir: Path, store: ConversationStore) -> None:
    cid = store.create(temporary=True).id
    first = store.append(cid, "user", "hello")
    store.append(cid, "assistant", "hi there")
    store.rename(cid, "  Greetings\n ")
    store.set_summary(cid, "They said hello.", first.id)

    reopened = ConversationStore(data_dir)
    loaded = reopened.load(cid)
    assert loaded.title == "Greetings"
    assert loaded.temporary
    assert (loaded.summary, loaded.summary_upto) == ("They said hello.", first.id)
    [info] = reopened.all()
    assert (info.title, info.message_count, info.temporary) == ("Greetings", 2, True)

    reopened.delete(cid)
    assert not file_of(store, cid).exists()
    assert reopened.all() == []
    with pytest.raises(KeyError):
        reopened.load(cid)
    assert store.all() == []  # the other store notices too


def test_list_newest_first(store: ConversationStore) -> None:
    old = store.create("old")
    new = store.create("new")
    assert [i.id for i in store.all()] == [new.id, old.id]
    store.append(old.id, "user", "back to this one")
    infos = store.all()
    assert [i.id for i in infos] == [old.id, new.id]
    assert (infos[0].message_count, infos[1].message_count) == (1, 0)
    assert infos[0].updated_at > infos[0].created_at


def test_list_uses_the_cache(data_dir: Path, reads: Counter[str]) -> None:
    store = ConversationStore(data_dir)
    ids = [store.create(f"c{i}").id for i in range(3)]
    for cid in ids:
        store.append(cid, "user", "hello")
    assert len(store.all()) == 3
    assert sum(reads.values()) == 0  # the store's own writes keep the cache right

    reopened = ConversationStore(data_dir)
    assert reopened.all() == store.all()
    assert sum(reads.values()) == 0  # unchanged files are not read: index.json remembers them

    store.append(ids[0], "assistant", "changed elsewhere")
    store.rename(ids[1], "Renamed elsewhere")
    infos = {i.id: i for i in reopened.all()}
    assert reads == {ids[0]: 1, ids[1]: 1}
    assert infos[ids[0]].message_count == 2
    assert infos[ids[1]].title == "Renamed elsewhere"

    reopened.all()
    assert reads == {ids[0]: 1, ids[1]: 1}


def test_list_notices_outside_changes(data_dir: Path, store: ConversationStore) -> None:
    kept = store.create("kept").id
    gone = store.create("gone").id
    store.all()
    file_of(store, gone).unlink()
    with file_of(store, kept).open("a") as f:
        f.write(json.dumps({"version": 1, "type": "update", "title": "Edited by hand"}) + "\n")
    new_id = "f" * 32
    file_of(store, new_id).write_text(
        json.dumps(
            {"version": 1, "type": "meta", "id": new_id, "title": "Copied in", "created_at": "Z"}
        )
        + "\n"
    )
    titles = {i.id: i.title for i in store.all()}
    assert titles == {kept: "Edited by hand", new_id: "Copied in"}
    index = json.loads((store.directory / "index.json").read_text())
    assert set(index["conversations"]) == {kept, new_id}


def test_corrupt_index_is_rebuilt(data_dir: Path, store: ConversationStore) -> None:
    cid = store.create("one").id
    store.append(cid, "user", "hello")
    store.all()
    index = store.directory / "index.json"
    index.write_text('{"version": 1, "conversations": {"x": {"size": "big"}}}')
    reopened = ConversationStore(data_dir)
    [info] = reopened.all()
    assert (info.id, info.title, info.message_count) == (cid, "one", 1)
    assert reopened.warnings == []
    assert set(json.loads(index.read_text())["conversations"]) == {cid}
    index.write_text("{torn")
    assert ConversationStore(data_dir).all() == [info]


def test_torn_last_line(data_dir: Path, store: ConversationStore) -> None:
    cid = store.create().id
    store.append(cid, "user", "one")
    store.append(cid, "assistant", "two")
    path = file_of(store, cid)
    with path.open("ab") as f:
        f.write(b'{"version":1,"type":"message","id":"abc","role":"us')

    reopened = ConversationStore(data_dir)
    assert [m.content for m in reopened.load(cid).messages] == ["one", "two"]
    third = reopened.append(cid, "user", "three")
    loaded = ConversationStore(data_dir).load(cid)
    assert [m.content for m in loaded.messages] == ["one", "two", "three"]
    assert third.parent_id == loaded.messages[1].id
    assert reopened.all()[0].message_count == 3


def test_corrupt_middle_line(data_dir: Path, store: ConversationStore) -> None:
    cid = store.create("Damaged").id
    for text in ("one", "two", "three"):
        store.append(cid, "user", text)
    path = file_of(store, cid)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = b'{"version":1,"type":"mess\x00\xff garbage\n'
    damaged = b"".join(lines)
    path.write_bytes(damaged)

    reopened = ConversationStore(data_dir)
    [info] = reopened.all()
    assert (info.title, info.message_count) == ("Damaged", 2)
    assert [m.content for m in reopened.load(cid).messages] == ["one", "three"]
    assert len(reopened.warnings) == 1
    assert "unreadable line" in reopened.warnings[0]
    [kept] = store.directory.glob(f"{cid}.jsonl.corrupt-*")
    assert kept.read_bytes() == damaged
    reopened.append(cid, "user", "four")
    assert [i.message_count for i in ConversationStore(data_dir).all()] == [3]


def test_missing_header_is_recovered(store: ConversationStore) -> None:
    cid = store.create("Lost title").id
    store.append(cid, "user", "still here")
    path = file_of(store, cid)
    path.write_bytes(path.read_bytes().split(b"\n", 1)[1])
    [info] = store.all()
    assert (info.title, info.message_count) == ("Recovered conversation", 1)
    assert any("header record is missing" in w for w in store.warnings)


def test_subscribe(store: ConversationStore) -> None:
    seen: list[str] = []
    unsubscribe = store.subscribe(seen.append)
    cid = store.create().id
    first = store.append(cid, "user", "hi")
    store.rename(cid, "Hi")
    store.set_summary(cid, "greeting", first.id)
    store.delete(cid)
    unsubscribe()
    store.create()
    assert seen == [cid] * 5


def test_concurrent_appends_lose_nothing(data_dir: Path, store: ConversationStore) -> None:
    cid = store.create().id

    def work(name: str) -> None:
        for i in range(25):
            store.append(cid, "user", f"{name} {i}")
            store.all()

    threads = [threading.Thread(target=work, args=(n,)) for n in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    messages = ConversationStore(data_dir).load(cid).messages
    assert len(messages) == 50
    assert {m.content for m in messages} == {
        f"{n} {i}" for n in ("left", "right") for i in range(25)
    }
    assert [m.parent_id for m in messages] == [None] + [m.id for m in messages[:-1]]
    assert store.all()[0].message_count == 50


# Prompt windows. Each 40-character message costs 10 + 4 = 14 tokens.


def message(mid: str, role: str = "user", **kwargs: Any) -> Message:
    return Message(mid, None, role, kwargs.pop("content", "x" * 40), "t", **kwargs)  # type: ignore[arg-type]


def conversation(
    messages: list[Message], summary: str = "", upto: str | None = None
) -> Conversation:
    chained = [
        dataclasses.replace(m, parent_id=messages[i - 1].id if i else None)
        for i, m in enumerate(messages)
    ]
    leaf = chained[-1].id if chained else None
    return Conversation("c", "t", "t", "t", False, summary, upto, chained, leaf)


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def test_prompt_window_budget() -> None:
    conv = conversation([message(f"m{i}", "user" if i % 2 else "assistant") for i in range(1, 6)])
    window = conv.prompt_messages(30)
    assert ids(window.messages) == ["m4", "m5"]
    assert ids(window.overflow) == ["m1", "m2", "m3"]
    assert (window.summary, window.tokens) == ("", 28)
    everything = conv.prompt_messages(10_000)
    assert (ids(everything.messages), everything.overflow) == (ids(conv.messages), [])


def test_prompt_window_keeps_the_last_message() -> None:
    conv = conversation([message("m1"), message("m2", content="y" * 4000)])
    window = conv.prompt_messages(50)
    assert (ids(window.messages), ids(window.overflow)) == (["m2"], ["m1"])
    assert window.tokens == 1004


def test_prompt_window_after_summary() -> None:
    msgs = [message(f"m{i}") for i in range(1, 6)]
    conv = conversation(msgs, summary="s" * 40, upto="m2")
    window = conv.prompt_messages(30)
    assert window.summary == "s" * 40
    assert ids(window.messages) == ["m5"]
    assert ids(window.overflow) == ["m3", "m4"]  # m1 and m2 are in the summary already
    assert window.tokens == 28
    assert ids(conv.prompt_messages(1000).messages) == ["m3", "m4", "m5"]


def test_prompt_window_keeps_tool_exchanges_whole() -> None:
    call = {**CALL, "function": {"name": "f", "arguments": "a" * 39}}  # 40 chars: 14 tokens
    msgs = [
        message("u1"),
        message("a1", "assistant", content="", tool_calls=(call,)),
        message("t1", "tool", tool_call_id="call_1"),
        message("t2", "tool", tool_call_id="call_1"),
        message("a2", "assistant"),
    ]
    assert msgs[1].estimated_tokens() == 14
    conv = conversation(msgs)
    # a2 fits, and t2 and t1 would too, but not a1: the whole exchange stays out.
    window = conv.prompt_messages(14 * 3 + 5)
    assert ids(window.messages) == ["a2"]
    assert ids(window.overflow) == ["u1", "a1", "t1", "t2"]
    window = conv.prompt_messages(14 * 4)
    assert ids(window.messages) == ["a1", "t1", "t2", "a2"]
    assert ids(window.overflow) == ["u1"]
    # An exchange still in progress is the newest "message": kept whole, whatever the budget.
    window = conversation(msgs[:4]).prompt_messages(1)
    assert ids(window.messages) == ["a1", "t1", "t2"]
    # Tool results whose call went into the summary never open the window.
    window = conversation(msgs, summary="s", upto="a1").prompt_messages(1000)
    assert ids(window.messages) == ["a2"]
    assert ids(window.overflow) == ["t1", "t2"]


def test_tool_arguments_count() -> None:
    small = message("a", "assistant", content="", tool_calls=(CALL,))
    big_call = {**CALL, "function": {"name": "recall", "arguments": "z" * 4000}}
    big = message("b", "assistant", content="", tool_calls=(big_call,))
    assert big.estimated_tokens() - small.estimated_tokens() > 900


# Search.


def test_search_across_conversations(store: ConversationStore) -> None:
    trip = store.create("Trip").id
    store.append(trip, "user", "Find me cheap flights to Lisbon in May")
    store.append(trip, "assistant", "There are two direct flights to Lisbon on May 3.")
    cooking = store.create("Cooking").id
    store.append(cooking, "user", "How long should I boil an egg?")
    store.append(cooking, "assistant", "About seven minutes for a jammy egg.")
    store.append(cooking, "tool", "Lisbon egg tarts", tool_call_id="x")  # tools are not searched
    books = store.create("Books").id
    store.append(books, "user", "Recommend a novel set in Lisbon")

    hits = store.search("lisbon flights")
    assert [h.conversation_id for h in hits] == [trip, trip, books]
    assert hits[0].title == "Trip"
    assert hits[0].score >= hits[1].score > hits[2].score
    assert "Lisbon" in hits[0].snippet

    egg = store.search("EGG boil", k=2)
    assert {(h.conversation_id, h.title) for h in egg} == {(cooking, "Cooking")}
    # The reply is scored with the question before it as context: it is what was asked for.
    assert [h.snippet for h in egg] == [
        "About seven minutes for a jammy egg.",
        "How long should I boil an egg?",
    ]
    assert store.search("tarts") == []


def test_search_ignores_stop_words(store: ConversationStore) -> None:
    cid = store.create().id
    store.append(cid, "user", "what is the thing that we did there")
    assert store.search("what is the") == []
    assert store.search("") == []
    assert [h.conversation_id for h in store.search("the thing")] == [cid]


def test_search_excludes_temporary(store: ConversationStore) -> None:
    secret = store.create("Secret", temporary=True).id
    store.append(secret, "user", "my password hint is marmalade")
    assert store.search("marmalade") == []
    store.append(secret, "user", "marmalade again")  # after the index exists
    assert store.search("marmalade") == []


def test_search_stays_current(data_dir: Path, store: ConversationStore) -> None:
    first = store.create("First").id
    store.append(first, "user", "apples are red")
    assert len(store.search("apples")) == 1
    second = store.create("Second").id
    message = store.append(second, "assistant", "green apples and pears")
    assert {h.message_id for h in store.search("pears")} == {message.id}
    store.rename(second, "Fruit")
    assert [h.title for h in store.search("pears")] == ["Fruit"]
    store.delete(first)
    assert [h.conversation_id for h in store.search("apples")] == [second]

    other = ConversationStore(data_dir)  # e.g. another process
    other.append(second, "user", "and plums")
    third = other.create("Third").id
    other.append(third, "user", "plums in brandy")
    assert {h.conversation_id for h in store.search("plums")} == {second, third}


def test_search_rescans_the_files_only_after_a_write_elsewhere(
    data_dir: Path, store: ConversationStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = store.create("First").id
    store.append(cid, "user", "apples are red")
    assert len(store.search("apples")) == 1
    scans: list[object] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: scans.append(path) or real(path))

    store.append(cid, "user", "more apples")
    assert len(store.search("apples")) == 2
    assert scans == []  # its own writes are in its index already

    ConversationStore(data_dir).append(cid, "assistant", "apples, yes")
    assert len(store.search("apples")) == 3
    assert len(scans) == 1
    assert len(store.search("apples")) == 3
    assert len(scans) == 1


def test_search_snippet_around_the_match(store: ConversationStore) -> None:
    cid = store.create().id
    text = "lorem ipsum " * 40 + "the zebra crossing\nis here " + "dolor sit " * 40
    store.append(cid, "user", text)
    [hit] = store.search("zebras zebra")
    assert "zebra crossing is here" in hit.snippet
    assert hit.snippet.startswith("…")
    assert hit.snippet.endswith("…")
    assert len(hit.snippet) <= 162


def test_search_reads_each_file_once(
    data_dir: Path, store: ConversationStore, reads: Counter[str]
) -> None:
    cids = [store.create(f"c{i}").id for i in range(3)]
    for cid in cids:
        store.append(cid, "user", f"conversation about topic {cid}")
    for _ in range(3):
        assert len(store.search("topic")) == 3
    assert reads == dict.fromkeys(cids, 1)
    assert os.path.exists(store.directory / "index.json")


def test_branches_survive_reopening_and_the_leaf_chooses_one(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    cid = store.create().id
    question = store.append(cid, "user", "Q")
    first = store.append(cid, "assistant", "A1")
    store.set_leaf(cid, question.id)
    second = store.append(cid, "assistant", "A2", stop_reason="stopped")
    assert second.parent_id == question.id
    reopened = ConversationStore(tmp_path).load(cid)
    assert [m.content for m in reopened.branch()] == ["Q", "A2"]
    assert reopened.branch()[-1].stop_reason == "stopped"
    assert [m.id for m in reopened.versions()[second.id]] == [first.id, second.id]
    store.set_leaf(cid, first.id)
    assert [m.content for m in ConversationStore(tmp_path).load(cid).branch()] == ["Q", "A1"]
    follow = store.append(cid, "user", "more")
    assert follow.parent_id == first.id
    with pytest.raises(ValueError, match="no message"):
        store.set_leaf(cid, "nope")


def test_pinned_and_archived_are_kept_in_the_file_and_the_listing(data_dir: Path) -> None:
    store = ConversationStore(data_dir)
    cid = store.create("Keep").id
    store.append(cid, "user", "hello")
    store.set_flags(cid, pinned=True)
    store.set_flags(cid, archived=True)
    store.set_flags(cid, pinned=False)
    (info,) = store.all()
    assert (info.pinned, info.archived) == (False, True)
    again = ConversationStore(data_dir)  # from the file, and from the listing's cache
    (info,) = again.all()
    assert (info.pinned, info.archived) == (False, True)
    (data_dir / "conversations" / "index.json").unlink()
    loaded = ConversationStore(data_dir).load(cid)
    assert (loaded.pinned, loaded.archived) == (False, True)
    (info,) = ConversationStore(data_dir).all()
    assert (info.pinned, info.archived) == (False, True)
