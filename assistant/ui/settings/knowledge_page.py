"""The Knowledge page of the settings dialog: the knowledge folders, their rules, progress and
each file's status (`ui/knowledge/page.py`). Folder changes apply at once, as in the window
of their own they had before (the index follows them in the background); OK and Cancel
concern the other pages."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from assistant.ui.knowledge.bridge import KnowledgeBridge
from assistant.ui.knowledge.page import KnowledgePage
from assistant.ui.settings.page import SettingsPage
from assistant.ui.theme import set_muted

KNOWLEDGE_TITLE = "Knowledge"


class KnowledgeSettingsPage(SettingsPage):
    """The knowledge folders as a page of the settings."""

    title = KNOWLEDGE_TITLE

    def __init__(self, bridge: KnowledgeBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("knowledgeSettingsPage")
        self.page = KnowledgePage(bridge, self)
        note = QLabel("Changes to the folders and rules apply at once.", self)
        note.setWordWrap(True)
        set_muted(note)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.page, 1)
        layout.addWidget(note)
