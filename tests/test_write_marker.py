"""The write marker: a reader notices another writer's write with one stat."""

from __future__ import annotations

from pathlib import Path

from assistant.memory.write_marker import WriteMarker


def test_a_reader_notices_other_writers_but_not_itself(tmp_path: Path) -> None:
    path = tmp_path / ".writes"
    reader, other = WriteMarker(path), WriteMarker(path)
    assert reader.changed()  # never caught up
    reader.caught_up(reader.stamp())
    assert not reader.changed()

    reader.announce()  # its own write is in its index already
    assert not reader.changed()

    other.announce()
    assert reader.changed()
    reader.caught_up(reader.stamp())
    assert not reader.changed()

    path.unlink()
    assert reader.changed()


def test_an_own_write_after_another_writer_still_needs_catching_up(tmp_path: Path) -> None:
    path = tmp_path / ".writes"
    reader, other = WriteMarker(path), WriteMarker(path)
    reader.caught_up(reader.stamp())
    other.announce()
    reader.announce()  # the other write is not in the reader's index
    assert reader.changed()
