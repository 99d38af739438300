"""Keeping a window on the screen: its first-run size, and all of it visible once framed."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from assistant.ui.window import geometry


class Placement:
    """Sizes `window` for a first run and fits it to the screen once the window manager has
    framed it (on X11 the frame comes after the window is shown, and moves it)."""

    def __init__(self, window: QWidget, minimum: QSize) -> None:
        self._window = window
        self._minimum = minimum
        self._placed = False

    def fit(self, available: QRect | None = None) -> None:
        """At most 90 % of the screen's free area, centred."""
        self._window.setGeometry(geometry.first_run(available or self._available()))

    def keep_on_screen(self, available: QRect | None = None) -> None:
        """Shrink and move the window so that all of it, frame included, is on the screen."""
        window = self._window
        frame, inner = window.frameGeometry(), window.geometry()
        extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
        fitted = geometry.clamp(frame, available or self._available())
        window.resize(
            max(self._minimum.width(), fitted.width() - extra_w),
            max(self._minimum.height(), fitted.height() - extra_h),
        )
        window.move(fitted.topLeft())

    def settle(self) -> None:
        """Shown or moved: fit the window once, after the window manager framed it."""
        window = self._window
        if self._placed or not window.isVisible():
            return
        self.keep_on_screen()
        framed = window.frameGeometry() != window.geometry()
        self._placed = framed or window.windowHandle() is None or _no_frames()

    def _available(self) -> QRect:
        return self._window.screen().availableGeometry()


def _no_frames() -> bool:
    """Whether windows get no frame here (off-screen, or a platform without decorations)."""
    return QGuiApplication.platformName() in ("offscreen", "minimal", "minimalegl")
