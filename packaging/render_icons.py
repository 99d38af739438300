"""Render the application icon from its SVG source into the PNG, .ico and .icns files.

Run from the repository root after changing `resources/icons/assistant.svg`, and commit the output:

    .venv/bin/python packaging/render_icons.py

Only PySide6 is needed: the .ico and .icns containers hold PNG images and are written here by
hand (both formats accept PNG entries: Windows since Vista, macOS since 10.7).
"""

from __future__ import annotations

import os
import struct
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
SOURCE = ICONS / "assistant.svg"
DETAIL_MIN_SIZE = 32  # smaller renderings leave out the elements of class "detail"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# (type code, pixel size) of the PNG-based icns entries; the @2x ones share pixels with a 1x size.
ICNS_ENTRIES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"ic11", 32),
    (b"icp6", 64),
    (b"ic12", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic13", 256),
    (b"ic09", 512),
    (b"ic14", 512),
    (b"ic10", 1024),
)


def svg_renderer(*, details: bool) -> QSvgRenderer:
    """A renderer of the source SVG, with or without its small details."""
    ET.register_namespace("", "http://www.w3.org/2000/svg")
    tree = ET.parse(SOURCE)
    if not details:
        for parent in tree.iter():
            for child in list(parent):
                if "detail" in child.get("class", "").split():
                    parent.remove(child)
    renderer = QSvgRenderer(QByteArray(ET.tostring(tree.getroot())))
    if not renderer.isValid():
        raise RuntimeError(f"cannot read {SOURCE}")
    return renderer


def render(renderer: QSvgRenderer, size: int) -> bytes:
    """The icon at `size` x `size` pixels as PNG bytes."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise RuntimeError(f"could not encode the {size} px icon")
    buffer.close()
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico holding one PNG entry per size (a 256 px entry is written as size 0)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, images = b"", b""
    for size in sizes:
        data = pngs[size]
        side = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset)
        images += data
        offset += len(data)
    return header + entries + images


def icns(pngs: dict[int, bytes]) -> bytes:
    """A macOS .icns holding PNG entries from 16 to 1024 px (16@2x ... 512@2x included)."""
    body = b"".join(
        code + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for code, size in ICNS_ENTRIES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    """Write the PNG sizes, assistant.ico and assistant.icns next to the SVG."""
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    full, simple = svg_renderer(details=True), svg_renderer(details=False)
    wanted = set(PNG_SIZES) | set(ICO_SIZES) | {size for _, size in ICNS_ENTRIES}
    pngs = {
        size: render(full if size >= DETAIL_MIN_SIZE else simple, size) for size in sorted(wanted)
    }
    for size in PNG_SIZES:
        (ICONS / f"assistant-{size}.png").write_bytes(pngs[size])
    (ICONS / "assistant.ico").write_bytes(ico({size: pngs[size] for size in ICO_SIZES}))
    (ICONS / "assistant.icns").write_bytes(icns(pngs))
    print(f"wrote {len(PNG_SIZES)} PNGs, assistant.ico and assistant.icns to {ICONS}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
