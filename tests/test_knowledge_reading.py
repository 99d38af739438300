"""Reading files into chunks that know their place, and every kind of bad input as a status."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from assistant.knowledge.formats import kind_of
from assistant.knowledge.reading import (
    BINARY,
    DAMAGED_PDF,
    ENCRYPTED,
    LINK_LOOP,
    MAX_CHARS,
    NO_TEXT_LAYER,
    Chunk,
    Place,
    UnreadableFileError,
    read_file,
)
from assistant.knowledge.sources import Sources
from assistant.sizes import MB
from tests.files import make_pdf

LIMIT = 50 * MB


def chunks(path: Path, max_bytes: int = LIMIT) -> list[Chunk]:
    kind = kind_of(path)
    assert kind is not None
    return list(read_file(path, kind, max_bytes=max_bytes).chunks)


def test_pdf_pages_are_places(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "report.pdf", ["Revenue grew by 12 percent.", "Costs fell in May."])
    reading = read_file(pdf, "pdf", max_bytes=LIMIT)
    found = list(reading.chunks)
    assert reading.pages == 2
    assert [(c.place.page, c.place.label()) for c in found] == [(1, "p. 1"), (2, "p. 2")]
    assert "Costs fell in May." in found[1].text


def test_markdown_chunks_carry_their_heading_path_and_lines(tmp_path: Path) -> None:
    body = "word " * 40
    text = (
        f"# Guide\n\nIntro {body}\n\n## Install\n\n### Linux\n\nRun apt. {body}\n\n"
        f"```\n# not a heading\n```\n\n## Use\n\nOpen it. {body}\n"
    )
    path = tmp_path / "guide.md"
    path.write_text(text)
    found = chunks(path)
    headings = [c.place.heading for c in found]
    assert headings == [("Guide",), ("Guide", "Install"), ("Guide", "Install", "Linux"),
                        ("Guide", "Use")]  # fmt: skip
    linux = found[2]
    assert linux.place.first_line == 7
    assert "# not a heading" in linux.text  # a fenced line is not a heading
    assert linux.place.label() == "Guide > Install > Linux, lines 7-14"


def test_code_is_cut_at_blank_lines_into_line_ranges_that_cover_the_file(tmp_path: Path) -> None:
    lines = []
    for n in range(60):
        lines += [f"def function_{n}(x):", f"    return x * {n}  # some words here", ""]
    path = tmp_path / "big.py"
    path.write_text("\n".join(lines))
    found = chunks(path)
    assert len(found) > 2
    assert all(len(c.text) <= MAX_CHARS for c in found)
    covered = [(c.place.first_line, c.place.last_line) for c in found]
    assert covered[0][0] == 1
    for (_, end), (start, _) in itertools.pairwise(covered):
        assert start == end + 1  # no line lost between chunks
    assert all(c.text.rstrip().splitlines()[-1].strip() for c in found)


def test_one_very_long_line_is_cut_up(tmp_path: Path) -> None:
    path = tmp_path / "min.js"
    path.write_text("var a=1;" * 1000)
    found = chunks(path)
    assert len(found) == -(-8000 // MAX_CHARS)
    assert {c.place for c in found} == {Place(first_line=1, last_line=1)}


def test_invalid_utf8_is_replaced_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"caf\xe9 au lait\nplain line\n")
    reading = read_file(path, "text", max_bytes=LIMIT)
    assert [c.text for c in reading.chunks] == ["caf\ufffd au lait\nplain line"]
    assert reading.notes == ["1 bytes that are not UTF-8 were replaced"]


@pytest.mark.parametrize(
    ("make", "status"),
    [
        (lambda p: make_pdf(p / "locked.pdf", ["secret"], password="pw"), ENCRYPTED),
        (lambda p: make_pdf(p / "scan.pdf", ["", ""], text=False), NO_TEXT_LAYER),
        (lambda p: _truncated_pdf(p / "broken.pdf"), DAMAGED_PDF),
        (lambda p: _write(p / "fake.pdf", b"just text, not a PDF"), DAMAGED_PDF),
        (lambda p: _write(p / "data.txt", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), BINARY),
        (lambda p: _loop(p / "loop.md"), LINK_LOOP),
        (lambda p: p / "missing.txt", "it does not exist"),
    ],
)
def test_bad_files_say_why_in_words(tmp_path: Path, make: object, status: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(UnreadableFileError) as raised:
        chunks(path)
    assert str(raised.value) == status


def test_a_2_gb_file_is_refused_by_its_size_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as f:  # sparse: takes no room on disk
        f.truncate(2 * 2**30)
    with pytest.raises(UnreadableFileError, match="larger than the 50 MB limit"):
        read_file(path, "text", max_bytes=LIMIT)


def test_a_folder_limit_of_1_mb_is_1000000_bytes(tmp_path: Path) -> None:
    limit = Sources(max_file_mb=1).max_bytes
    path = tmp_path / "edge.txt"
    path.write_bytes(b"a" * MB)
    assert len(list(read_file(path, "text", max_bytes=limit).chunks)) > 0
    path.write_bytes(b"a" * (MB + 1))
    with pytest.raises(UnreadableFileError, match="larger than the 1 MB limit"):
        read_file(path, "text", max_bytes=limit)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_says_permission_denied(tmp_path: Path) -> None:
    path = tmp_path / "private.txt"
    path.write_text("secret")
    path.chmod(0)
    with pytest.raises(UnreadableFileError, match="permission denied"):
        chunks(path)


def _truncated_pdf(path: Path) -> Path:
    whole = make_pdf(path, ["Some text that will be cut off."]).read_bytes()
    path.write_bytes(whole[: len(whole) // 3])
    return path


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _loop(path: Path) -> Path:
    other = path.with_name("other.md")
    path.symlink_to(other)
    other.symlink_to(path)
    return path
