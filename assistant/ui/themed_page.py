"""A read-only rich-text page whose colours come from the palette, drawn again on a new theme."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QTextBrowser, QWidget

Render = Callable[[QPalette], str]  # the page's HTML for a palette


class ThemedPage(QTextBrowser):
    """A frameless page of HTML made by a `Render`; a change of palette renders it again, so
    text drawn in the old theme's colours never stays on the new theme's background."""

    def __init__(self, parent: QWidget | None = None, margin: int = 14) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setOpenLinks(False)
        self.document().setDocumentMargin(margin)
        self._render: Render | None = None

    def show_page(self, render: Render) -> None:
        """Show what `render` makes of the palette, now and after each change of theme."""
        self._render = render
        self.setHtml(render(self.palette()))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        """Render the page again in the new palette's colours, where it was scrolled to."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._render is not None:
            bar = self.verticalScrollBar()
            keep = bar.value()
            self.setHtml(self._render(self.palette()))
            bar.setValue(keep)
