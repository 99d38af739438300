"""The main window: conversations on the left, the chat in the centre, memory on the right.

The window opens in two steps so that it shows at once: first the frame (menus, splitter,
input, status bar: Qt and the settings only), then, once the workspace is open (off the GUI
thread: numpy, the stores, the keyring), the panes. So the modules behind the panes are
imported where the panes are built, not at the top of this one.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QThread, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from assistant import APP_NAME, __version__
from assistant.errors import AssistantError
from assistant.paths import settings_file
from assistant.settings import read_ui_state
from assistant.ui.import_drop import ImportDropFilter
from assistant.ui.shutdown import release_when_finished, stop_thread

if TYPE_CHECKING:
    from assistant.agent.events import AgentEvent
    from assistant.workspace import Workspace

log = logging.getLogger(__name__)

TITLE_WORDS = 7
LIST_REFRESH_MS = 250
TEXT_FLUSH_MS = 30
NOTICE_MS = 15000  # how long a notice stays in the status bar
PAINT_FIRST_MS = 15  # the frame paints before the loader thread competes for the interpreter
LIST_MIN_WIDTH = 220  # fits the "New conversation" and "Temporary" buttons
SIDEBAR_MIN_WIDTH = 260

WELCOME = f"""
<h2>Welcome to {APP_NAME}</h2>
<p>{APP_NAME} is a personal assistant that <b>remembers</b>: what you tell it becomes
long-term memory you can browse, search, pin, edit and forget in the panel on the right.</p>
<p>To start chatting, connect a model:</p>
<ul>
<li><b>OpenAI</b>: paste your API key. It is kept in your system keyring, never in a file.</li>
<li><b>Ollama</b> or <b>LM Studio</b> on this computer: choose the preset; no key needed.</li>
<li>Any other <b>OpenAI-compatible server</b>: enter its URL.</li>
</ul>
<p>Your memories can be browsed without a connection.</p>
"""


class ChatInput(QPlainTextEdit):
    """Multi-line input: Enter sends, Shift+Enter starts a new line, Esc stops the reply."""

    send = Signal()
    stop = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        # Imported here: the Qt namespace takes 40 ms to load, and the frame shows without it.
        from PySide6.QtCore import Qt

        shift = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not shift:
            self.send.emit()
        elif event.key() == Qt.Key.Key_Escape:
            self.stop.emit()
        else:
            super().keyPressEvent(event)


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
        except OSError as exc:
            self.failed.emit(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        except AssistantError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # shown to the user: the window has nothing else to show
            log.exception("Could not open %s", self.root)
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            self.opened.emit(self.workspace)


class MainWindow(QMainWindow):
    """Top-level window; widget object names are a contract (see DESIGN.md).

    `MainWindow(workspace)` builds everything at once; `MainWindow()` then `open_workspace(root)`
    shows the frame first and fills the panes when the workspace is open (`ready`), or emits
    `open_failed` with the reason.
    """

    ready = Signal()
    open_failed = Signal(str)
    workspace: Workspace  # set by `attach`; nothing that uses it can be reached before
    _submit = Signal(str, str)
    _retry = Signal(str)
    _embed = Signal()
    _maintain = Signal()

    def __init__(self, workspace: Workspace | None = None) -> None:
        super().__init__()
        self.setWindowTitle(APP_NAME)
        self.setMinimumSize(880, 540)
        self.resize(1280, 800)
        self._busy = False
        self._attached = False  # the workspace is ours to close
        self._ready = False  # and every pane is built on it
        self._closed = False
        self._loader: WorkspaceLoader | None = None
        self._current: str | None = None
        self._pending_text: list[str] = []
        self._flush_text = QTimer(self, singleShot=True, interval=TEXT_FLUSH_MS)
        self._flush_text.timeout.connect(self._show_pending_text)

        self.splitter = QSplitter()  # horizontal; the Qt namespace (40 ms) is not needed yet
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(_placeholder("Loading conversations…", LIST_MIN_WIDTH, self))
        self.splitter.addWidget(self._build_chat())
        self.splitter.addWidget(_placeholder("Loading memories…", SIDEBAR_MIN_WIDTH, self))
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([250, 690, 340])
        self.setCentralWidget(self.splitter)
        self._build_menus()
        self._import_drop = ImportDropFilter(self, self._import_dropped)
        self._build_status_bar()
        self.input.setFocus()
        if workspace is not None:
            self._restore_layout(workspace.settings.ui_state)
            self.attach(workspace)

    def open_workspace(self, root: Path) -> None:
        """Lay the frame out as last time, then open `root` in the background and fill the panes."""
        self._restore_layout(read_ui_state(settings_file(root)))  # the workspace reports problems
        self.statusBar().showMessage("Opening your conversations and memories…")
        self._loader = WorkspaceLoader(root)
        self._loader.opened.connect(self._on_opened)
        self._loader.failed.connect(self._on_open_failed)
        QTimer.singleShot(PAINT_FIRST_MS, self._start_loading)

    def _start_loading(self) -> None:
        if self._loader is not None and not self._closed:
            self._loader.start()
            release_when_finished(self._loader, self._loader.close_unclaimed)

    def _on_opened(self, workspace: Workspace) -> None:
        if self._closed:  # closed while the workspace was opening: the loader closes it
            return
        if self._loader is not None:
            self._loader.workspace = None  # ours now, to attach or to close here
        try:
            self.attach(workspace)
        except Exception as exc:  # a bug or bad data: say so rather than look ready
            log.exception("Could not show %s", workspace.root)
            if self._attached:
                self._detach()
            else:
                workspace.close()
            self._on_open_failed(str(exc) or type(exc).__name__)

    def attach(self, workspace: Workspace) -> None:
        """Build the panes on `workspace`, start the agent's worker, show the last conversation."""
        from assistant.ui.bridge import StoreBridge
        from assistant.ui.chat_view import ChatView
        from assistant.ui.conversation_list import ConversationPane
        from assistant.ui.memory_edit_lines import MemoryEditLines
        from assistant.ui.memory_sidebar import MemorySidebar

        self.workspace = workspace
        self._attached = True
        self.bridge = StoreBridge(workspace, self)
        self.conversations = ConversationPane(workspace.conversations, self)
        self.conversations.setMinimumWidth(LIST_MIN_WIDTH)
        self.sidebar = MemorySidebar(workspace, self.bridge, self)
        self.sidebar.setMinimumWidth(SIDEBAR_MIN_WIDTH)
        self.chat = ChatView(self._memory_text, workspace.conversations.load, self.stack)
        self.memory_edits = MemoryEditLines(self.chat, workspace.memory, self)
        self.stack.addWidget(self.chat)
        self.stack.addWidget(self._build_welcome())
        self.stack.removeWidget(self._blank)
        self._blank.deleteLater()
        layout = self.splitter.saveState()  # as restored, or as the user has just dragged it
        for index, pane in ((0, self.conversations), (2, self.sidebar)):
            placeholder = self.splitter.replaceWidget(index, pane)
            if placeholder is not None:
                placeholder.deleteLater()
        self.splitter.restoreState(layout)
        self._start_worker(workspace)
        self._connect()
        for action in self._workspace_actions:
            action.setEnabled(True)
        # Only now: standard keys load the Qt namespace (40 ms), which the frame does without.
        self.action_new.setShortcut(QKeySequence.StandardKey.New)
        self.action_quit.setShortcut(QKeySequence.StandardKey.Quit)
        self.action_settings.setShortcut(QKeySequence.StandardKey.Preferences)
        self.send_button.setEnabled(True)
        self.statusBar().clearMessage()
        self._update_status()
        self._show_welcome_if_needed()
        self.conversations.select(self._first_conversation())
        if workspace.warnings:
            self._report_problems(workspace)
        self.input.setFocus()
        self._ready = True
        self.ready.emit()

    def _report_problems(self, workspace: Workspace) -> None:
        """Say what was wrong on disk and where the copies are; it stays until replaced."""
        text = " ".join(workspace.warnings)
        self.statusBar().showMessage(f"⚠ {text} (in {workspace.root})")
        self.statusBar().setToolTip("\n\n".join(workspace.warnings))

    def is_ready(self) -> bool:
        """Whether the panes are built on an open workspace."""
        return self._ready

    def _on_open_failed(self, message: str) -> None:
        if self._closed:  # the user has already left
            return
        self.statusBar().showMessage(f"Could not open your data: {message}")
        self.open_failed.emit(message)

    # -- building --------------------------------------------------------------------------------

    def _build_chat(self) -> QWidget:
        pane = QWidget(self)
        self.stack = QStackedWidget(pane)
        self._blank = QFrame(pane)  # framed like the chat view, until that is there
        self._blank.setFrameShape(QFrame.Shape.StyledPanel)
        self.stack.addWidget(self._blank)
        self.stack.setCurrentWidget(self._blank)

        self.input = ChatInput(pane)
        self.input.setObjectName("chatInput")
        self.input.setPlaceholderText(
            "Message Assistant — Enter to send, Shift+Enter for a new line"
        )
        self.input.setMaximumHeight(120)
        self.input.setTabChangesFocus(True)
        # Typing can start at once (it has the focus); Enter sends once the workspace is open.
        self.send_button = QPushButton("Send", pane)
        self.send_button.setObjectName("sendButton")
        self.send_button.setDefault(True)
        self.send_button.setEnabled(False)
        self.stop_button = QPushButton("Stop", pane)
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop the reply (Esc)")
        self.stop_button.setEnabled(False)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(pane)
        layout.setContentsMargins(4, 8, 4, 8)
        layout.addWidget(self.stack, 1)
        layout.addLayout(row)
        return pane

    def _build_welcome(self) -> QWidget:
        self.welcome = QWidget(self.stack)
        self.welcome.setObjectName("welcomePanel")
        text = QLabel(WELCOME, self.welcome)  # rich text, recognized by its tags
        text.setWordWrap(True)
        open_settings = QPushButton("Connect a model…", self.welcome)
        open_settings.setObjectName("welcomeSettingsButton")
        open_settings.clicked.connect(self.open_settings)
        button_row = QHBoxLayout()
        button_row.addWidget(open_settings)
        button_row.addStretch(1)
        layout = QVBoxLayout(self.welcome)
        layout.setContentsMargins(40, 30, 40, 30)
        layout.addWidget(text)
        layout.addLayout(button_row)
        layout.addStretch(1)
        return self.welcome

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.action_new = QAction("&New conversation", self)
        self.action_new.triggered.connect(self._new_conversation)
        self.action_import = QAction("&Import…", self)
        self.action_import.setObjectName("actionImport")
        self.action_import.triggered.connect(self._import)
        self.action_import_folder = QAction("Import &Folder…", self)
        self.action_import_folder.setObjectName("actionImportFolder")
        self.action_import_folder.setToolTip("Import an unpacked ChatGPT or Claude export")
        self.action_import_folder.triggered.connect(self._import_folder)
        self.action_export = QAction("&Export…", self)
        self.action_export.setObjectName("actionExport")
        self.action_export.triggered.connect(self._export)
        self.action_quit = QAction("&Quit", self)
        self.action_quit.triggered.connect(self.close)
        file_menu.addActions(
            [self.action_new, self.action_import, self.action_import_folder, self.action_export]
        )
        file_menu.addSeparator()
        file_menu.addAction(self.action_quit)
        edit_menu = self.menuBar().addMenu("&Edit")
        self.action_settings = QAction("&Settings…", self)
        self.action_settings.setObjectName("actionSettings")
        self.action_settings.triggered.connect(self.open_settings)
        edit_menu.addAction(self.action_settings)
        help_menu = self.menuBar().addMenu("&Help")
        about = QAction(f"&About {APP_NAME}", self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)
        self._workspace_actions = [
            self.action_new,
            self.action_import,
            self.action_import_folder,
            self.action_export,
            self.action_settings,
        ]
        for action in self._workspace_actions:
            action.setEnabled(False)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.provider_label = QLabel(self)
        self.provider_label.setObjectName("providerStatus")
        self.connection_label = QLabel(self)
        self.connection_label.setObjectName("connectionStatus")
        self.memory_label = QLabel(self)
        self.memory_label.setObjectName("memoryStatus")
        self.progress = QProgressBar(self)
        self.progress.setObjectName("backgroundProgress")
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.progress_label = QLabel(self)
        self.progress_label.hide()
        for widget in (
            self.progress_label,
            self.progress,
            self.memory_label,
            self.connection_label,
            self.provider_label,
        ):
            widget.setContentsMargins(8, 0, 8, 0)
            bar.addPermanentWidget(widget)

    def _start_worker(self, workspace: Workspace) -> None:
        from assistant.ui.worker import AgentWorker

        self.thread_ = QThread(self)
        self.thread_.setObjectName("agentThread")
        self.worker = AgentWorker(workspace)
        self.worker.moveToThread(self.thread_)
        self._submit.connect(self.worker.submit)
        self._retry.connect(self.worker.retry)
        self._embed.connect(self.worker.embed_missing)
        self._maintain.connect(self.worker.maintain)
        self.worker.agent_event.connect(self._on_agent_event)
        self.worker.busy_changed.connect(self._set_busy)
        self.worker.progress.connect(self._on_progress)
        self.thread_.start()
        self._maintain.emit()

    def _connect(self) -> None:
        self.conversations.selected.connect(self._show_conversation)
        self.send_button.clicked.connect(self.send)
        self.input.send.connect(self.send)
        self.stop_button.clicked.connect(self.stop)
        self.input.stop.connect(self.stop)
        self.chat.retry_requested.connect(self.retry)
        self.chat.memory_clicked.connect(self.sidebar.show_memory)
        self.sidebar.source_requested.connect(self._show_source)
        # Coalesce: a turn saves several messages, the list needs one refresh.
        self._refresh_list = QTimer(self, singleShot=True, interval=LIST_REFRESH_MS)
        self._refresh_list.timeout.connect(self.conversations.refresh)
        self.bridge.conversation_changed.connect(lambda _cid: self._refresh_list.start())
        self.bridge.memory_changed.connect(lambda _change: self._update_status())
        self.bridge.notice.connect(self._show_notice)

    # -- conversations ---------------------------------------------------------------------------

    def _first_conversation(self) -> str | None:
        listing = self.workspace.conversations.list()
        return listing[0].id if listing else None

    def _new_conversation(self) -> None:
        self.conversations.new_conversation()
        self.input.setFocus()

    def _show_conversation(self, conversation_id: str | None) -> None:
        self._current = conversation_id
        self._pending_text.clear()
        conversation = (
            None if conversation_id is None else self.workspace.conversations.load(conversation_id)
        )
        self.chat.show_conversation(conversation)
        self.sidebar.set_conversation(conversation_id)
        self._show_welcome_if_needed()

    def _show_source(self, conversation_id: str, message_id: str) -> None:
        self.conversations.select(conversation_id)
        self.chat.scroll_to_message(message_id)

    def _memory_text(self, memory_id: str) -> str | None:
        item = self.workspace.memory.get(memory_id)
        return None if item is None or item.state == "forgotten" else item.text

    # -- sending ---------------------------------------------------------------------------------

    def send(self) -> None:
        """Send the input's text; without a configured model, explain how to connect."""
        text = self.input.toPlainText().strip()
        if not text or self._busy:
            return
        if not self.workspace.is_configured():
            self._show_welcome_if_needed()
            self.open_settings()
            return
        from assistant.memory.conversations import DEFAULT_TITLE

        cid = self._current or self.conversations.new_conversation()
        conversation = self.workspace.conversations.load(cid)
        if conversation.title == DEFAULT_TITLE and not conversation.messages:
            self.workspace.conversations.rename(cid, _title_from(text))
        self.stack.setCurrentWidget(self.chat)
        self.chat.add_user_message(text)
        self.input.clear()
        self._set_busy(True)
        self._submit.emit(cid, text)

    def retry(self) -> None:
        """Answer the last message of the current conversation again."""
        if self._busy or self._current is None:
            return
        self.chat.show_conversation(self.workspace.conversations.load(self._current))
        self.chat.start_reply()
        self._set_busy(True)
        self._retry.emit(self._current)

    def stop(self) -> None:
        """Cancel the reply being written."""
        if self._busy:
            self.worker.cancel()

    def _show_pending_text(self) -> None:
        self._flush_text.stop()
        if self._pending_text:
            self.chat.append_delta("".join(self._pending_text))
            self._pending_text.clear()

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.send_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        if busy:
            self.connection_label.setText("Thinking…")

    def _show_notice(self, text: str) -> None:
        # Notices often come in twos (a server's first turn): keep the one still showing.
        shown = self.statusBar().currentMessage()
        self.statusBar().showMessage(f"{shown}  ·  {text}" if shown else text, NOTICE_MS)

    def _on_agent_event(self, event: AgentEvent) -> None:
        from assistant.agent import events  # loaded by then; the frame shows without it

        if isinstance(event, events.Notice):
            self._show_notice(event.text)
            return
        if event.conversation_id != self._current:
            return
        if isinstance(event, events.Waiting):
            self.connection_label.setText(f"Waiting for the model… {event.seconds:.0f} s")
            return
        if isinstance(event, events.TextDelta):
            self.connection_label.setText("Thinking…")
            # Chunks can arrive faster than the screen refreshes: show them in batches.
            self._pending_text.append(event.text)
            if not self._flush_text.isActive():
                self._flush_text.start()
            return
        self._show_pending_text()
        if isinstance(event, events.ToolCallStarted):
            self.chat.start_tool_call(event.call_id, event.name, event.arguments)
        elif isinstance(event, events.ToolCallFinished):
            self.chat.finish_tool_call(event.call_id, event.result, event.ok)
        elif isinstance(event, events.MemoryEdited):
            self.memory_edits.show(event.conversation_id, event.edit)
        elif isinstance(event, events.Finished):
            self.chat.finish_reply(event.memory_ids, cut_off=event.cut_off)
            self.connection_label.setText("Connected")
        elif isinstance(event, events.Failed):
            self.chat.show_error(event.error)
            self.connection_label.setText("Connection problem")
            self.connection_label.setToolTip(event.error)
        elif isinstance(event, events.Cancelled):
            self.chat.show_stopped()
            self.connection_label.setText("Stopped")

    # -- settings, status ------------------------------------------------------------------------

    def open_settings(self) -> None:
        """Show the settings; on OK, apply them and re-embed if the model changed."""
        from assistant.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.workspace, self)
        if dialog.exec():
            self._update_status()
            self._show_welcome_if_needed()
            self._embed.emit()

    def _show_welcome_if_needed(self) -> None:
        empty = (
            self._current is None or not self.workspace.conversations.load(self._current).messages
        )
        show = not self.workspace.is_configured() and empty
        self.stack.setCurrentWidget(self.welcome if show else self.chat)

    def _update_status(self) -> None:
        settings = self.workspace.settings
        if self.workspace.is_configured():
            name = {"openai": "OpenAI", "ollama": "Ollama", "lmstudio": "LM Studio"}.get(
                settings.provider, settings.effective_base_url()
            )
            self.provider_label.setText(f"{name} · {settings.chat_model}")
        else:
            self.provider_label.setText("No model connected")
        status = self.workspace.memory.embedding_status()
        if status.keyword_only:
            self.memory_label.setText("Keyword-only memory")
            reason = status.error or (
                "No embedding model is set" if status.model is None else "No memory has vectors yet"
            )
            self.memory_label.setToolTip(f"Memory search uses keywords only: {reason}.")
        else:
            self.memory_label.setText(f"{status.embedded:,} memories")
            self.memory_label.setToolTip(f"Hybrid search with {status.model}")
        if not self.workspace.is_configured():
            self.connection_label.setText("")
        elif not self.connection_label.text():
            self.connection_label.setText("Ready")

    def _on_progress(self, what: str, done: int, total: int) -> None:
        if total <= 0:
            self.progress.hide()
            self.progress_label.hide()
            self._update_status()
            return
        self.progress_label.setText(what)
        self.progress_label.show()
        self.progress.setMaximum(total)
        self.progress.setValue(done)
        self.progress.show()

    def _import(self) -> None:
        from assistant.ui.transfer_dialogs import import_file

        import_file(self, self.workspace)

    def _import_folder(self) -> None:
        from assistant.ui.transfer_dialogs import import_folder

        import_folder(self, self.workspace)

    def _import_dropped(self, path: Path) -> None:
        """An export dropped on the window: import it once the data is open."""
        if self.workspace is None or not self.action_import.isEnabled():
            return
        from assistant.ui.transfer_dialogs import import_file

        import_file(self, self.workspace, str(path))

    def import_path(self, path: str) -> None:
        """Preview and import `path` (handed over by `assistant import`), once the data is open."""
        from assistant.ui.transfer_dialogs import import_file

        if self._ready:
            import_file(self, self.workspace, path)
        else:
            self.ready.connect(lambda: import_file(self, self.workspace, path))

    def _export(self) -> None:
        from assistant.ui.transfer_dialogs import export_conversations

        export_conversations(self, self.workspace, self._current)

    def _about(self) -> None:
        QMessageBox.about(
            self,
            f"About {APP_NAME}",
            f"<b>{APP_NAME} {__version__}</b><p>A desktop personal assistant that remembers.</p>"
            + (f"<p>Your data: {self.workspace.root}</p>" if self._attached else ""),
        )

    # -- layout and closing ----------------------------------------------------------------------

    def _restore_layout(self, state: dict[str, str]) -> None:
        if "geometry" in state:
            self.restoreGeometry(QByteArray.fromBase64(state["geometry"].encode()))
        if "splitter" in state:
            self.splitter.restoreState(QByteArray.fromBase64(state["splitter"].encode()))

    def _save_layout(self) -> None:
        state = self.workspace.settings.ui_state
        state["geometry"] = bytes(self.saveGeometry().toBase64().data()).decode()
        state["splitter"] = bytes(self.splitter.saveState().toBase64().data()).decode()
        self.workspace.settings.save(settings_file(self.workspace.root))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        """Stop a running reply (its text is saved) and background work, close the stores.

        A workspace still opening is closed by its loader once open. Work that does not stop
        within a bounded wait finishes on its own, and the stores close after it (`shutdown`).
        """
        if not self._closed:
            self._closed = True
            if self._ready:
                try:
                    self._save_layout()
                except (AssistantError, OSError) as exc:  # quitting still closes the stores
                    log.warning("Could not save the window layout: %s", exc)
            if self._attached:
                self._detach()
        super().closeEvent(event)

    def _detach(self) -> None:
        """Stop what `attach` started (reply, upkeep, jobs), then close the workspace."""
        self._attached = False
        stopped = True
        if hasattr(self, "thread_"):
            self.worker.stop()
            stopped = stop_thread(self.thread_)
        if hasattr(self, "bridge"):
            self.bridge.disconnect_stores()
        if stopped:
            self.workspace.close()
        else:
            log.warning("Background work is still running; the data closes when it is done")
            release_when_finished(self.thread_, self.workspace.close, jobs=True, keep=self.worker)


def _placeholder(text: str, min_width: int, parent: QWidget) -> QLabel:
    """A pane's stand-in while the workspace opens."""
    label = QLabel(f'<div align="center">{text}</div>', parent)  # centred without Qt.Alignment
    label.setEnabled(False)  # drawn in the palette's muted text colour
    label.setMinimumWidth(min_width)
    return label


def _title_from(text: str) -> str:
    words = text.split()
    title = " ".join(words[:TITLE_WORDS])
    return title + ("…" if len(words) > TITLE_WORDS else "")
