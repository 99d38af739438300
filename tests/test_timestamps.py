"""Times as the data files hold them: one way to write them, and every older form still read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from assistant.memory.items import MemoryItem
from assistant.timestamps import is_timestamp, parse, stamp


def test_stamp_is_utc_with_microseconds_and_a_z() -> None:
    moment = datetime(2026, 11, 24, 9, 30, 1, 5, tzinfo=timezone(timedelta(hours=2)))
    assert stamp(moment) == "2026-11-24T07:30:01.000005Z"
    assert parse(stamp(moment)) == moment
    assert stamp().endswith("Z")


def test_parse_takes_every_form_the_app_ever_wrote() -> None:
    expected = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
    for text in ("2024-01-01T12:00:00Z", "2024-01-01T12:00:00+00:00", "2024-01-01T12:00:00"):
        assert parse(text) == expected
    assert is_timestamp("2024-01-01T12:00:00.000000Z")
    assert not is_timestamp("yesterday")


def test_a_memory_written_with_an_offset_reads_and_is_written_back_with_a_z() -> None:
    raw = {
        "id": "a" * 32,
        "text": "The user likes tea",
        "kind": "preference",
        "importance": 0.5,
        "created_at": "2024-01-01T12:00:00+00:00",
        "updated_at": "2024-01-01T12:00:00+00:00",
        "last_accessed": "2024-01-01T12:00:00+00:00",
    }
    item = MemoryItem.from_json(raw)
    assert item.to_json()["created_at"] == "2024-01-01T12:00:00.000000Z"
