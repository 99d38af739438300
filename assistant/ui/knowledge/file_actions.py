"""What the window does with the files the chat shows: opening a place a reply read or a file
a message carries, and "Remember this" on either, which makes a memory that names its source.

A passage of a file is not a memory unless the user asks: "Remember this" opens the memory
dialog filled with the passage ("From report.pdf p. 4: …") for the user to trim; the memory
is tagged with the file and place, and its source is the conversation (and the message that
carries the file).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from assistant.knowledge import Citation, Place
from assistant.memory import AttachedFile, MemoryItem, Source
from assistant.ui.jobs import run_job
from assistant.ui.wording import shorten

if TYPE_CHECKING:
    from assistant.ui.chat.session import ChatSession
    from assistant.ui.chat.view import ChatView
    from assistant.workspace import Workspace

MEMORY_CHARS = 600  # of a passage, as the memory dialog is filled (the user trims it)
FILE_TAG = "file:"  # a memory made from a file is tagged "file:report.pdf p. 4"


class FileActions(QObject):
    """Opens and remembers the files of the conversation `session` shows in `chat`."""

    def __init__(
        self,
        window: QWidget,
        workspace: Workspace,
        chat: ChatView,
        session: ChatSession,
        say: Callable[[str], None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._workspace = workspace
        self._session = session
        self._say = say
        chat.citation_clicked.connect(self.open_citation)
        chat.attachment_clicked.connect(self.open_attachment)
        chat.remember_requested.connect(self.remember)

    def open_citation(self, citation: Citation) -> None:
        """Open a place a reply read (text in the in-app preview, which can remember it)."""
        from assistant.ui.knowledge.opening import open_citation

        preview = open_citation(citation, self._window)
        if preview is not None:
            preview.remember.connect(lambda text: self._ask(text, citation.label(), None))

    def open_attachment(self, attached: AttachedFile) -> None:
        """Open a file a message carries (its copy in the data dir)."""
        self.open_citation(Citation(str(self._path(attached)), Place()))

    def remember(self, target: Citation | AttachedFile, message_id: str | None) -> None:
        """ "Remember this" on a place a reply read, or on a file a message carries."""
        from assistant.knowledge import UnreadableFileError
        from assistant.knowledge.excerpts import passage_at

        if isinstance(target, AttachedFile):
            path, place, name = str(self._path(target)), Place(), target.name
        else:
            path, place, name = target.path, target.place, target.label()
        try:
            text = passage_at(path, place, self._workspace.knowledge.index)
        except UnreadableFileError as exc:
            self._say(f"{Path(path).name} cannot be read: {exc}")
            return
        self._ask(text, name, message_id)

    def _ask(self, text: str, source: str, message_id: str | None) -> None:
        """The memory dialog, filled with `text` from `source`; the memory is saved in the
        background (it shows in the sidebar)."""
        from assistant.ui.memory.dialogs import MemoryDialog, MemoryValues

        start = MemoryValues(f"From {source}: {shorten(' '.join(text.split()), MEMORY_CHARS)}",
                             "fact", 0.5)  # fmt: skip
        values = MemoryDialog.ask(self._window, start=start)
        if values is None:
            return
        cid = self._session.conversation_id
        origin = Source(cid, message_id) if cid is not None else None
        memory = self._workspace.memory

        def add(_progress: object) -> MemoryItem:
            return memory.add(values.text, values.kind, values.importance, source=origin,
                              tags=(f"{FILE_TAG}{source}",))  # fmt: skip

        run_job(add, on_done=lambda _item: self._say("Remembered."), on_error=self._say)

    def _path(self, attached: AttachedFile) -> Path:
        return self._workspace.attachments.path(self._session.conversation_id or "", attached)
