"""The status bar: the model, the connection, memory, background work and memory upkeep."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

from assistant.settings import PROVIDERS
from assistant.ui.wording import count, number

if TYPE_CHECKING:
    from assistant.knowledge import KnowledgeEvent
    from assistant.workspace import Workspace

ESTIMATE_AFTER = 5.0  # seconds of work before a time left is shown (the rate settles first)


def time_left(seconds: float) -> str:
    """'about 40 s left', 'about 12 min left', 'about 2 h 5 min left'."""
    if seconds < 60:
        return f"about {max(5, round(seconds / 5) * 5)} s left"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60} min left"


NOTICE_MS = 15000  # how long a notice stays
MODEL_WIDTH = 260  # a long model path is cut in the middle, so messages keep their room


class ElidedLabel(QLabel):
    """A label that shows a long text cut in the middle ("/models/…/q4.gguf"), whole on hover."""

    def __init__(self, parent: QWidget | None = None, width: int = MODEL_WIDTH) -> None:
        super().__init__(parent)
        self._width = width
        self._full = ""

    def full_text(self) -> str:
        """The text as set, before cutting."""
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        """Show `text`, cut to the label's width; the tooltip has it whole when it was cut."""
        self._full = text
        shown = self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, self._width)
        super().setText(shown)
        self.setToolTip(text if shown != text else "")
        self.setAccessibleDescription(text)


class StatusBar(QStatusBar):
    """Permanent labels on the right; transient messages on the left."""

    def __init__(
        self, parent: QWidget | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(parent)
        self._clock = clock
        self._started: tuple[str, float, int] | None = None  # what, when, done then
        self.setObjectName("statusBar")
        self.setAccessibleName("Status")
        self.upkeep_label = QLabel(self)
        self.upkeep_label.setObjectName("upkeepStatus")
        self.upkeep_label.setAccessibleName("Memory upkeep")
        self.upkeep_label.hide()
        self.provider_label = ElidedLabel(self)
        self.provider_label.setObjectName("providerStatus")
        self.provider_label.setAccessibleName("Model")
        self.connection_label = QLabel(self)
        self.connection_label.setObjectName("connectionStatus")
        self.connection_label.setAccessibleName("Connection")
        self.memory_label = QLabel(self)
        self.memory_label.setObjectName("memoryStatus")
        self.memory_label.setAccessibleName("Memory")
        self.progress = QProgressBar(self)
        self.progress.setObjectName("backgroundProgress")
        self.progress.setAccessibleName("Background work")
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.progress_label = QLabel(self)
        self.progress_label.setAccessibleName("Background work")
        self.progress_label.hide()
        for widget in (
            self.upkeep_label,
            self.progress_label,
            self.progress,
            self.memory_label,
            self.connection_label,
            self.provider_label,
        ):
            widget.setContentsMargins(8, 0, 8, 0)
            self.addPermanentWidget(widget)

    def say(self, text: str, ms: int = 0) -> None:
        """Show a message for `ms` milliseconds (0: as long as a notice)."""
        self.showMessage(text, ms or NOTICE_MS)

    def set_connection(self, text: str, tip: str) -> None:
        """Say how the server answered (its tooltip: the details, if any)."""
        self.connection_label.setText(text)
        if tip or not text:  # "": nothing is known of the server (yet)
            self.connection_label.setToolTip(tip)

    def add_notice(self, text: str) -> None:
        """Show a notice for a while; notices often come in twos (a server's first turn), so
        the one still showing stays beside it."""
        shown = self.currentMessage()
        self.showMessage(f"{shown}  ·  {text}" if shown else text, NOTICE_MS)

    def show_knowledge(self, event: KnowledgeEvent) -> None:
        """The progress of reading the knowledge folders, and a problem it met."""
        what = "Reading files" if event.phase == "reading" else "Preparing file search"
        self.set_progress(what, event.done, event.total if event.done < event.total else 0)
        if event.problem:
            self.add_notice(event.problem)

    def show_workspace(self, workspace: Workspace, model: str | None = None) -> None:
        """Show the model in use (`model`, the conversation's; else the settings') and what
        memory search can do."""
        settings = workspace.settings
        configured = workspace.is_configured()
        if configured:
            custom = settings.provider == "custom"
            name = settings.effective_base_url() if custom else PROVIDERS[settings.provider].label
            self.provider_label.setText(f"{name} · {model or settings.chat_model}")
        else:
            self.provider_label.setText("No model connected")
        status = workspace.memory.embedding_status()
        if status.model is not None and status.error is None and status.total == 0:
            # Nothing to search yet, but the embedder is there: search will use meaning.
            self.memory_label.setText("0 memories")
            self.memory_label.setToolTip(
                f"Search by meaning is on ({status.model}); nothing is remembered yet."
            )
        elif status.keyword_only:
            self.memory_label.setText("Keyword-only memory")
            reason = status.error or (
                "No embedding model is set" if status.model is None else "No memory has vectors yet"
            )
            self.memory_label.setToolTip(f"Memory search uses keywords only: {reason}.")
        else:
            self.memory_label.setText(count(status.embedded, "memory", "memories"))
            self.memory_label.setToolTip(f"Hybrid search with {status.model}")
        if not configured:
            self.connection_label.setText("")
        elif not self.connection_label.text():
            self.connection_label.setText("Ready")

    def set_upkeep(self, pending: int) -> None:
        """Show "Updating memory…" while the curator works on `pending` replies."""
        self.upkeep_label.setText("Updating memory…")
        self.upkeep_label.setToolTip(
            "Learning from the last reply in the background; you can keep chatting."
        )
        self.upkeep_label.setVisible(pending > 0)

    def set_progress(self, what: str, done: int, total: int) -> None:
        """Show background progress with its numbers ("Embedding messages 1,200 of 9,000 ·
        about 3 min left", the time left from the rate since this work began); `total` 0
        hides it."""
        if total <= 0:
            self._started = None
            self.progress.hide()
            self.progress_label.hide()
            return
        now = self._clock()
        if self._started is None or self._started[0] != what or done < self._started[2]:
            self._started = (what, now, done)
        text = f"{what} {number(done)} of {number(total)}"
        _, began, done_then = self._started
        elapsed = now - began
        if elapsed >= ESTIMATE_AFTER and done > done_then:
            text += " · " + time_left((total - done) * elapsed / (done - done_then))
        self.progress_label.setText(text)
        self.progress_label.show()
        self.progress.setMaximum(total)
        self.progress.setValue(done)
        self.progress.show()
