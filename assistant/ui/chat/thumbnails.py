"""Thumbnails of the images a tool returned, in its line in the chat.

While the reply is written they come from the tool's result itself; once saved, from the
copies the conversation keeps (named in the result's last line, see `saved_names`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextCursor, QTextDocument, QTextImageFormat

from assistant.sizes import MB
from assistant.ui.worker import ToolImage, saved_names

log = logging.getLogger(__name__)

ImageLookup = Callable[[str], Path | None]  # a kept image's file name -> its file, if there
THUMBNAIL_PX = 160  # the longer side of a thumbnail, in pixels
MAX_FILE_BYTES = 8 * MB  # a larger file is not read on the GUI thread


def thumbnails(
    result: str | None, images: Sequence[ToolImage], lookup: ImageLookup | None
) -> list[tuple[str, QImage]]:
    """(key, image) of each image to show: those given, else those the result kept."""
    found: list[tuple[str, QImage]] = []
    if images:
        for image in images:
            try:
                data = base64.b64decode(image.data, validate=True)
            except (binascii.Error, ValueError):
                continue
            found.append(_decoded(hashlib.sha1(data).hexdigest(), data))
    elif result is not None and lookup is not None:
        for name in saved_names(result):
            path = lookup(name)
            if path is not None and path.stat().st_size <= MAX_FILE_BYTES:
                found.append(_decoded(name, path.read_bytes()))
    return [(key, image) for key, image in found if not image.isNull()]


def insert_thumbnails(
    cursor: QTextCursor, document: QTextDocument, images: Sequence[tuple[str, QImage]]
) -> None:
    """Insert the images at `cursor` (on a line of their own), each scaled to a thumbnail."""
    if not images:
        return
    cursor.insertText("\u2028")  # a line break inside the block: the line folds as one
    for index, (key, image) in enumerate(images):
        url = QUrl(f"toolimage:{key}")
        document.addResource(QTextDocument.ResourceType.ImageResource, url, image)
        scale = min(1.0, THUMBNAIL_PX / max(image.width(), image.height(), 1))
        fmt = QTextImageFormat()
        fmt.setName(url.toString())
        fmt.setWidth(max(1.0, image.width() * scale))
        fmt.setHeight(max(1.0, image.height() * scale))
        fmt.setToolTip(f"An image from the tool ({image.width()} x {image.height()} pixels)")
        if index:
            cursor.insertText(" ")
        cursor.insertImage(fmt)


def _decoded(key: str, data: bytes) -> tuple[str, QImage]:
    image = QImage.fromData(data)
    if image.isNull():
        log.info("A tool's image could not be decoded (%d bytes)", len(data))
    return key, image
