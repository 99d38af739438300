"""An export with the attached files, imported: the files' bytes come back under the
conversation's attachments (a copy under a new id gets its own), through the library and the
command line; a file's `data` that is malformed is named and changes nothing."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.errors import InvalidImportError, StorageError
from assistant.memory import AttachedFile
from assistant.sizes import MB
from assistant.transfer import apply_import, export_data, load_import, write_export
from assistant.workspace import Workspace
from tests.files import make_pdf
from tests.test_transfer import offline_settings, snapshot

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def originals(folder: Path) -> list[Path]:
    """A PDF made by fpdf2, an image and a text file."""
    folder.mkdir(parents=True, exist_ok=True)
    pdf = make_pdf(folder / "report.pdf", ["Sales rose in May.", "The hangar costs 9,000."])
    png = folder / "dot.png"
    png.write_bytes(PNG)
    notes = folder / "notes.md"
    notes.write_text("# Notes\n\nCall Ada about the hangar. Ünïcode.\n", encoding="utf-8")
    return [pdf, png, notes]


def exported(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """An export with files of one conversation whose message, and its edited version (which
    carries the same files), have the three files attached."""
    source = tmp_path / "source"
    offline_settings(source)
    files = originals(tmp_path / "originals")
    workspace = Workspace.open(source, embed=False)
    try:
        store = workspace.conversations
        cid = store.create("With files").id
        refs = [workspace.attachments.add(cid, p).ref() for p in files]
        first = store.append(cid, "user", "What do these say?", attachments=refs)
        store.append(cid, "assistant", "Sales rose.")
        store.set_leaf(cid, first.parent_id)
        store.append(cid, "user", "And now?", attachments=refs)  # an edit carries the files
        out = tmp_path / "export.json"
        write_export(out, export_data(workspace, attachments=workspace.attachments))
    finally:
        workspace.close()
    return out, {p.name: p.read_bytes() for p in files}


def restored(workspace: Workspace, cid: str) -> dict[str, bytes]:
    """The bytes of each file the conversation's messages carry, read where the chips open."""
    found: dict[str, bytes] = {}
    for message in workspace.conversations.load(cid).messages:
        for ref in message.attachments:
            found[ref.name] = workspace.attachments.resolve(cid, ref).path.read_bytes()
    return found


def test_the_files_of_an_export_come_back_and_a_copy_gets_its_own(tmp_path: Path) -> None:
    out, files = exported(tmp_path)
    target = tmp_path / "target"
    offline_settings(target)
    workspace = Workspace.open(target, embed=False)
    try:
        plan = load_import(out)
        result = apply_import(plan, workspace, "copy", attachments=workspace.attachments)
        assert result.conversations_imported == 1 and result.files_restored == 3
        assert result.summary().endswith("; 3 attached files restored")
        (cid,) = [c.id for c in workspace.conversations.all()]
        assert restored(workspace, cid) == files
        assert {a.name for a in workspace.attachments.of(cid)} == set(files)

        again = apply_import(load_import(out), workspace, "copy", attachments=workspace.attachments)
        assert again.conversations_copied == 1
        (copied,) = [c.id for c in workspace.conversations.all() if c.id != cid]
        assert restored(workspace, copied) == files
        workspace.conversations.delete(cid)  # its files go; the copy keeps its own
        assert not (target / "attachments" / cid).exists()
        assert restored(workspace, copied) == files
    finally:
        workspace.close()


def test_an_export_without_the_files_still_names_them(tmp_path: Path) -> None:
    out, _files = exported(tmp_path)
    doc = json.loads(out.read_text())
    for message in doc["conversations"][0]["messages"]:
        for entry in message.get("attachments", ()):
            del entry["data"]
    out.write_text(json.dumps(doc))
    target = tmp_path / "target"
    offline_settings(target)
    workspace = Workspace.open(target, embed=False)
    try:
        apply_import(load_import(out), workspace, "copy", attachments=workspace.attachments)
        (cid,) = [c.id for c in workspace.conversations.all()]
        names = [a.name for a in workspace.conversations.load(cid).messages[0].attachments]
        assert names == ["report.pdf", "dot.png", "notes.md"]
        assert not (target / "attachments").exists()
    finally:
        workspace.close()


def _set(doc: dict[str, Any], **changes: Any) -> None:
    doc["conversations"][0]["messages"][0]["attachments"][2].update(changes)


