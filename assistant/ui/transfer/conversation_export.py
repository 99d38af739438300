"""One conversation as a document: saved as Markdown, HTML or PDF, or copied as Markdown.

The file is built and written in the background (a long conversation takes a moment as PDF).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QGuiApplication, QPageSize, QPdfWriter, QTextDocument
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
    document.setMetaInformation(QTextDocument.MetaInformation.DocumentTitle, title)
    if suffix == ".html":
        return document.toHtml().encode()
    return _pdf(document)


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
) -> None:
    """Ask where, then write the conversation there in the format its name ends with;
    `on_saved(path)` once it is written."""
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

    def write(_: Progress) -> str:
        markdown = conversation_markdown(store.load(conversation_id))
        atomic_write_bytes(path, document_bytes(markdown, path.suffix.lower(), title))
        return str(path)

    def failed(message: str) -> None:
        show_error(parent, "Export failed", f"The conversation could not be written.\n\n{message}")

    run_job(write, on_done=on_saved, on_error=failed)


def copy_conversation(store: ConversationStore, conversation_id: str) -> None:
    """Put the conversation on the clipboard as Markdown."""
    QGuiApplication.clipboard().setText(conversation_markdown(store.load(conversation_id)))
