"""Attachments: checked before anything is sent, copied into the data dir (surviving the original
being moved, deleted with the conversation), and sent whole, as the passages closest to the
message with a note, or as image parts to a model that takes images."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assistant.knowledge import AttachmentError, AttachmentStore, prepare
from assistant.knowledge.reading import BINARY
from assistant.sizes import MB, size_in_words
from assistant.workspace import Workspace
from tests.files import make_pdf

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def store(data_dir: Path) -> AttachmentStore:
    return AttachmentStore(data_dir)


def test_a_copy_belongs_to_the_conversation_and_survives_the_original(
    store: AttachmentStore, tmp_path: Path
) -> None:
    original = make_pdf(tmp_path / "report.pdf", ["One.", "Two.", "Three."])
    attached = store.add("c1", original)
    original.rename(tmp_path / "moved.pdf")
    assert attached.path.read_bytes() == (tmp_path / "moved.pdf").read_bytes()
    assert attached.label() == f"report.pdf · {-(-attached.size // 1000)} kB · 3 pages"
    assert store.of("c1") == [attached]
    assert store.of("c2") == []


def test_an_attachment_goes_with_its_conversation(data_dir: Path, tmp_path: Path) -> None:
    workspace = Workspace.open(data_dir)
    try:
        cid = workspace.conversations.create().id
        note = tmp_path / "note.md"
        note.write_text("# Note\n\nHello.\n")
        workspace.attachments.add(cid, note)
        workspace.conversations.delete(cid)
        assert workspace.attachments.of(cid) == []
        assert not (data_dir / "attachments" / cid).exists()
    finally:
        workspace.close()


@pytest.mark.parametrize(
    ("name", "size", "message"),
    [
        ("huge.pdf", 25 * MB, "huge.pdf is 25.0 MB: attachments can be at most 20 MB."),
        ("edge.png", 20 * MB + 1, "edge.png is 20.1 MB: attachments can be at most 20 MB."),
        ("shown.png", 20_900_000, "shown.png is 20.9 MB: attachments can be at most 20 MB."),
        ("tool.exe", 10, "tool.exe: Assistant cannot read this kind of file"),
    ],
)
def test_refused_before_anything_is_copied(
    store: AttachmentStore, tmp_path: Path, name: str, size: int, message: str
) -> None:
    path = tmp_path / name
    with path.open("wb") as f:
        f.truncate(size)
    with pytest.raises(AttachmentError) as raised:
        store.add("c1", path)
    assert str(raised.value).startswith(message)
    assert store.of("c1") == []


def test_the_limit_read_is_the_limit_applied(store: AttachmentStore, tmp_path: Path) -> None:
    """20 MB is 20,000,000 bytes; a size is shown rounded up, so a file shown at "20.0 MB" is
    taken and one a byte larger, shown at "20.1 MB", is refused (MiB let 20.9 MB through)."""
    edge = tmp_path / "edge.png"
    with edge.open("wb") as f:
        f.truncate(20 * MB)
    attached = store.add("c1", edge)
    assert attached.label() == "edge.png · 20.0 MB"
    assert [size_in_words(n) for n in (999, 1000, 1001, 999_999, MB, MB + 1)] == [
        "999 bytes",
        "1 kB",
        "2 kB",
        "1.0 MB",
        "1.0 MB",
        "1.1 MB",
    ]


def test_text_that_fits_goes_whole(store: AttachmentStore, tmp_path: Path) -> None:
    path = tmp_path / "plan.md"
    path.write_text("# Plan\n\nAsk the board in March.\n")
    attached = prepare([store.add("c1", path)], "when?", budget_tokens=1000, accepts_images=False)
    assert attached.text == "File plan.md:\n[Plan, lines 1-3]\n# Plan\n\nAsk the board in March."
    assert attached.notes == []


def test_a_long_file_sends_the_passages_closest_to_the_message_with_a_note(
    store: AttachmentStore, tmp_path: Path
) -> None:
    pages = [f"Page {n}: routine notes about the weather and the office." for n in range(1, 40)]
    pages[26] = "The zeppelin hangar lease ends in October; renewal costs 9,000 euros."
    path = make_pdf(tmp_path / "minutes.pdf", pages)
    attached = prepare(
        [store.add("c1", path)], "When does the zeppelin hangar lease end?",
        budget_tokens=60, accepts_images=False,
    )  # fmt: skip
    note = (
        "minutes.pdf is too long for the prompt: the 2 of its 39 passages closest to your "
        "message were sent."
    )
    assert attached.notes == [note]
    assert "[p. 27]\nThe zeppelin hangar lease ends in October" in attached.text
    assert attached.text.startswith(f"File minutes.pdf ({note})")


def test_images_go_as_image_parts_or_are_refused_with_a_clear_line(
    store: AttachmentStore, tmp_path: Path
) -> None:
    path = tmp_path / "dot.png"
    path.write_bytes(PNG)
    image = store.add("c1", path)
    attached = prepare([image], "what is this?", budget_tokens=1000, accepts_images=True)
    url = attached.images[0]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(PNG).decode()
    with pytest.raises(AttachmentError, match=r"dot.png: this model does not accept images"):
        prepare([image], "what is this?", budget_tokens=1000, accepts_images=False)


@pytest.mark.parametrize(
    ("make", "status"),
    [
        (lambda p: make_pdf(p / "scan.pdf", ["", ""], text=False), "no text layer"),
        (lambda p: make_pdf(p / "locked.pdf", ["Secret."], password="pw"), "password-protected"),
        (lambda p: _write(p / "broken.pdf", b"%PDF-1.4 not really"), "damaged or not a PDF"),
        (lambda p: _write(p / "data.txt", b"ab\0cd" * 100), "binary content"),
    ],
)
def test_a_file_that_gives_no_text_is_refused_before_it_is_copied(
    store: AttachmentStore, tmp_path: Path, make: Callable[[Path], Path], status: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(AttachmentError) as raised:
        store.add("c1", path)
    assert str(raised.value).startswith(f"{path.name}: {status}")
    assert store.of("c1") == []


def test_a_copy_that_gives_no_text_at_send_time_is_named_not_sent(
    store: AttachmentStore, tmp_path: Path
) -> None:
    note = store.add("c1", _write(tmp_path / "note.txt", b"Hello."))
    note.path.write_bytes(b"\0\0binary now")
    attached = prepare([note], "read it", budget_tokens=1000, accepts_images=True)
    assert attached.text.startswith("File note.txt: not sent (note.txt: binary content")
    assert attached.notes == [f"note.txt: {BINARY}"]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_message_keeps_its_attachments_and_refuses_names_that_leave_their_folder() -> None:
    from assistant.json_fields import FieldError
    from assistant.memory import AttachedFile, Message

    raw = {
        "id": "m1",
        "parent_id": None,
        "role": "user",
        "content": "See this.",
        "created_at": "2026-11-25T10:00:00Z",
        "attachments": [
            {"id": "a1", "name": "report.pdf", "size": 1200, "kind": "pdf", "pages": 4}
        ],
    }
    message = Message.from_json(raw)
    assert message.attachments == (AttachedFile("a1", "report.pdf", 1200, "pdf", 4),)
    assert message.to_json()["attachments"] == raw["attachments"]
    for bad, field in (
        ({"name": "../../x"}, "name"),
        ({"id": ".."}, "id"),
        ({"size": "1"}, "size"),
    ):
        entry = {**raw["attachments"][0], **bad}  # type: ignore[dict-item]
        with pytest.raises(FieldError, match=rf"attachments\[0\]\.{field}: "):
            Message.from_json({**raw, "attachments": [entry]})


def test_the_command_line_export_includes_the_files_when_asked(
    data_dir: Path, tmp_path: Path
) -> None:
    from assistant.cli import main

    workspace = Workspace.open(data_dir, embed=False)
    try:
        cid = workspace.conversations.create().id
        image = tmp_path / "dot.png"
        image.write_bytes(PNG)
        ref = workspace.attachments.add(cid, image).ref()
        workspace.conversations.append(cid, "user", "A dot.", attachments=[ref])
    finally:
        workspace.close()
    for flags, data in (([], None), (["--attachments"], base64.b64encode(PNG).decode())):
        out = tmp_path / "out.json"
        assert main(["export", str(out), *flags]) == 0
        (entry,) = json.loads(out.read_text())["conversations"][0]["messages"][0]["attachments"]
        assert entry.get("data") == data and entry["name"] == "dot.png"
