"""The import preview's choice of which memories pinned in the export stay pinned.

A pinned memory is in every prompt, so an export must not put text there unasked: imported
memories arrive unpinned unless the user ticks them here (none is ticked at first). Only the
memories that will be imported are offered (the preview leaves out those already here).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from assistant.memory import MemoryItem
from assistant.ui.wording import shorten

MAX_LISTED = 20  # pinned memories offered one box each; the rest arrive unpinned
TEXT_CHARS = 90  # a memory's box shows its start


class PinnedChoice(QGroupBox):
    """A box per memory pinned in `memories`, those of the export that will be imported (no
    boxes if none is pinned)."""

    def __init__(self, memories: Sequence[MemoryItem], parent: QWidget | None = None) -> None:
        super().__init__("Pinned in the export: keep them pinned (in every prompt)?", parent)
        self.setObjectName("importPinned")
        pinned = [m for m in memories if m.pinned]
        self.boxes: list[tuple[QCheckBox, str]] = []
        layout = QVBoxLayout(self)
        for item in pinned[:MAX_LISTED]:
            check = QCheckBox(shorten(item.text, TEXT_CHARS), self)
            check.setObjectName("importPinnedCheck")
            check.setToolTip(item.text)
            layout.addWidget(check)
            self.boxes.append((check, item.id))
        if len(pinned) > MAX_LISTED:
            more = len(pinned) - MAX_LISTED
            layout.addWidget(QLabel(f"… and {more} more, which arrive unpinned", self))

    def kept(self) -> tuple[str, ...]:
        """The ids of the memories the user ticked to keep pinned."""
        return tuple(memory_id for check, memory_id in self.boxes if check.isChecked())
