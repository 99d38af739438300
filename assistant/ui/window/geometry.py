"""Window sizes that fit the screen: the first-run size and a restored geometry, clamped."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize

PREFERRED = QSize(1280, 800)
SCREEN_SHARE = 0.9  # of the available area, at most, on a first run


def first_run(available: QRect) -> QRect:
    """The preferred size, or 90 % of the available area if smaller, centred in it."""
    width = min(PREFERRED.width(), int(available.width() * SCREEN_SHARE))
    height = min(PREFERRED.height(), int(available.height() * SCREEN_SHARE))
    rect = QRect(0, 0, width, height)
    rect.moveCenter(available.center())
    return rect


def clamp(frame: QRect, available: QRect) -> QRect:
    """`frame` made no larger than `available` and moved inside it."""
    width = min(frame.width(), available.width())
    height = min(frame.height(), available.height())
    left = max(available.left(), min(frame.left(), available.right() - width + 1))
    top = max(available.top(), min(frame.top(), available.bottom() - height + 1))
    return QRect(left, top, width, height)
