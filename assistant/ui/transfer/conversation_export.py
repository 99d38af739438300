"""One conversation as a document: saved as Markdown, HTML or PDF, or copied as Markdown.

The file is built and written in the background (a long conversation takes a moment as PDF).
A saved document shows the images tools returned, within the width of a page; a copy names no
images (they would be megabytes of text on the clipboard).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QUrl
from PySide6.QtGui import (
    QGuiApplication,
    QImage,
    QPageSize,
    QPdfWriter,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QWidget

from assistant.fileio import atomic_write_bytes
from assistant.memory import ConversationStore
from assistant.transfer import conversation_markdown
from assistant.ui import file_places
from assistant.ui.chat.markdown import set_markdown
from assistant.ui.jobs import Progress, run_job
from assistant.ui.transfer.dialogs import get_save_file_name, show_error

FORMATS = {  # the file dialog's filter -> the suffix it writes
    "Markdown (*.md)": ".md",
    "Web page (*.html)": ".html",
    "PDF (*.pdf)": ".pdf",
}
PDF_DPI = 96  # the document's pixels as screen pixels, so that fonts keep their size
IMAGE_MAX_PX = 480  # the widest an image is shown: within an A4 page's text at PDF_DPI
KEEP_ANCHOR = QTextCursor.MoveMode.KeepAnchor


def file_name(title: str) -> str:
    """A file name from a conversation's title: letters, digits, spaces and dashes."""
    cleaned = re.sub(r"[^\w\- ]+", "", title, flags=re.UNICODE).strip()
    return re.sub(r"\s+", " ", cleaned)[:80] or "Conversation"


def document_bytes(markdown: str, suffix: str, title: str) -> bytes:
    """`markdown` as the bytes of a `.md`, `.html` or `.pdf` file."""
    if suffix == ".md":
        return markdown.encode()
    document = QTextDocument()
    set_markdown(document, markdown)
    _fit_images(document)
    document.setMetaInformation(QTextDocument.MetaInformation.DocumentTitle, title)
    if suffix == ".html":
        return document.toHtml().encode()
    return _pdf(document)


def _fit_images(document: QTextDocument) -> None:
    """Decode each image of the document (a `data:` URL) into its resources, and give it its
    size, at most IMAGE_MAX_PX wide (a larger one would run off the page). Decoded here, as a
    QImage: Qt would make a QPixmap, which only the GUI thread may (the file is made in the
    background)."""
    cursor = QTextCursor(document)
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            it += 1
            fmt = fragment.charFormat().toImageFormat()
            url = QUrl(fmt.name())
            if not fragment.charFormat().isImageFormat() or url.scheme() != "data":
                continue
            data = fmt.name().partition(",")[2]
            image = QImage.fromData(QByteArray.fromBase64(data.encode("ascii")))
            if image.isNull():
                continue
            document.addResource(QTextDocument.ResourceType.ImageResource, url, image)
            scale = min(1.0, IMAGE_MAX_PX / image.width())
            fmt.setWidth(image.width() * scale)
            fmt.setHeight(image.height() * scale)
            cursor.setPosition(fragment.position())
            cursor.setPosition(fragment.position() + fragment.length(), KEEP_ANCHOR)
            cursor.setCharFormat(fmt)
        block = block.next()


def _pdf(document: QTextDocument) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(PDF_DPI)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setTitle(document.metaInformation(QTextDocument.MetaInformation.DocumentTitle))
    document.print_(writer)
    buffer.close()
    return bytes(data.data())


def export_conversation(
    parent: QWidget,
    store: ConversationStore,
    conversation_id: str,
    on_saved: Callable[[str], None],
    tool_image: Callable[[str], Path | None],
) -> None:
    """Ask where, then write the conversation there in the format its name ends with;
    `on_saved(path)` once it is written. `tool_image(name)`: the file of an image a tool
    returned in the conversation, if it is there."""
    title = next((i.title for i in store.all() if i.id == conversation_id), "Conversation")
    name = get_save_file_name(
        parent,
        "Export this conversation",
        str(file_places.start_folder("export") / f"{file_name(title)}.md"),
        ";;".join(FORMATS),
    )
    if not name:
        return
    file_places.remember("export", name)
    path = Path(name)
    if path.suffix.lower() not in FORMATS.values():
        path = path.with_suffix(".md")

    def image(name: str) -> bytes | None:
        found = tool_image(name)
        try:
            return None if found is None else found.read_bytes()
        except OSError:  # gone meanwhile: the document does without it
            return None

    def write(_: Progress) -> str:
        markdown = conversation_markdown(store.load(conversation_id), image)
        atomic_write_bytes(path, document_bytes(markdown, path.suffix.lower(), title))
        return str(path)

    def failed(message: str) -> None:
        show_error(parent, "Export failed", f"The conversation could not be written.\n\n{message}")

    run_job(write, on_done=on_saved, on_error=failed)


def copy_conversation(store: ConversationStore, conversation_id: str) -> None:
    """Put the conversation on the clipboard as Markdown."""
    QGuiApplication.clipboard().setText(conversation_markdown(store.load(conversation_id)))
