"""Memory history: events in the log, supersede and merge, the timeline, older logs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from assistant.errors import StorageError
from assistant.memory import semantic
from assistant.memory.history import USED_KEPT
from assistant.memory.items import MemoryEvent, MemoryItem, Source
from assistant.memory.semantic import LOG_NAME, LOG_VERSION, SemanticMemory
from tests.embedders import HashEmbedder


@pytest.fixture
def mem_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


def types(events: list[MemoryEvent]) -> list[str]:
    return [e.type for e in events]


def reopened(mem: SemanticMemory, directory: Path, *, crash: bool = False) -> SemanticMemory:
    """The store opened again: from its index cache after a close, or replaying the log
    after a crash (no close: the cache, if any, is older than the log)."""
    if not crash:
        mem.close()
    return SemanticMemory.open(directory)


@pytest.mark.parametrize("crash", [False, True])
def test_every_change_is_an_event_and_survives_reopening(mem_dir: Path, crash: bool) -> None:
    mem = SemanticMemory.open(mem_dir)
    source = Source("conv", "m1")
    item = mem.add("Alice lives in Porto", source=source, origin="curator", tags=("home",))
    mem.update(item.id, text="Alice lives in Porto, Portugal", by="tool")
    mem.update(item.id, importance=0.8)
    mem.pin(item.id)
    mem.pin(item.id, False)
    mem.mark_used([item.id], reply=Source("conv", "a7"))
    mem.archive(item.id)
    mem.restore(item.id)
    mem.forget(item.id)
    mem.restore(item.id)
    expected = [
        "created",
        "edited",
        "edited",
        "pinned",
        "unpinned",
        "used",
        "archived",
        "restored",
        "forgotten",
        "restored",
    ]
    for store in (mem, reopened(mem, mem_dir, crash=crash)):
        events = store.history(item.id)
        assert types(events) == expected
        created, edited, reweighed = events[:3]
        assert (created.by, created.source, created.text_after) == (
            "curator",
            source,
            "Alice lives in Porto",
        )
        assert (edited.by, edited.text_before, edited.text_after) == (
            "tool",
            "Alice lives in Porto",
            "Alice lives in Porto, Portugal",
        )
        assert (reweighed.text_before, reweighed.reason) == (None, "importance 0.5 -> 0.8")
        assert events[5].source == Source("conv", "a7")
        assert store.get(item.id).origin == "curator"  # type: ignore[union-attr]
        assert store.get(item.id).access_count == 1  # type: ignore[union-attr]


@pytest.mark.parametrize("crash", [False, True])
def test_supersede_archives_the_old_fact_and_links_both(mem_dir: Path, crash: bool) -> None:
    mem = SemanticMemory.open(mem_dir, HashEmbedder())
    porto = mem.add("The user lives in Porto")
    moved = datetime(2026, 3, 1, tzinfo=UTC)
    lisbon = mem.supersede(
        porto.id,
        "The user lives in Lisbon",
        by="curator",
        source=Source("conv", "m9"),
        reason="moved to Lisbon",
        valid_from=moved,
    )
    assert [h.item.id for h in mem.search("where does the user live")] == [lisbon.id]
    assert mem.find_related("user lives in Lisbon")[0].item.id == lisbon.id
    store = reopened(mem, mem_dir, crash=crash)
    old, new = store.get(porto.id), store.get(lisbon.id)
    assert old is not None and new is not None
    assert (old.state, old.valid_to, old.superseded_by) == ("archived", moved, lisbon.id)
    assert not old.is_current
    assert (new.supersedes, new.valid_from, new.origin, new.is_current) == (
        (porto.id,),
        moved,
        "curator",
        True,
    )
    superseded = store.history(porto.id)[-1]
    assert (superseded.type, superseded.related_id, superseded.reason, superseded.by) == (
        "superseded",
        lisbon.id,
        "moved to Lisbon",
        "curator",
    )
    assert types(store.history(lisbon.id)) == ["created"]


def test_supersede_without_a_date_ends_the_old_fact_now(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    old = mem.add("Bob works at Acme")
    new = mem.supersede(old.id, "Bob works at Initech", by="tool", reason="changed jobs")
    ended = mem.get(old.id)
    assert ended is not None and ended.valid_to == new.created_at
    with pytest.raises(KeyError):
        mem.supersede("nope", "text", by="tool", reason="r")


def test_merge_into_keeps_what_the_memory_said_before(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("Carol likes tea")
    merged = mem.merge_into(
        item.id, "Carol likes green tea", by="curator", source=Source("c", "m"), importance=0.7
    )
    assert (merged.text, merged.importance) == ("Carol likes green tea", 0.7)
    event = mem.history(item.id)[-1]
    assert (event.type, event.text_before, event.text_after, event.source) == (
        "merged",
        "Carol likes tea",
        "Carol likes green tea",
        Source("c", "m"),
    )
    assert mem.search("green tea")[0].item.id == item.id


def test_save_merges_with_a_merged_event_and_the_origin(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    added, _ = mem.save("Dana plays the violin", origin="tool")
    assert added.origin == "tool"
    merged, before = mem.save("Dana plays the violin", kind="preference", origin="curator")
    assert before is not None and merged.kind == "preference"
    assert types(mem.history(added.id)) == ["created", "merged"]
    assert mem.history(added.id)[-1].by == "curator"


def test_insight_rests_on_memories_and_keeps_its_validity(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    a = mem.add("Eve is looking at flats in Lisbon")
    b = mem.add("Eve asked about Portuguese lessons")
    since = datetime(2026, 1, 1, tzinfo=UTC)
    insight = mem.add(
        "Eve is preparing to move to Lisbon",
        kind="insight",
        origin="reflection",
        rests_on=[a.id, b.id],
        valid_from=since,
    )
    again = reopened(mem, mem_dir)
    got = again.get(insight.id)
    assert got is not None
    assert (got.rests_on, got.valid_from, got.origin) == ((a.id, b.id), since, "reflection")
    assert again.get(a.id) == a


def test_timeline_filters_newest_first(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    a = mem.add("first fact")
    b = mem.add("second fact")
    mem.update(a.id, text="first fact, corrected")
    mem.forget(b.id)
    everything = mem.timeline()
    assert types(everything) == ["forgotten", "edited", "created", "created"]
    assert [e.memory_id for e in everything[2:]] == [b.id, a.id]
    assert types(mem.timeline(types=["created"], limit=1)) == ["created"]
    assert mem.timeline(types=["created"], limit=1)[0].memory_id == b.id
    edited_at = everything[1].at
    assert types(mem.timeline(since=edited_at)) == ["forgotten", "edited"]
    assert types(mem.timeline(until=edited_at)) == ["created", "created"]


def test_forgotten_memory_and_its_history_leave_the_disk(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    kept = mem.add("Frank likes chess")
    secret = mem.add("Frank's secret password hint is swordfish")
    mem.update(secret.id, text="Frank's secret hint is swordfish")
    mem.mark_used([secret.id, kept.id])
    mem.forget(secret.id)
    mem.close()
    data = (mem_dir / LOG_NAME).read_bytes() + (mem_dir / "semantic-index.npz").read_bytes()
    assert b"swordfish" not in data
    assert (mem_dir / LOG_NAME).read_bytes().count(secret.id.encode()) == 2  # tombstones: 2 texts
    again = SemanticMemory.open(mem_dir)
    assert again.get(secret.id) is None
    assert types(again.history(kept.id)) == ["created", "used"]
    assert again.history(secret.id) == []


def test_compaction_keeps_history_and_the_last_uses(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("counter")
    mem.update(item.id, text="counter, edited")
    for _ in range(1200):
        mem.mark_used([item.id])
    lines = (mem_dir / LOG_NAME).read_text().splitlines()
    assert len(lines) < 1000  # compacted on the way
    for store in (mem, reopened(mem, mem_dir, crash=True)):
        events = store.history(item.id)
        assert types(events)[:2] == ["created", "edited"]
        assert 0 < types(events).count("used") <= 1200 - USED_KEPT
        assert store.get(item.id).access_count == 1200  # type: ignore[union-attr]
    mem.compact()
    assert types(mem.history(item.id)).count("used") == USED_KEPT


_V1_LOG = (
    '{"version":1,"op":"put","item":{"id":"old1","text":"Grace speaks Dutch","kind":"fact",'
    '"importance":0.6,"pinned":false,"created_at":"2025-05-01T10:00:00.000000Z",'
    '"updated_at":"2025-05-01T10:00:00.000000Z","last_accessed":"2025-05-01T10:00:00.000000Z",'
    '"access_count":0,"state":"active","source":{"conversation_id":"c1","message_id":"m1"},'
    '"tags":[]}}\n'
    '{"version":1,"op":"used","ids":["old1"],"at":"2025-06-01T10:00:00.000000Z"}\n'
)


def test_a_log_of_version_1_opens_and_gains_history(mem_dir: Path) -> None:
    mem_dir.mkdir()
    (mem_dir / LOG_NAME).write_text(_V1_LOG)
    mem = SemanticMemory.open(mem_dir)
    item = mem.get("old1")
    assert item is not None
    assert (item.origin, item.access_count, item.valid_to, item.is_current) == (
        "user",
        1,
        None,
        True,
    )
    events = mem.history("old1")
    assert types(events) == ["created", "used"]
    assert (events[0].at, events[0].source, events[0].text_after) == (
        item.created_at,
        Source("c1", "m1"),
        "Grace speaks Dutch",
    )
    assert types(mem.timeline()) == ["used", "created"]
    assert mem.timeline(types=["created"]) == events[:1]
    mem.update("old1", text="Grace speaks Dutch and Frisian")
    again = reopened(mem, mem_dir, crash=True)
    assert types(again.history("old1")) == ["created", "used", "edited"]
    assert again.history("old1")[0].text_after == "Grace speaks Dutch"  # the text before
    assert again.timeline(types=["created"])[0].text_after == "Grace speaks Dutch"
    assert (mem_dir / LOG_NAME).read_text().startswith(_V1_LOG)


def test_a_record_of_a_newer_version_is_refused_and_the_file_kept(mem_dir: Path) -> None:
    mem_dir.mkdir()
    record = {"version": LOG_VERSION + 1, "op": "event", "event": {"memory_id": "old1"}}
    newer = _V1_LOG + json.dumps(record) + "\n"
    (mem_dir / LOG_NAME).write_text(newer)
    with pytest.raises(StorageError, match="newer version"):
        SemanticMemory.open(mem_dir)
    assert (mem_dir / LOG_NAME).read_text() == newer


def test_a_bad_event_record_is_set_aside_like_any_bad_record(mem_dir: Path) -> None:
    mem_dir.mkdir()
    bad = '{"version":2,"op":"event","event":{"memory_id":"old1","type":"exploded","at":"x"}}\n'
    (mem_dir / LOG_NAME).write_text(_V1_LOG + bad)
    mem = SemanticMemory.open(mem_dir)
    assert any("skipped 1 unreadable" in w for w in mem.warnings)
    assert types(mem.history("old1")) == ["created", "used"]


def test_events_round_trip_and_name_bad_fields() -> None:
    at = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)
    event = MemoryEvent(
        "m",
        "decayed",
        at,
        by="user",
        source=Source("c", None),
        reason="not used for 90 days",
        importance_before=0.8,
        importance_after=0.6,
    )
    raw = event.to_json()
    assert "text_before" not in raw
    assert MemoryEvent.from_json(json.loads(json.dumps(raw))) == event
    for field, value in [("type", "boom"), ("by", "martians"), ("importance_after", "high")]:
        with pytest.raises(ValueError, match=field):
            MemoryEvent.from_json({**raw, field: value})
    with pytest.raises(ValueError, match="at"):
        MemoryEvent.from_json({**raw, "at": 5})


def test_items_round_trip_with_links_and_refuse_bad_ones() -> None:
    at = datetime(2026, 2, 3, tzinfo=UTC)
    item = MemoryItem(
        "i",
        "text",
        "fact",
        0.5,
        at,
        at,
        at,
        origin="import",
        valid_from=at - timedelta(days=3),
        valid_to=at,
        supersedes=("a",),
        superseded_by="b",
        rests_on=("c", "d"),
    )
    assert MemoryItem.from_json(json.loads(json.dumps(item.to_json()))) == item
    plain = MemoryItem("j", "text", "fact", 0.5, at, at, at)
    assert set(plain.to_json()) >= {"origin"} and "supersedes" not in plain.to_json()
    for field, value in [("origin", "aliens"), ("supersedes", "a"), ("superseded_by", 3)]:
        with pytest.raises(ValueError, match=field):
            MemoryItem.from_json({**item.to_json(), field: value})


def test_decay_halves_importance_per_half_life_once_and_says_why(mem_dir: Path) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("Hana collects stamps", importance=0.8)
    pinned = mem.add("Hana's birthday is in May", importance=0.8, pinned=True)
    start = item.last_accessed
    assert mem.decay(start + timedelta(days=20), half_life_days=90) == []  # less than a fifth
    [event] = mem.decay(start + timedelta(days=90), half_life_days=90)
    assert (event.memory_id, event.type, event.reason) == (
        item.id,
        "decayed",
        "not used for 90 days",
    )
    assert (event.importance_before, event.importance_after) == (0.8, pytest.approx(0.4))
    assert mem.decay(start + timedelta(days=90), half_life_days=90) == []  # idempotent
    # The next period starts at the last decay: 90 more days halve it once more, not twice.
    [event] = mem.decay(start + timedelta(days=180), half_life_days=90)
    assert event.importance_after == pytest.approx(0.2)
    assert event.reason == "not used for 180 days"
    # A use restarts the clock.
    mem.mark_used([item.id], now=start + timedelta(days=200))
    assert mem.decay(start + timedelta(days=220), half_life_days=90) == []
    events = mem.decay(start + timedelta(days=500), half_life_days=90)
    assert types(events) == ["decayed", "archived"]
    assert events[1].reason == "importance below 0.1"
    again = reopened(mem, mem_dir)  # from the index cache
    assert again.get(item.id) == mem.get(item.id)
    assert again.get(item.id).decayed_at == start + timedelta(days=500)  # type: ignore[union-attr]
    assert again.get(item.id).state == "archived"  # type: ignore[union-attr]
    assert types(again.history(item.id)) == [
        "created",
        "decayed",
        "decayed",
        "used",
        "decayed",
        "archived",
    ]
    assert again.get(pinned.id).importance == 0.8  # type: ignore[union-attr]
    assert again.decay(start + timedelta(days=900), half_life_days=90) == []
    with pytest.raises(ValueError, match="half-life"):
        again.decay(half_life_days=0)


@pytest.mark.parametrize("embedder", [None, HashEmbedder()])
def test_search_with_history_finds_superseded_and_archived_facts(
    mem_dir: Path, embedder: HashEmbedder | None
) -> None:
    mem = SemanticMemory.open(mem_dir, embedder)
    porto = mem.add("The user lives in Porto")
    lisbon = mem.supersede(porto.id, "The user lives in Lisbon", by="curator", reason="moved")
    old_job = mem.add("The user works in a bakery in Porto")
    mem.archive(old_job.id)
    secret = mem.add("The user lives in a blue house")
    mem.forget(secret.id)
    query = "where does the user live"
    assert [h.item.id for h in mem.search(query)] == [lisbon.id]
    found = [h.item.id for h in mem.search(query, include_history=True)]
    assert {lisbon.id, porto.id} <= set(found) and secret.id not in found
    assert mem.search("bakery", include_history=True)[0].item.id == old_job.id
    assert old_job.id not in [h.item.id for h in mem.search("bakery")]
    # The archive's index follows later changes: a restore takes an item out of it.
    mem.restore(old_job.id)
    mem.update(porto.id, text="The user lived in Porto until 2026")
    assert mem.search("bakery")[0].item.id == old_job.id
    assert mem.search("until 2026", include_history=True)[0].item.id == porto.id
    assert porto.id not in [h.item.id for h in mem.search("until 2026")]


@pytest.mark.parametrize("meanwhile", ["add", "compact"])
def test_history_loads_outside_the_lock_and_misses_nothing_written_meanwhile(
    mem_dir: Path, meanwhile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = SemanticMemory.open(mem_dir)
    first = mem.add("Ivy grows tomatoes")
    mem.update(first.id, text="Ivy grows cherry tomatoes")
    mem = reopened(mem, mem_dir)  # from the index cache: the history is still in the log
    read = semantic._events_in
    late: list[MemoryItem] = []

    def slow_read(path: Path, start: int, end: int) -> list[MemoryEvent]:
        events = read(path, start, end)
        if not late:  # the first read, without the lock: another thread changes the store
            late.append(mem.add("Ivy keeps bees"))
            if meanwhile == "compact":
                mem.compact()
        return events

    monkeypatch.setattr(semantic, "_events_in", slow_read)
    assert types(mem.history(first.id)) == ["created", "edited"]
    assert types(mem.history(late[0].id)) == ["created"]
    assert types(mem.timeline()) == ["created", "edited", "created"]


def test_the_log_keeps_a_text_once(mem_dir: Path) -> None:
    """A "created" event leaves its text out (the put has it); the history still shows it."""
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("Jon restores old bicycles")
    assert (mem_dir / LOG_NAME).read_text().count("old bicycles") == 1
    mem.merge_into(item.id, "Jon restores and sells old bicycles", by="curator")
    created, merged = mem.history(item.id)
    assert created.text_after == merged.text_before == "Jon restores old bicycles"


def test_the_history_can_be_read_ahead(mem_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = SemanticMemory.open(mem_dir)
    item = mem.add("Kim sails on weekends")
    mem = reopened(mem, mem_dir)
    reads: list[int] = []
    read = semantic._events_in
    monkeypatch.setattr(semantic, "_events_in", lambda *a: reads.append(1) or read(*a))
    mem.load_history()  # the worker does this at start-up, off the GUI thread
    assert reads
    reads.clear()
    assert types(mem.history(item.id)) == ["created"]
    assert types(mem.timeline()) == ["created"]
    assert reads == []
