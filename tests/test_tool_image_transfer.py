"""Images an MCP tool returned, in exports: an export with the files carries them (`images` on
the tool result), importing restores them where the chat finds them (a copy under a new id gets
its own), malformed ones are named and change nothing; the HTML and PDF of a conversation show
them, within a page's width."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pypdfium2
import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QImage, QTextDocument
from pytestqt.qtbot import QtBot

from assistant.agent.tool_images import IMAGES_LINE, ToolImage
from assistant.errors import InvalidImportError
from assistant.sizes import MB
from assistant.transfer import (
    apply_import,
    conversation_markdown,
    export_data,
    load_import,
    write_export,
)
from assistant.ui.transfer import conversation_export
from assistant.ui.transfer.conversation_export import IMAGE_MAX_PX, document_bytes
from assistant.workspace import Workspace
from tests.desktop import shown_window
from tests.test_transfer import offline_settings, snapshot

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "shop__product_photo", "arguments": '{"product": "mug"}'},
}


def png(width: int, height: int) -> bytes:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(0x3366CC)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def with_photo(workspace: Workspace, photo: bytes) -> tuple[str, str]:
    """A conversation whose tool returned `photo`, kept as the MCP tools keep one (the file in
    the conversation, its name on the result's last line); its id and the image's name."""
    store = workspace.conversations
    cid = store.create("The mug").id
    store.append(cid, "user", "Show me the mug")
    store.append(cid, "assistant", "", tool_calls=[CALL])
    name = workspace.attachments.save_tool_image(
        cid, ToolImage("image/png", base64.b64encode(photo).decode())
    )
    store.append(cid, "tool", f"Photo of mug\n{IMAGES_LINE}{name}", tool_call_id="c1")
    store.append(cid, "assistant", "Here it is.")
    return cid, name


def exported(tmp_path: Path, photo: bytes) -> tuple[Path, str]:
    source = tmp_path / "source"
    offline_settings(source)
    workspace = Workspace.open(source, embed=False)
    try:
        _cid, name = with_photo(workspace, photo)
        out = tmp_path / "export.json"
        write_export(out, export_data(workspace, attachments=workspace.attachments))
    finally:
        workspace.close()
    return out, name


def test_a_tool_image_goes_with_the_export_and_comes_back_on_import(
    qapp: object, tmp_path: Path
) -> None:
    photo = png(8, 6)
    out, name = exported(tmp_path, photo)
    doc = json.loads(out.read_text())
    tool = next(m for m in doc["conversations"][0]["messages"] if m["role"] == "tool")
    assert tool["images"] == [{"name": name, "data": base64.b64encode(photo).decode()}]
    target = tmp_path / "target"
    offline_settings(target)
    workspace = Workspace.open(target, embed=False)
    try:
        plan = load_import(out)
        first = apply_import(plan, workspace, "skip", attachments=workspace.attachments)
        again = apply_import(plan, workspace, "copy", attachments=workspace.attachments)
        assert "1 image from tools restored" in first.summary()
        assert again.images_restored == 1
        ids = [c.id for c in workspace.conversations.all()]
        assert len(ids) == 2
        for cid in ids:  # the original's id and the copy's: each has its own
            kept = workspace.attachments.tool_image(cid, name)
            assert kept is not None and kept.read_bytes() == photo
        # and the document of an imported conversation shows it
        conversation = workspace.conversations.load(ids[0])
        html = document_bytes(
            conversation_markdown(conversation, lambda n: photo if n == name else None),
            ".html",
            "The mug",
        ).decode()
        assert f'src="data:image/png;base64,{base64.b64encode(photo).decode()}"' in html
    finally:
        workspace.close()


def _tool(doc: dict[str, Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = doc["conversations"][0]["messages"]
    return next(m for m in messages if m["role"] == "tool")


MUG = "in message 3 in conversation 1 (“The mug”) is wrong: it"
BAD: list[tuple[str, Any, str]] = [
    ("not a list", {"images": "x"}, "“images” of message 3 in conversation 1 (“The mug”) is wrong"),
    ("a path", {"name": "../../evil.png"}, f"“name” of image 1 {MUG} must be a kept image's"),
    ("other bytes", {"data": "b3RoZXI="}, f"“data” of image 1 {MUG} holds other bytes than"),
    ("not base64", {"data": "not*base64!"}, f"“data” of image 1 {MUG} is not valid base64"),
    ("too large", {"data": "QUFB" * 7 * MB + "QQ=="}, f"“data” of image 1 {MUG} holds more than"),
    ("not a tool's", {"on_user": True}, "message 1 in conversation 1 (“The mug”) is wrong: it is"),
]


@pytest.mark.parametrize(("case", "change", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_malformed_tool_image_is_named_and_changes_nothing(
    qapp: object, tmp_path: Path, case: str, change: dict[str, Any], message: str
) -> None:
    out, _name = exported(tmp_path, png(2, 2))
    doc = json.loads(out.read_text())
    tool = _tool(doc)
    if "images" in change:
        tool["images"] = change["images"]
    elif "on_user" in change:
        doc["conversations"][0]["messages"][0]["images"] = tool.pop("images")
    else:
        tool["images"][0].update(change)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    target = tmp_path / "target"
    offline_settings(target)
    before = snapshot(target)
    with pytest.raises(InvalidImportError) as raised:
        load_import(bad)
    assert message in str(raised.value)
    assert case != "too large" or "the limit of 21 MB for a file" in str(raised.value)
    assert "(at conversations[0].messages[" in str(raised.value)
    assert snapshot(target) == before


def test_the_saved_html_and_pdf_show_the_image_within_the_page(
    qtbot: QtBot, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the window: the file is made in the background (no QPixmap there)."""
    photo = png(1200, 600)
    workspace = Workspace.open(data_dir, embed=False)
    try:
        cid, name = with_photo(workspace, photo)
    finally:
        workspace.close()
    window = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: window.session.conversation_id == cid, timeout=10000)
    for suffix in (".html", ".pdf"):
        target = tmp_path / f"mug{suffix}"
        monkeypatch.setattr(conversation_export, "get_save_file_name", lambda *_a, t=target: str(t))
        window.menu.export_conversation.trigger()
        qtbot.waitUntil(target.exists, timeout=15000)
    html = (tmp_path / "mug.html").read_text()
    assert f'width="{IMAGE_MAX_PX}" height="{IMAGE_MAX_PX // 2}"' in html
    read = QTextDocument()
    read.setHtml(html)
    assert "Photo of mug" in read.toPlainText()
    pdf = pypdfium2.PdfDocument(tmp_path / "mug.pdf")
    images = [o for o in pdf[0].get_objects() if o.type == pypdfium2.raw.FPDF_PAGEOBJ_IMAGE]
    assert len(images) == 1
    left, _bottom, right, _top = images[0].get_bounds()
    assert 0 < right - left <= pdf[0].get_width()  # within the page
    assert hashlib.sha1(photo).hexdigest() in name
    window.close()
