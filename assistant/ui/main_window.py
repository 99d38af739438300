"""The main window: conversations on the left, the chat in the centre, memory on the right."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from assistant import APP_NAME


class MainWindow(QMainWindow):
    """Top-level window; widget object names are a contract (see DESIGN.md)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.setWindowTitle(APP_NAME)
        self.setMinimumSize(760, 480)
        self.resize(1200, 760)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self._build_conversations())
        splitter.addWidget(self._build_chat())
        splitter.addWidget(self._build_sidebar())
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([240, 640, 320])
        self.setCentralWidget(splitter)
        self.statusBar().showMessage(f"Data in {root}")

    def _build_conversations(self) -> QWidget:
        pane = QWidget(self)
        layout = QVBoxLayout(pane)
        new_button = QPushButton("New conversation", pane)
        new_button.setObjectName("newConversationButton")
        conversations = QListView(pane)
        conversations.setObjectName("conversationList")
        layout.addWidget(new_button)
        layout.addWidget(conversations)
        return pane

    def _build_chat(self) -> QWidget:
        pane = QWidget(self)
        layout = QVBoxLayout(pane)
        chat = QTextBrowser(pane)
        chat.setObjectName("chatView")
        chat.setPlaceholderText("Start a conversation: Assistant remembers what matters.")
        entry = QPlainTextEdit(pane)
        entry.setObjectName("chatInput")
        entry.setPlaceholderText("Message Assistant")
        entry.setMaximumHeight(120)
        send = QPushButton("Send", pane)
        send.setObjectName("sendButton")
        stop = QPushButton("Stop", pane)
        stop.setObjectName("stopButton")
        stop.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(stop)
        buttons.addWidget(send)
        layout.addWidget(chat, 1)
        layout.addWidget(entry)
        layout.addLayout(buttons)
        return pane

    def _build_sidebar(self) -> QWidget:
        pane = QWidget(self)
        pane.setObjectName("memorySidebar")
        layout = QVBoxLayout(pane)
        layout.addWidget(QLabel("<b>Memories</b>", pane))
        search = QLineEdit(pane)
        search.setObjectName("memorySearch")
        search.setPlaceholderText("Search memories")
        search.setClearButtonEnabled(True)
        memories = QListView(pane)
        memories.setObjectName("memoryList")
        working = QTextBrowser(pane)
        working.setObjectName("workingMemoryView")
        working.setPlaceholderText("No task in progress.")
        layout.addWidget(search)
        layout.addWidget(memories, 2)
        layout.addWidget(QLabel("<b>Working memory</b>", pane))
        layout.addWidget(working, 1)
        return pane
