"""The app in a child process on a data dir, closed by its window as a user closes it.

`python -m tests.quit_driver DATA_DIR stuck` closes the window as soon as the start-up
embedding has begun, while that embedding is stuck (it never returns: whatever runs in the
background). `python -m tests.quit_driver DATA_DIR finish` closes it once everything has
vectors, and prints how many memories and messages have none.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from PySide6.QtCore import QTimer

from assistant.memory.local_embedder import LocalEmbedder
from assistant.ui import app
from assistant.ui.window.main_window import MainWindow

POLL_MS = 50
started = threading.Event()


def stuck_embedding() -> None:
    """The embedder never returns on the background thread (the GUI thread's calls work)."""
    embed = LocalEmbedder.embed

    def embed_or_hang(self: LocalEmbedder, texts: list[str]) -> list[list[float]]:
        if threading.current_thread().name == "background-embedding":
            started.set()
            print("EMBEDDING STARTED", flush=True)
            threading.Event().wait()  # until the process ends
        return embed(self, texts)

    LocalEmbedder.embed = embed_or_hang  # type: ignore[method-assign]


class Window(MainWindow):
    """Closes itself when `done()` says so."""

    mode = "stuck"

    def __init__(self) -> None:
        super().__init__()
        self._poll = QTimer(self)
        self._poll.timeout.connect(self._check)
        self._poll.start(POLL_MS)

    def _check(self) -> None:
        if not self.is_ready():
            return
        if self.mode == "stuck" and not started.is_set():
            return
        if self.mode == "finish":
            status = self.workspace.memory.embedding_status()
            messages = self.workspace.conversations.pending_embeddings()
            if status.embedded < status.total or messages:
                return
            print(f"LEFT {status.total - status.embedded} {messages}", flush=True)
        self._poll.stop()
        print("CLOSING", flush=True)
        self.close()


def main() -> int:
    root, mode = Path(sys.argv[1]), sys.argv[2]
    if mode == "stuck":
        stuck_embedding()
    Window.mode = mode
    app.MainWindow = Window  # type: ignore[misc]
    return app.run_app(root)


if __name__ == "__main__":
    sys.exit(main())
