"""Opening a data directory off the GUI thread, for a window that shows its frame first."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QThread, Signal

from assistant.errors import AssistantError

if TYPE_CHECKING:
    from assistant.workspace import Workspace

log = logging.getLogger(__name__)


class WorkspaceLoader(QThread):
    """Opens a data directory off the GUI thread; emits `opened` or `failed` once.

    It owns the workspace it opened until a window takes it (sets `workspace` to None);
    `close_unclaimed` closes it if none did. Parentless, so that no window can destroy it
    while it runs (see `shutdown`).
    """

    opened = Signal(object)  # Workspace
    failed = Signal(str)

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.workspace: Workspace | None = None

    def close_unclaimed(self) -> None:
        """Close the opened workspace if no window took it (it was closed meanwhile)."""
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None

    def run(self) -> None:
        """Import the stores and open them (the slow part of a start)."""
        try:
            from assistant.workspace import Workspace

            self.workspace = Workspace.open(self.root)
            self.workspace.drop_leftover_chats()
        except OSError as exc:
            self.failed.emit(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        except AssistantError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # shown to the user: the window has nothing else to show
            log.exception("Could not open %s", self.root)
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            self.opened.emit(self.workspace)
