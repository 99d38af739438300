"""Attachments through the real window: dropped, pasted and picked files become chips above the
input, go with the message through the chat session to the model (the fake server sees their
text and images), show under the sent message after a restart, and bad files are refused with
a clear line that loses nothing."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QImage
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QPushButton
from pytestqt.qtbot import QtBot

from assistant.ui.chat.attachment_bar import AttachmentChip
from assistant.ui.knowledge.opening import FilePreview, NoViewerBox
from assistant.ui.window.main_window import MainWindow
from tests.desktop import configure, shown_window
from tests.fake_openai import FakeOpenAI, Reply, message_text
from tests.files import make_pdf

pytestmark = pytest.mark.gui

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def window(qtbot: QtBot, data_dir: Path, fake_openai: FakeOpenAI) -> Iterator[MainWindow]:
    configure(data_dir, fake_openai)
    win = shown_window(qtbot, data_dir)
    yield win
    win.close()


def drop(win: MainWindow, *paths: Path) -> None:
    """Files dropped (or pasted) on the message box: Qt hands both to insertFromMimeData."""
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    assert win.input.canInsertFromMimeData(data)
    win.input.insertFromMimeData(data)


def chips(win: MainWindow) -> list[str]:
    return [c.text() for c in win.composer.attachments.findChildren(AttachmentChip)]


def last_user_message(fake_openai: FakeOpenAI) -> dict[str, object]:
    body = fake_openai.requests_to("/chat/completions")[-1].body
    message: dict[str, object] = next(m for m in reversed(body["messages"]) if m["role"] == "user")
    return message


def send_and_wait(qtbot: QtBot, win: MainWindow, text: str) -> None:
    win.input.setPlainText(text)
    qtbot.keyClick(win.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Copy as text" in win.chat.toPlainText(), timeout=15000)
    qtbot.waitUntil(win.send_button.isEnabled, timeout=10000)


def test_dropped_files_go_to_the_model_and_show_under_the_message_after_a_restart(
    qtbot: QtBot,
    window: MainWindow,
    fake_openai: FakeOpenAI,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = make_pdf(
        tmp_path / "report.pdf", ["Sales rose in May.", "The zeppelin hangar costs 9,000 euros."]
    )
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nCall <Ada> about the hangar.\n")
    drop(window, report, notes)
    assert [c.split(" · ")[0] for c in chips(window)] == ["▤ report.pdf", "▤ notes.md"]
    assert "2 pages" in chips(window)[0]
    fake_openai.enqueue(Reply.text("It costs 9,000 euros."))
    send_and_wait(qtbot, window, "What does the hangar cost?")

    sent = message_text(last_user_message(fake_openai))
    assert sent.startswith("What does the hangar cost?\n\n(Attached: report.pdf, notes.md)")
    assert '<data source="attached files">' in sent
    assert "[p. 2]\nThe zeppelin hangar costs 9,000 euros." in sent
    assert "Call &lt;Ada&gt; about the hangar." in sent  # quoted data: nothing can end the fence
    assert chips(window) == [] and window.composer.attachments.isHidden()
    shown = window.chat.toPlainText()
    assert "What does the hangar cost?\nAttached:  ▤ report.pdf · " in shown

    cid = window.session.conversation_id
    assert cid is not None
    user = window.workspace.conversations.load(cid).messages[0]
    assert [a.name for a in user.attachments] == ["report.pdf", "notes.md"]
    copy = window.workspace.attachments.path(cid, user.attachments[0])
    assert copy.read_bytes() == report.read_bytes()
    report.unlink()  # the copy is the conversation's own
    window.close()

    again = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: "hangar cost" in again.chat.toPlainText(), timeout=10000)
    text = again.chat.toPlainText()
    assert re.search(
        r"hangar cost\?\nAttached:  ▤ report\.pdf · \d+ kB · 2 pages    ▤ notes\.md · 38 bytes \n",
        text,
    )
    opened: list[QUrl] = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url) or True)
    )
    previews: list[FilePreview] = []
    monkeypatch.setattr(FilePreview, "show", lambda self: previews.append(self))  # noqa: PLW0108
    again.chat.anchorClicked.emit(QUrl(f"attached:{user.attachments[0].id}"))
    assert opened == [QUrl.fromLocalFile(str(copy))]  # a PDF: the system's viewer
    again.chat.anchorClicked.emit(QUrl(f"attached:{user.attachments[1].id}"))
    assert len(previews) == 1  # text: the in-app preview
    assert "Call <Ada>" in previews[0].text.toPlainText()
    again.close()


def test_a_picked_file_by_button_or_shortcut_and_a_pasted_image(
    qtbot: QtBot,
    window: MainWindow,
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = tmp_path / "tool.py"
    code.write_text("def answer():\n    return 42\n")
    data = tmp_path / "data.csv"
    data.write_text("a,b\n1,2\n")
    picked = iter([[str(code)], [str(data)]])
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: (next(picked), ""))
    )
    qtbot.mouseClick(window.composer.attach_button, Qt.MouseButton.LeftButton)
    window.input.setFocus()
    qtbot.keyClick(
        window,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert [c.split(" · ")[0] for c in chips(window)] == ["▤ tool.py", "▤ data.csv"]

    image = QImage()
    assert image.loadFromData(PNG)
    pasted = QMimeData()
    pasted.setImageData(image)
    window.input.insertFromMimeData(pasted)
    assert chips(window)[2].startswith("▤ Pasted image ")
    assert window.input.toPlainText() == ""

    fake_openai.enqueue(Reply.text("A dot."))
    send_and_wait(qtbot, window, "What are these?")
    content = last_user_message(fake_openai)["content"]
    assert isinstance(content, list)
    assert content[0]["type"] == "text" and "return 42" in content[0]["text"]
    assert content[1]["type"] == "image_url"
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_chip_is_removed_by_a_click_or_the_keyboard(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    files = []
    for name in ("a.txt", "b.txt", "c.txt"):
        files.append(tmp_path / name)
        files[-1].write_text(name)
    drop(window, *files)
    drop(window, files[0])  # already there: not twice
    assert len(chips(window)) == 3
    first = window.composer.attachments.findChildren(AttachmentChip)[0]
    qtbot.mouseClick(first, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(chips(window)) == 2)
    assert window.composer.attachments.files() == files[1:]
    second = window.composer.attachments.findChildren(AttachmentChip)[0]
    second.setFocus()
    qtbot.keyClick(second, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: len(chips(window)) == 1)
    last = window.composer.attachments.findChildren(AttachmentChip)[0]
    assert last.hasFocus()  # the keyboard stays on the chips
    qtbot.keyClick(last, Qt.Key.Key_Backspace)
    qtbot.waitUntil(window.composer.attachments.isHidden)
    assert window.input.hasFocus()


def test_bad_files_are_refused_with_a_clear_line_and_nothing_is_lost(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as f:
        f.truncate(25 * 2**20)
    locked = make_pdf(tmp_path / "locked.pdf", ["Secret."], password="pw")
    scan = make_pdf(tmp_path / "scan.pdf", ["", ""], text=False)
    binary = tmp_path / "data.txt"
    binary.write_bytes(b"\0\1\2" * 100)
    program = tmp_path / "tool.exe"
    program.write_bytes(b"MZ")
    good = tmp_path / "good.txt"
    good.write_text("Fine.")
    window.input.setPlainText("Keep these words")
    drop(window, huge, locked, scan, binary, program, good)
    problem = window.composer.attachments.problem
    assert problem.isVisible()
    for line in (
        "huge.pdf is 26.3 MB: attachments can be at most 20 MB.",
        "locked.pdf: password-protected: cannot be read.",
        "scan.pdf: no text layer (a scanned or image-only PDF?): Assistant cannot read it.",
        "data.txt: binary content, not text",
        "tool.exe: Assistant cannot read this kind of file",
    ):
        assert line in problem.text()
    assert [c.split(" · ")[0] for c in chips(window)] == ["▤ good.txt"]
    assert window.input.toPlainText() == "Keep these words"

    good.unlink()  # gone between attaching and sending: refused, nothing sent or cleared
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    assert problem.text().startswith("⚠ good.txt cannot be read:")
    assert window.input.toPlainText() == "Keep these words"
    assert len(chips(window)) == 1
    assert fake_openai.requests_to("/chat/completions") == []
    assert not window.session.busy


def test_an_image_for_a_model_without_vision_is_refused_with_a_line_naming_it(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.text_only = frozenset({"chat-model"})
    photo = tmp_path / "photo.png"
    photo.write_bytes(PNG)
    notes = tmp_path / "notes.md"
    notes.write_text("The mug is blue.\n")
    drop(window, photo, notes)
    assert len(chips(window)) == 2  # not known yet: the server is asked
    window.input.setPlainText("What colour is the mug?")
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "⚠ chat-model does not accept images" in window.chat.toPlainText())
    qtbot.waitUntil(window.send_button.isEnabled)
    shown = window.chat.toPlainText()
    assert "so photo.png could not be sent and this message was not answered" in shown
    assert "Retry" in shown and "image_url is only supported" not in shown
    assert "What colour is the mug?\nAttached:  ▤ photo.png · 70 bytes    ▤ notes.md" in shown
    assert len(fake_openai.requests_to("/chat/completions")) == 1
    assert window.status.connection_label.text() == "Connected"  # the server answered

    # Known now: another image is refused in the composer at once, a text file still goes.
    again = tmp_path / "again.png"
    again.write_bytes(PNG)
    drop(window, again, notes)
    problem = window.composer.attachments.problem
    assert problem.isVisible()
    assert problem.text() == (
        "⚠ again.png was not attached: chat-model does not accept images. First choose a "
        "model that sees images (the picker above the chat)."
    )
    assert [c.split(" · ")[0] for c in chips(window)] == ["▤ notes.md"]
    assert len(fake_openai.requests_to("/chat/completions")) == 1


def test_an_attached_image_is_held_back_once_the_model_is_known_not_to_take_images(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    from assistant.agent.capabilities import server_key

    photo = tmp_path / "photo.png"
    photo.write_bytes(PNG)
    drop(window, photo)
    window.input.setPlainText("Keep these words")
    key = (server_key(fake_openai.base_url), "chat-model")
    window.workspace.capabilities.learn(key, images=False)  # learned meanwhile (another chat)
    window.chat_pane.model_bar.shown_model_changed.emit()  # as when the model shown changes
    problem = window.composer.attachments.problem
    expected = (
        "⚠ photo.png: chat-model does not accept images. Remove the image, or choose a model "
        "that sees images (the picker above the chat)."
    )
    assert problem.isVisible() and problem.text() == expected
    window.workspace.capabilities.learn(key, images=True)  # as another model, chosen
    window.chat_pane.model_bar.shown_model_changed.emit()
    assert problem.isHidden()  # the line goes with the reason
    window.workspace.capabilities.learn(key, images=False)
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    assert problem.text() == expected  # refused at Send too: nothing sent or cleared
    assert window.input.toPlainText() == "Keep these words" and len(chips(window)) == 1
    assert fake_openai.requests_to("/chat/completions") == []
    assert not window.session.busy


def test_the_chips_of_an_imported_conversation_open_its_restored_files(
    qtbot: QtBot, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assistant.transfer import apply_import, load_import
    from assistant.workspace import Workspace
    from tests.test_attachment_import import exported

    out, files = exported(tmp_path)
    workspace = Workspace.open(data_dir, embed=False)
    try:
        apply_import(load_import(out), workspace, "copy", attachments=workspace.attachments)
    finally:
        workspace.close()
    win = shown_window(qtbot, data_dir)
    qtbot.waitUntil(lambda: "And now?" in win.chat.toPlainText())
    assert "And now?\nAttached:  ▤ report.pdf · " in win.chat.toPlainText()
    cid = win.session.conversation_id
    assert cid is not None
    refs = win.workspace.conversations.load(cid).messages[-1].attachments
    opened: list[QUrl] = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url) or True)
    )
    previews: list[FilePreview] = []
    monkeypatch.setattr(FilePreview, "show", lambda self: previews.append(self))  # noqa: PLW0108
    for ref in refs:
        win.chat.anchorClicked.emit(QUrl(f"attached:{ref.id}"))
    assert [Path(url.toLocalFile()).read_bytes() for url in opened] == [
        files["report.pdf"],
        files["dot.png"],
    ]
    assert len(previews) == 1 and "Call Ada about the hangar." in previews[0].text.toPlainText()
    win.close()


def test_a_refused_file_is_said_also_when_nothing_else_is_attached(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot really a PDF")
    bar = window.composer.attachments
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: ([str(broken)], ""))
    )
    window.input.setFocus()
    qtbot.keyClick(
        window,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert chips(window) == []
    assert bar.isVisible() and bar.problem.isVisible()
    assert bar.problem.text() == "⚠ broken.pdf: damaged or not a PDF: cannot be read."

    bar.say("")
    assert bar.isHidden()
    drop(window, broken)  # dropped or pasted: the same line
    assert bar.isVisible() and bar.problem.isVisible()
    assert "broken.pdf: damaged or not a PDF" in bar.problem.text()


@pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")  # a dialog shown
def test_a_file_no_app_can_open_is_said_with_its_path_to_show_or_copy(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = make_pdf(tmp_path / "report.pdf", ["Sales rose in May."])
    notes = tmp_path / "notes.txt"
    notes.write_text("Meeting notes\n")
    drop(window, report, notes)
    send_and_wait(qtbot, window, "Read these")
    cid = window.session.conversation_id
    assert cid is not None
    pdf, text = window.workspace.conversations.load(cid).messages[0].attachments
    copy = window.workspace.attachments.path(cid, pdf)
    asked: list[QUrl] = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", staticmethod(lambda url: asked.append(url) and False)
    )

    window.chat.anchorClicked.emit(QUrl(f"attached:{pdf.id}"))  # the PDF's chip
    (box,) = [b for b in window.findChildren(NoViewerBox) if b.isVisible()]
    assert asked == [QUrl.fromLocalFile(str(copy))]
    assert box.message.text() == "No app to open report.pdf was found on this computer."
    assert box.findChild(QLabel, "noViewerPath").text() == str(copy)
    qtbot.mouseClick(box.copy_button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == str(copy)
    qtbot.mouseClick(box.folder_button, Qt.MouseButton.LeftButton)
    assert asked[-1] == QUrl.fromLocalFile(str(copy.parent))
    assert "No file manager was found either" in box.hint.text()  # the box stays, and says so
    assert not box.folder_button.isEnabled()
    box.close()

    previews: list[FilePreview] = []
    monkeypatch.setattr(FilePreview, "show", lambda self: previews.append(self))  # noqa: PLW0108
    window.chat.anchorClicked.emit(QUrl(f"attached:{text.id}"))
    (preview,) = previews
    viewer = next(b for b in preview.findChildren(QPushButton) if "System's Viewer" in b.text())
    qtbot.mouseClick(viewer, Qt.MouseButton.LeftButton)
    (box,) = preview.findChildren(NoViewerBox)
    assert box.isVisible() and box.message.text().startswith("No app to open notes.txt ")
    preview.deleteLater()


def test_editing_a_message_shows_its_files_as_chips_and_sends_only_those_left(
    qtbot: QtBot, window: MainWindow, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    alpha = tmp_path / "alpha.txt"
    alpha.write_text("Alpha says the gate code is 1234.")
    beta = tmp_path / "beta.md"
    beta.write_text("Beta says the boat is blue.")
    drop(window, alpha, beta)
    fake_openai.enqueue(Reply.text("First answer."))
    send_and_wait(qtbot, window, "What do they say?")
    cid = window.session.conversation_id
    assert cid is not None
    store = window.workspace.conversations

    def edit_and_send(text: str, reply: str, remove: str | None = None) -> str:
        """Edit the branch's user message, remove the chip named `remove`; what was sent."""
        message = store.load(cid).branch()[0]
        window.chat.edit_requested.emit(message.id, message.content)
        assert [c.split(" · ")[0] for c in chips(window)] == ["▤ alpha.txt", "▤ beta.md"]
        assert window.composer.attachments.files() == []  # their copies: nothing new
        if remove is not None:
            chip = next(
                c
                for c in window.composer.attachments.findChildren(AttachmentChip)
                if c.attachment.name == remove
            )
            qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: len(chips(window)) == 1)
        fake_openai.enqueue(Reply.text(reply))
        window.input.setPlainText(text)
        qtbot.keyClick(window.input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: reply in window.chat.toPlainText(), timeout=15000)
        qtbot.waitUntil(window.send_button.isEnabled, timeout=10000)
        qtbot.waitUntil(lambda: chips(window) == [])
        assert window.composer.attachments.isHidden()
        return message_text(last_user_message(fake_openai))

    sent = edit_and_send("What do they say, again?", "Both are still there.")
    assert sent.startswith("What do they say, again?\n\n(Attached: alpha.txt, beta.md)")
    assert "gate code is 1234" in sent and "boat is blue" in sent

    # the first message again (not the edited one, whose chips these are too): remove alpha
    first = store.load(cid).messages[0]
    window.chat.edit_requested.emit(first.id, first.content)
    window.composer.end_edit()  # Cancel edit: the chips go with it
    qtbot.waitUntil(lambda: chips(window) == [])
    assert window.composer.attachments.isHidden()
    sent = edit_and_send("What does beta say?", "Beta says blue.", remove="alpha.txt")
    assert sent.startswith("What does beta say?\n\n(Attached: beta.md)")
    assert "boat is blue" in sent and "1234" not in sent and "alpha" not in sent
    newest = store.load(cid).branch()[0]
    assert newest.content == "What does beta say?"
    assert [a.name for a in newest.attachments] == ["beta.md"]
    shown = window.chat.toPlainText()
    assert "What does beta say?\nAttached:  ▤ beta.md · " in shown
    assert "alpha.txt" not in shown


def test_chips_that_do_not_fit_one_row_wrap_and_keep_their_names_and_x(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    window.resize(1024, 700)  # a 1024-px screen, maximized
    names = ["image 2026-11-29 at 14.07.811.png", "notes from the meeting.txt", "report.pdf"]
    (tmp_path / names[0]).write_bytes(PNG)
    (tmp_path / names[1]).write_text("Minutes\n" * 10)
    make_pdf(tmp_path / names[2], ["One", "Two"])
    drop(window, *(tmp_path / name for name in names))
    bar = window.composer.attachments
    shown = bar.findChildren(AttachmentChip)
    assert len(shown) == 3
    assert sum(chip.sizeHint().width() for chip in shown) > 478  # more than the bar's width
    # The conversation list and the memory pane take the rest of the width.
    qtbot.waitUntil(lambda: bar.width() < 500)
    qtbot.waitUntil(lambda: all(bar.rect().contains(chip.geometry()) for chip in shown))
    assert len({chip.y() for chip in shown}) > 1  # a second row
    for chip in shown:
        assert chip.text().endswith("✕")
        assert chip.width() == chip.sizeHint().width()  # not squeezed: its name and ✕ whole