BAD: list[tuple[str, Any, str]] = [
    ("not base64", {"data": "not*base64!"}, "data: it is not valid base64"),
    ("cut padding", {"data": "QUJD" + "RA"}, "data: it is not valid base64"),
    ("not a string", {"data": 12}, "data: it must be the file's bytes in base64"),
    ("size", {"size": 3}, "data: it holds 47 bytes, but its size says 3"),
    ("over the limit", {"size": 21 * 2**20}, "size: 22020096 bytes is over"),
    ("a byte over", {"size": 21 * MB + 1}, "size: 21000001 bytes is over the limit of 21 MB"),
    ("too much data", {"data": "QUFB" * (7 * 2**20)}, "data: it holds more than"),
    ("a path in the name", {"name": "../../evil.md"}, "name: it must be a plain"),
    ("a path in the id", {"id": ".."}, "id: it must be a plain file name"),
    ("a backslash", {"name": "..\\evil.md"}, "name: it must be a plain file name"),
]


@pytest.mark.parametrize(("case", "change", "message"), BAD, ids=[b[0] for b in BAD])
def test_malformed_file_data_is_named_and_changes_nothing(
    tmp_path: Path, case: str, change: dict[str, Any], message: str
) -> None:
    out, _files = exported(tmp_path)
    doc = json.loads(out.read_text())
    _set(doc, **change)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    target = tmp_path / "target"
    offline_settings(target)
    before = snapshot(target)
    with pytest.raises(InvalidImportError) as raised:
        load_import(bad)
    field, problem = message.split(": ", 1)
    said = str(raised.value)
    assert said.startswith(
        f"bad.json can't be imported: the “{field}” of attached file 3 in message 1 in "
        f"conversation 1 (“With files”) is wrong: {problem}"
    )
    assert f"(at conversations[0].messages[0].attachments[2].{field})" in said
    assert main(["--data-dir", str(target), "import", str(bad)]) == 1
    assert snapshot(target) == before


def test_the_same_file_with_other_bytes_in_an_edited_message_is_refused(tmp_path: Path) -> None:
    out, _files = exported(tmp_path)
    doc = json.loads(out.read_text())
    edited = doc["conversations"][0]["messages"][2]
    edited["attachments"][2]["data"] = base64.b64encode(b"x" * 47).decode()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(
        InvalidImportError,
        match=r"it differs from the same file's in .*messages\[2\]\.attachments\[2\]\.data",
    ):
        load_import(bad)


def test_a_disk_that_refuses_a_file_takes_the_conversation_out_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _files = exported(tmp_path)
    target = tmp_path / "target"
    offline_settings(target)
    workspace = Workspace.open(target, embed=False)
    try:

        def full(_self: object, _cid: str, _ref: AttachedFile, _data: bytes) -> None:
            raise OSError(28, "No space left on device", "notes.md")

        monkeypatch.setattr(type(workspace.attachments), "restore", full)
        with pytest.raises(
            StorageError,
            match=r"write report\.pdf, attached in the conversation 'With files': the disk is full",
        ):
            apply_import(load_import(out), workspace, "copy", attachments=workspace.attachments)
        assert list(workspace.conversations.all()) == []
        assert not (target / "attachments").exists() or not any((target / "attachments").iterdir())
    finally:
        workspace.close()


def test_the_command_line_round_trip_restores_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source"
    offline_settings(source)
    files = originals(tmp_path / "originals")
    workspace = Workspace.open(source, embed=False)
    try:
        cid = workspace.conversations.create("Files").id
        refs = [workspace.attachments.add(cid, p).ref() for p in files]
        workspace.conversations.append(cid, "user", "Read these.", attachments=refs)
    finally:
        workspace.close()
    out = tmp_path / "out.json"
    assert main(["--data-dir", str(source), "export", str(out), "--attachments"]) == 0
    fresh = tmp_path / "fresh"
    offline_settings(fresh)
    assert main(["--data-dir", str(fresh), "import", str(out)]) == 0
    assert "3 attached files restored" in capsys.readouterr().out
    workspace = Workspace.open(fresh, embed=False)
    try:
        assert restored(workspace, cid) == {p.name: p.read_bytes() for p in files}
    finally:
        workspace.close()
    # Imported again as a copy: its own files, the first import's untouched.
    assert main(["--data-dir", str(fresh), "import", str(out), "--on-conflict", "copy"]) == 0
    workspace = Workspace.open(fresh, embed=False)
    try:
        ids = [c.id for c in workspace.conversations.all()]
        assert len(ids) == 2
        for each in ids:
            assert restored(workspace, each) == {p.name: p.read_bytes() for p in files}
    finally:
        workspace.close()
