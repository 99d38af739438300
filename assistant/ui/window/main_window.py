"""The main window: conversations on the left, the chat in the centre, memory on the right.

The window opens in two steps so that it shows at once: first the frame (menus, splitter,
input, status bar: Qt and the settings only), then, once the workspace is open (off the GUI
thread: numpy, the stores, the keyring), the panes. So the modules behind the panes are
imported where the panes are built, not at the top of this one. The menus, the status bar and
the input box are modules of their own; this one wires them to the panes and the worker.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QRect, QThread, QThreadPool, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QGuiApplication,
    QMoveEvent,
    QPalette,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from assistant import APP_NAME, __version__
from assistant.errors import AssistantError
from assistant.paths import settings_file
from assistant.settings import PROVIDERS, read_ui_state
from assistant.ui import theme
from assistant.ui.chat.composer import Composer
from assistant.ui.debounce import Debounced
from assistant.ui.shutdown import release_when_finished, stop_thread
from assistant.ui.transfer.drop import ImportDropFilter
from assistant.ui.window import geometry as window_geometry
from assistant.ui.window.menu import MainMenu
from assistant.ui.window.side_panes import SidePane, SidePanes
from assistant.ui.window.status_bar import StatusBar
from assistant.ui.wording import count

if TYPE_CHECKING:
    from assistant.knowledge import Citation, KnowledgeEvent
    from assistant.memory import Conversation
    from assistant.ui.worker import AgentEvent
    from assistant.workspace import Workspace

log = logging.getLogger(__name__)

TITLE_WORDS = 7
LIST_REFRESH_MS = 250
TEXT_FLUSH_MS = 30
NOTICE_MS = 15000  # how long a notice stays in the status bar
PAINT_FIRST_MS = 15  # the frame paints before the loader thread competes for the interpreter
LIST_MIN_WIDTH = 200  # fits the "New chat" and "Temporary chat" buttons
SIDEBAR_MIN_WIDTH = 260
CHAT_MIN_WIDTH = 320
MIN_WIDTH = 640
MIN_HEIGHT = 420
# Below these window widths a pane folds away by itself (and comes back when there is room).
MEMORY_PANE_FOLDS_BELOW = 1000
LIST_PANE_FOLDS_BELOW = 760
TEMPORARY_NOTICE = (
    "Temporary chat: it does not use or add to your long-term memory, and it is deleted "
    "when you leave it or quit."
)

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
    _edit = Signal(str, str, str)
    _retry = Signal(str)
    _embed = Signal()
    _maintain = Signal()

    def __init__(self, workspace: Workspace | None = None) -> None:
        super().__init__()
        self.setWindowTitle(APP_NAME)
        self.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)
        self._busy = False
        self._busy_with: str | None = None  # the conversation being answered
        self._attached = False  # the workspace is ours to close
        self._ready = False  # and every pane is built on it
        self._closed = False
        self._loader: WorkspaceLoader | None = None
        self._current: str | None = None
        self._leave_later: set[str] = set()  # to delete once its reply has ended
        self._placed = False  # kept on the screen once shown and framed by the window manager
        self._pending_text: list[str] = []
        self._flush_text = Debounced(TEXT_FLUSH_MS, self._show_pending_text, self, throttled=True)

        self.splitter = QSplitter()  # horizontal; the Qt namespace (40 ms) is not needed yet
        self.splitter.setObjectName("paneSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(_placeholder("Loading conversations…", LIST_MIN_WIDTH, self))
        self.splitter.addWidget(self._build_chat())
        self.splitter.addWidget(_placeholder("Loading memories…", SIDEBAR_MIN_WIDTH, self))
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([240, 700, 340])
        self.setCentralWidget(self.splitter)
        self.menu = MainMenu(self)
        self.action_new = self.menu.new
        self.action_import = self.menu.import_
        self.action_export = self.menu.export
        self.action_settings = self.menu.settings
        self.action_quit = self.menu.quit
        self.action_import_folder = self.menu.import_folder
        self._connect_frame()
        self._import_drop = ImportDropFilter(self, self._import_dropped)
        self.status = StatusBar(self)
        self.setStatusBar(self.status)
        self.provider_label = self.status.provider_label
        self.connection_label = self.status.connection_label
        self.memory_label = self.status.memory_label
        self.progress = self.status.progress
        self.fit_to_screen()
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
        from assistant.ui.chat.code_highlight import warm_up as warm_up_highlighting
        from assistant.ui.chat.find_bar import FindBar
        from assistant.ui.chat.memory_edit_lines import MemoryEditLines
        from assistant.ui.chat.reply_log import ReplyLog
        from assistant.ui.chat.suggestion_lines import SuggestionLines
        from assistant.ui.chat.view import ChatView
        from assistant.ui.conversations.pane import ConversationPane
        from assistant.ui.memory.sidebar import MemorySidebar

        self.workspace = workspace
        self._attached = True
        self._drop_leftovers()
        self.bridge = StoreBridge(workspace, self)
        self.conversations = ConversationPane(workspace.conversations, self)
        self.conversations.setMinimumWidth(LIST_MIN_WIDTH)
        self.sidebar = MemorySidebar(workspace, self.bridge, self)
        self.sidebar.setMinimumWidth(SIDEBAR_MIN_WIDTH)
        self.chat = ChatView(self._memory_text, workspace.conversations.load, self.stack)
        self.memory_edits = MemoryEditLines(self.chat, workspace.memory, self)
        self.suggestions = SuggestionLines(
            self.chat, workspace.conversations, workspace.memory, self.memory_edits, self
        )
        self.reply_log = ReplyLog()
        self.find_bar = FindBar(self.chat, self._chat_pane, before_find=self.chat.load_all)
        self._chat_layout.insertWidget(1, self.find_bar)  # above the chat
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
        self.side_panes.apply(self.width())
        self._start_worker(workspace)
        self._start_knowledge(workspace)
        QThreadPool.globalInstance().start(warm_up_highlighting)
        self._connect()
        for action in self.menu.workspace_actions:
            action.setEnabled(True)
        # Only now: standard keys load the Qt namespace (40 ms), which the frame does without.
        self.menu.install_shortcuts()
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

    def is_opening(self) -> bool:
        """Whether the data directory is being opened off the GUI thread right now."""
        return self._loader is not None and self._loader.isRunning()

    def _on_open_failed(self, message: str) -> None:
        if self._closed:  # the user has already left
            return
        self.statusBar().showMessage(f"Could not open your data: {message}")
        self.open_failed.emit(message)

    # -- building --------------------------------------------------------------------------------

    def _build_chat(self) -> QWidget:
        pane = QWidget(self)
        self._chat_pane = pane
        pane.setMinimumWidth(CHAT_MIN_WIDTH)
        self.stack = QStackedWidget(pane)
        self._blank = QFrame(pane)  # framed like the chat view, until that is there
        self._blank.setFrameShape(QFrame.Shape.StyledPanel)
        self.stack.addWidget(self._blank)
        self.stack.setCurrentWidget(self._blank)
        self.temporary_banner = QLabel(TEMPORARY_NOTICE, pane)
        self.temporary_banner.setObjectName("temporaryBanner")
        self.temporary_banner.setWordWrap(True)
        self.temporary_banner.setAccessibleName("Temporary chat")
        self.temporary_banner.setContentsMargins(8, 4, 8, 4)
        self.temporary_banner.setAutoFillBackground(True)
        self.temporary_banner.setBackgroundRole(QPalette.ColorRole.ToolTipBase)
        self.temporary_banner.setForegroundRole(QPalette.ColorRole.ToolTipText)
        self.temporary_banner.hide()
        self.composer = Composer(pane)
        self.input = self.composer.input
        self.send_button = self.composer.send_button
        self.stop_button = self.composer.stop_button
        pane_buttons = QHBoxLayout()
        pane_buttons.setContentsMargins(0, 0, 0, 0)
        self.list_toggle = _pane_button("☰", "Show or hide the conversations (Ctrl+Shift+L)", pane)
        self.list_toggle.setObjectName("conversationsPaneButton")
        self.list_toggle.setAccessibleName("Conversations pane")
        self.memory_toggle = _pane_button("◆", "Show or hide the memory (Ctrl+Shift+M)", pane)
        self.memory_toggle.setObjectName("memoryPaneButton")
        self.memory_toggle.setAccessibleName("Memory pane")
        pane_buttons.addWidget(self.list_toggle)
        pane_buttons.addWidget(self.temporary_banner, 1)
        pane_buttons.addStretch(0)  # takes the room while there is no banner
        pane_buttons.addWidget(self.memory_toggle)
        layout = QVBoxLayout(pane)
        layout.setContentsMargins(4, 4, 4, 8)
        layout.addLayout(pane_buttons)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.composer)
        self._chat_layout = layout
        return pane

    def _build_welcome(self) -> QWidget:
        self.welcome = QWidget(self.stack)
        self.welcome.setObjectName("welcomePanel")
        text = QLabel(WELCOME, self.welcome)  # rich text, recognized by its tags
        text.setWordWrap(True)
        open_settings = QPushButton("Connect a model…", self.welcome)
        open_settings.setObjectName("welcomeSettingsButton")
        open_settings.setAccessibleDescription(
            "Opens Settings to connect to OpenAI, Ollama, LM Studio or another server"
        )
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

    def _connect_frame(self) -> None:
        """What works before the workspace is open: quitting, panes, themes, help."""
        menu = self.menu
        menu.quit.triggered.connect(self.close)
        menu.about.triggered.connect(self._about)
        menu.shortcuts.triggered.connect(self._show_shortcuts)
        menu.focus_input.triggered.connect(self.input.setFocus)
        self.side_panes = SidePanes(
            self.splitter,
            [
                SidePane(
                    0,
                    menu.show_conversations,
                    self.list_toggle,
                    LIST_PANE_FOLDS_BELOW,
                    "conversations_pane",
                ),
                SidePane(
                    2, menu.show_memory, self.memory_toggle, MEMORY_PANE_FOLDS_BELOW, "memory_pane"
                ),
            ],
        )
        menu.themes.triggered.connect(lambda action: self.set_theme(str(action.data())))
        self.composer.cancel_edit_button.clicked.connect(self.input.setFocus)

    def _start_worker(self, workspace: Workspace) -> None:
        from assistant.ui.worker import AgentWorker

        self.thread_ = QThread(self)
        self.thread_.setObjectName("agentThread")
        self.worker = AgentWorker(workspace)
        self.worker.moveToThread(self.thread_)
        self._submit.connect(self.worker.submit)
        self._edit.connect(self.worker.edit)
        self._retry.connect(self.worker.retry)
        self._embed.connect(self.worker.embed_missing)
        self._maintain.connect(self.worker.maintain)
        self.worker.agent_event.connect(self._on_agent_event)
        self.worker.busy_changed.connect(self._set_busy)
        self.worker.upkeep_changed.connect(self.status.set_upkeep)
        self.worker.progress.connect(self._on_progress)
        self.thread_.start()
        self._maintain.emit()

    def _start_knowledge(self, workspace: Workspace) -> None:
        """Keep the knowledge folders' index up to date in the background."""
        from assistant.ui.knowledge.bridge import KnowledgeBridge

        self.knowledge = KnowledgeBridge(workspace.knowledge, self)
        self.knowledge.changed.connect(self._on_knowledge)
        self.knowledge.start()

    def _connect(self) -> None:
        menu = self.menu
        menu.new.triggered.connect(self._on_new)
        menu.new_temporary.triggered.connect(self._on_new_temporary)
        menu.import_.triggered.connect(self._import)
        menu.import_folder.triggered.connect(self._import_folder)
        menu.export.triggered.connect(self._export)
        menu.export_conversation.triggered.connect(self._export_conversation)
        menu.copy_conversation.triggered.connect(self._copy_conversation)
        menu.settings.triggered.connect(self.open_settings)
        menu.knowledge.triggered.connect(self.open_knowledge)
        menu.find.triggered.connect(self.find_bar.open_bar)
        menu.search.triggered.connect(self.search_conversations)
        menu.memory_timeline.triggered.connect(self.sidebar.show_timeline)
        menu.stop.triggered.connect(self.stop)
        menu.next_conversation.triggered.connect(lambda: self.conversations.select_next(1))
        menu.previous_conversation.triggered.connect(lambda: self.conversations.select_next(-1))
        self.conversations.selected.connect(self._show_conversation)
        self.send_button.clicked.connect(self.send)
        self.input.send.connect(self.send)
        self.stop_button.clicked.connect(self.stop)
        self.input.stop.connect(self._on_escape)
        self.chat.retry_requested.connect(self.retry)
        self.chat.regenerate_requested.connect(self.regenerate)
        self.chat.edit_requested.connect(self._begin_edit)
        self.chat.branch_requested.connect(self._show_branch)
        self.chat.copied.connect(lambda what: self.statusBar().showMessage(what, 3000))
        self.chat.memory_clicked.connect(self.sidebar.show_memory)
        self.chat.citation_clicked.connect(self._open_citation)
        self.sidebar.source_requested.connect(self.show_message)
        # Coalesce: a turn saves several messages, the list needs one refresh.
        self._refresh_list = Debounced(LIST_REFRESH_MS, self.conversations.refresh, self)
        self.bridge.conversation_changed.connect(self._refresh_list.trigger)
        self.bridge.memory_changed.connect(lambda _change: self._update_status())
        self.bridge.notice.connect(self._show_notice)

    # -- conversations ---------------------------------------------------------------------------

    def _first_conversation(self) -> str | None:
        """The first conversation of the list as shown (pinned first, archived left out)."""
        return self.conversations.first_id()

    def _drop_leftovers(self) -> None:
        """Delete the empty and temporary conversations an earlier run left behind (one with
        records this version cannot read is not empty: it is kept)."""
        store = self.workspace.conversations
        for info in store.all():
            if info.temporary or info.empty:
                self._delete_quietly(info.id)

    def new_conversation(self, temporary: bool = False) -> str:
        """Open an empty conversation (reusing one if there is one) and focus the input."""
        cid = self.conversations.new_conversation(temporary=temporary)
        self.input.setFocus()
        return cid

    def _on_new(self) -> None:
        self.new_conversation()

    def _on_new_temporary(self) -> None:
        self.new_conversation(temporary=True)

    def _show_conversation(self, conversation_id: str | None) -> None:
        previous = self._current
        self._current = conversation_id
        self._pending_text.clear()
        self.composer.end_edit()
        if previous is not None and previous != conversation_id:
            self._leave(previous)
        conversation = (
            None if conversation_id is None else self.workspace.conversations.load(conversation_id)
        )
        if conversation is not None and self._is_answering(conversation_id):
            self.reply_log.show(self.chat, conversation)  # the reply so far; the rest streams in
        else:
            self.chat.show_conversation(conversation)
        self.temporary_banner.setVisible(conversation is not None and conversation.temporary)
        self.sidebar.set_conversation(conversation_id)
        self._show_welcome_if_needed()
        hit = None if conversation_id is None else self.conversations.content_hit(conversation_id)
        if hit is not None:  # found by what was said in it: open it there
            self.chat.scroll_to_message(hit)

    def _is_answering(self, conversation_id: str | None) -> bool:
        return self._busy and conversation_id is not None and conversation_id == self._busy_with

    def _leave(self, conversation_id: str) -> None:
        """Leaving a conversation: a temporary or empty one is deleted (after its reply)."""
        store = self.workspace.conversations
        if not store.exists(conversation_id):
            return
        conversation = store.load(conversation_id)
        if not (conversation.temporary or store.is_empty(conversation_id)):
            return
        if self._is_answering(conversation_id):
            self._leave_later.add(conversation_id)
            return
        self._delete_quietly(conversation_id)
        self._refresh_list.trigger()

    def _delete_quietly(self, conversation_id: str) -> None:
        try:
            self.workspace.conversations.delete(conversation_id)
        except AssistantError as exc:  # gone already, or the disk refuses: nothing to lose
            log.info("Could not delete conversation %s: %s", conversation_id, exc)

    def show_message(self, conversation_id: str, message_id: str) -> None:
        """Open a conversation at a message (on the branch that holds it)."""
        self.conversations.select(conversation_id)
        if self._current != conversation_id or self.chat.scroll_to_message(message_id):
            return
        conversation = self.workspace.conversations.load(conversation_id)
        if any(m.id == message_id for m in conversation.messages) and not self._busy:
            leaf = conversation.newest_leaf_under(message_id)
            self.workspace.conversations.set_leaf(conversation_id, leaf)
            self.chat.show_conversation(self.workspace.conversations.load(conversation_id))
            self.chat.scroll_to_message(message_id)

    def search_conversations(self) -> None:
        """Ctrl+K: find a message in any conversation and open it there."""
        from assistant.ui.conversations.search import ChatSearchDialog

        dialog = ChatSearchDialog(self.workspace.conversations, self)
        dialog.chosen.connect(self.show_message)
        dialog.exec()
        dialog.deleteLater()

    def _show_branch(self, message_id: str) -> None:
        """Show the branch through a sibling message (its newest continuation)."""
        if self._current is None or self._busy:
            return
        store = self.workspace.conversations
        store.set_leaf(self._current, store.load(self._current).newest_leaf_under(message_id))
        position = self.chat.verticalScrollBar().value()
        self.chat.show_conversation(store.load(self._current))
        self.chat.verticalScrollBar().setValue(position)

    def _memory_text(self, memory_id: str) -> str | None:
        item = self.workspace.memory.get(memory_id)
        return None if item is None or item.state == "forgotten" else item.text

    # -- sending ---------------------------------------------------------------------------------

    def send(self) -> None:
        """Send the input's text (a new version of a message while editing one)."""
        text = self.input.toPlainText().strip()
        if not text or self._busy:
            return
        if not self.workspace.is_configured():
            self._show_welcome_if_needed()
            self.open_settings()
            return
        from assistant.memory import DEFAULT_TITLE

        cid = self._current or self.new_conversation()
        conversation = self.workspace.conversations.load(cid)
        edited = self.composer.editing
        if edited is not None and any(m.id == edited for m in conversation.messages):
            parent = next(m.parent_id for m in conversation.messages if m.id == edited)
            self._start_reply(cid, dataclasses.replace(conversation, leaf_id=parent), text)
            self._edit.emit(cid, edited, text)
        else:
            if conversation.title == DEFAULT_TITLE and not conversation.messages:
                self.workspace.conversations.rename(cid, _title_from(text))
            self._start_reply(cid, None, text)
            self._submit.emit(cid, text)
        self.composer.end_edit()
        self.input.clear()

    def retry(self) -> None:
        """Answer the last message of the current branch again."""
        if self._busy or self._current is None:
            return
        branch = self.workspace.conversations.load(self._current).branch()
        last_user = next((m for m in reversed(branch) if m.role == "user"), None)
        if last_user is not None:
            self.regenerate(last_user.id)

    def regenerate(self, user_message_id: str) -> None:
        """Write a new reply to a user message; the earlier reply stays as a branch."""
        if self._busy or self._current is None:
            return
        conversation = self.workspace.conversations.load(self._current)
        if all(m.id != user_message_id for m in conversation.messages):
            return
        self.workspace.conversations.set_leaf(self._current, user_message_id)
        self._start_reply(self._current, dataclasses.replace(conversation, leaf_id=user_message_id))
        self._retry.emit(self._current)

    def _start_reply(
        self, cid: str, shown: Conversation | None, user_text: str | None = None
    ) -> None:
        """Show the conversation as it will be answered, then wait for the reply."""
        self.stack.setCurrentWidget(self.chat)
        if shown is not None:
            self.chat.show_conversation(shown, replying=user_text is None)
        if user_text is not None:
            self.chat.add_user_message(user_text)
        else:
            self.chat.start_reply()
        self._busy_with = cid
        self.reply_log.start(cid)
        self._set_busy(True)

    def _begin_edit(self, message_id: str, text: str) -> None:
        if not self._busy:
            self.composer.begin_edit(message_id, text)

    def stop(self) -> None:
        """Cancel the reply being written (memory upkeep goes on)."""
        if self._busy:
            self.worker.cancel()

    def _on_escape(self) -> None:
        if self._busy:
            self.stop()
        elif self.composer.editing is not None:
            self.composer.end_edit()

    def _show_pending_text(self) -> None:
        self._flush_text.cancel()
        if self._pending_text:
            self.chat.append_delta("".join(self._pending_text))
            self._pending_text.clear()

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.send_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        if busy:
            self.connection_label.setText("Thinking…")
            return
        self._busy_with = None
        for cid in list(self._leave_later):
            self._leave_later.discard(cid)
            if cid != self._current:
                self._delete_quietly(cid)
                self._refresh_list.trigger()

    def _show_notice(self, text: str) -> None:
        # Notices often come in twos (a server's first turn): keep the one still showing.
        shown = self.statusBar().currentMessage()
        self.statusBar().showMessage(f"{shown}  ·  {text}" if shown else text, NOTICE_MS)

    def _on_agent_event(self, event: AgentEvent) -> None:
        from assistant.ui.worker import events  # loaded by then; the frame shows without it

        if isinstance(event, events.Notice):
            self._show_notice(event.text)
            return
        self.reply_log.record(event)
        if event.conversation_id != self._current:
            if isinstance(event, events.MemoryEdited):  # its line shows with the conversation
                self.memory_edits.record(event.conversation_id, event.edit)
            return
        if isinstance(event, events.Waiting):
            self.connection_label.setText(f"Waiting for the model… {event.seconds:.0f} s")
            return
        if isinstance(event, events.TextDelta):
            self.connection_label.setText("Thinking…")
            # Chunks can arrive faster than the screen refreshes: show them in batches.
            self._pending_text.append(event.text)
            self._flush_text.trigger()
            return
        self._show_pending_text()
        if isinstance(event, events.ToolCallStarted):
            self.chat.start_tool_call(event.call_id, event.name, event.arguments)
        elif isinstance(event, events.ToolCallFinished):
            self.chat.finish_tool_call(event.call_id, event.result, event.ok)
        elif isinstance(event, events.MemoryEdited):
            self.memory_edits.show(event.conversation_id, event.edit)
        elif isinstance(event, events.MemorySuggested):  # kept with the conversation
            self.suggestions.show(event.conversation_id, event.change)
        elif isinstance(event, events.Finished | events.Failed | events.Cancelled):
            saved = self.workspace.conversations.load(event.conversation_id)
            error = event.error if isinstance(event, events.Failed) else None
            self.chat.finish_reply(saved, error)
            if isinstance(event, events.Finished):
                self.connection_label.setText("Connected")
            elif isinstance(event, events.Failed):
                self.connection_label.setText("Connection problem")
                self.connection_label.setToolTip(event.error)
            else:
                self.connection_label.setText("Stopped")

    # -- settings, status ------------------------------------------------------------------------

    def open_settings(self) -> None:
        """Show the settings; on OK, apply them and re-embed if the model changed."""
        from assistant.ui.settings.dialog import SettingsDialog

        dialog = SettingsDialog(self.workspace, self)
        if dialog.exec():
            self._update_status()
            self._show_welcome_if_needed()
            self._embed.emit()

    def open_knowledge(self) -> None:
        """Show the knowledge folders, their rules, progress and files."""
        from assistant.ui.knowledge.page import KnowledgeDialog

        KnowledgeDialog(self.knowledge, self).exec()

    def _open_citation(self, citation: Citation) -> None:
        from assistant.ui.knowledge.opening import open_citation

        open_citation(citation, self)

    def _on_knowledge(self, event: KnowledgeEvent) -> None:
        what = "Reading files" if event.phase == "reading" else "Preparing file search"
        self.status.set_progress(what, event.done, event.total if event.done < event.total else 0)
        if event.problem:
            self._show_notice(event.problem)

    def set_theme(self, name: str) -> None:
        """Use theme `name` ("system", "light", "dark") now and from the next start."""
        theme.apply(name)
        action = self.menu.theme_actions.get(name)
        if action is not None:
            action.setChecked(True)
        if self._attached:
            self.workspace.settings.ui_state["theme"] = name

    def _show_welcome_if_needed(self) -> None:
        empty = (
            self._current is None or not self.workspace.conversations.load(self._current).messages
        )
        show = not self.workspace.is_configured() and empty
        self.stack.setCurrentWidget(self.welcome if show else self.chat)

    def _update_status(self) -> None:
        settings = self.workspace.settings
        if self.workspace.is_configured():
            custom = settings.provider == "custom"
            name = settings.effective_base_url() if custom else PROVIDERS[settings.provider].label
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
            self.memory_label.setText(count(status.embedded, "memory", "memories"))
            self.memory_label.setToolTip(f"Hybrid search with {status.model}")
        if not self.workspace.is_configured():
            self.connection_label.setText("")
        elif not self.connection_label.text():
            self.connection_label.setText("Ready")

    def _on_progress(self, what: str, done: int, total: int) -> None:
        self.status.set_progress(what, done, total)
        if total <= 0:
            self._update_status()

    def _import(self) -> None:
        from assistant.ui.transfer.dialogs import import_file

        import_file(self, self.workspace)

    def _import_folder(self) -> None:
        from assistant.ui.transfer.dialogs import import_folder

        import_folder(self, self.workspace)

    def _import_dropped(self, path: Path) -> None:
        """An export dropped on the window: import it once the data is open."""
        if self.workspace is None or not self.action_import.isEnabled():
            return
        from assistant.ui.transfer.dialogs import import_file

        import_file(self, self.workspace, str(path))

    def import_path(self, path: str) -> None:
        """Preview and import `path` (handed over by `assistant import`), once the data is open."""
        from assistant.ui.transfer.dialogs import import_file

        if self._ready:
            import_file(self, self.workspace, path)
        else:
            self.ready.connect(lambda: import_file(self, self.workspace, path))

    def _export(self) -> None:
        from assistant.ui.transfer.dialogs import export_conversations

        export_conversations(self, self.workspace, self._current)

    def _export_conversation(self) -> None:
        from assistant.ui.transfer.conversation_export import export_conversation

        if self._current is not None:
            export_conversation(self, self.workspace.conversations, self._current, self._show_saved)

    def _show_saved(self, path: str) -> None:
        self.statusBar().showMessage(f"Saved to {path}", NOTICE_MS)

    def _copy_conversation(self) -> None:
        from assistant.ui.transfer.conversation_export import copy_conversation

        if self._current is not None:
            copy_conversation(self.workspace.conversations, self._current)
            self.statusBar().showMessage("Conversation copied as Markdown", 3000)

    def _about(self) -> None:
        QMessageBox.about(
            self,
            f"About {APP_NAME}",
            f"<b>{APP_NAME} {__version__}</b><p>A desktop personal assistant that remembers.</p>"
            + (f"<p>Your data: {self.workspace.root}</p>" if self._attached else ""),
        )

    def _show_shortcuts(self) -> None:
        rows = "".join(
            f"<tr><td>{what}</td><td>&nbsp;&nbsp;<b>{keys}</b></td></tr>"
            for what, keys in self.menu.shortcut_rows()
        )
        box = QMessageBox(self)
        box.setObjectName("shortcutsDialog")
        box.setWindowTitle("Keyboard shortcuts")
        box.setText(f"<table>{rows}</table>")
        box.exec()

    # -- layout and closing ----------------------------------------------------------------------

    def fit_to_screen(self, available: QRect | None = None) -> None:
        """Size the window for a first run: at most 90 % of the screen's free area, centred."""
        if available is None:
            available = self.screen().availableGeometry()
        self.setGeometry(window_geometry.first_run(available))

    def keep_on_screen(self, available: QRect | None = None) -> None:
        """Shrink and move the window so that all of it is on the screen's free area."""
        if available is None:
            available = self.screen().availableGeometry()
        frame = self.frameGeometry()
        inner = self.geometry()
        extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
        fitted = window_geometry.clamp(frame, available)
        self.resize(
            max(MIN_WIDTH, fitted.width() - extra_w), max(MIN_HEIGHT, fitted.height() - extra_h)
        )
        self.move(fitted.topLeft())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        """Once shown, make sure all of the window is on the screen."""
        super().showEvent(event)
        self._place()

    def moveEvent(self, event: QMoveEvent) -> None:  # noqa: N802
        """On X11 the window manager adds the frame after the window is shown (and moves it):
        fit the window again then, title bar included (its status bar was below the screen)."""
        super().moveEvent(event)
        self._place()

    def _place(self) -> None:
        if self._placed or not self.isVisible():
            return
        self.keep_on_screen()
        framed = self.frameGeometry() != self.geometry()
        self._placed = framed or self.windowHandle() is None or _no_frames()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Fold or unfold the side panes for the new width."""
        super().resizeEvent(event)
        if hasattr(self, "side_panes"):  # resized while the frame is being built
            self.side_panes.fit(event.size().width())

    def _restore_layout(self, state: dict[str, str]) -> None:
        if "theme" in state:
            self.set_theme(state["theme"])
        else:
            self.menu.theme_actions["system"].setChecked(True)
        if "geometry" in state:
            self.restoreGeometry(QByteArray.fromBase64(state["geometry"].encode()))
            self.keep_on_screen()
        if "splitter" in state:
            self.splitter.restoreState(QByteArray.fromBase64(state["splitter"].encode()))
        self.side_panes.restore(state)

    def _save_layout(self) -> None:
        state = self.workspace.settings.ui_state
        state["geometry"] = bytes(self.saveGeometry().toBase64().data()).decode()
        state["splitter"] = bytes(self.splitter.saveState().toBase64().data()).decode()
        self.side_panes.save(state)
        self.workspace.settings.save(settings_file(self.workspace.root))

    def _end_session(self) -> None:
        """On quit, once the reply has stopped: delete a temporary or empty chat."""
        if self._current is not None:
            self._leave_later.discard(self._current)
            self._busy = False
            self._leave(self._current)
        for cid in self._leave_later:
            self._delete_quietly(cid)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        """Stop a running reply (its text is saved) and background work, close the stores.

        A workspace still opening is closed by its loader once open. Work that does not stop
        within a bounded wait finishes on its own, and the stores close after it (`shutdown`).
        """
        if not self._closed:
            self._closed = True
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
        if self._ready:
            if stopped:  # else a chat left behind is deleted at the next start
                self._end_session()
            try:
                self._save_layout()
            except (AssistantError, OSError) as exc:  # quitting still closes the stores
                log.warning("Could not save the window layout: %s", exc)
        if hasattr(self, "bridge"):
            self.bridge.disconnect_stores()
        if hasattr(self, "knowledge"):
            self.knowledge.stop()
        if stopped:
            self.workspace.close()
        else:
            log.warning("Background work is still running; the data closes when it is done")
            release_when_finished(self.thread_, self.workspace.close, jobs=True, keep=self.worker)


def _no_frames() -> bool:
    """Whether windows get no frame here (off-screen, or a platform without decorations)."""
    return QGuiApplication.platformName() in ("offscreen", "minimal", "minimalegl")


def _placeholder(text: str, min_width: int, parent: QWidget) -> QLabel:
    """A pane's stand-in while the workspace opens."""
    label = QLabel(f'<div align="center">{text}</div>', parent)  # centred without Qt.Alignment
    theme.set_muted(label)
    label.setMinimumWidth(min_width)
    return label


def _pane_button(text: str, tip: str, parent: QWidget) -> QPushButton:
    """A small checkable button that shows or hides a side pane."""
    button = QPushButton(text, parent)
    button.setCheckable(True)
    button.setChecked(True)
    button.setToolTip(tip)
    button.setAccessibleDescription(tip)
    button.setFlat(True)
    button.setMaximumWidth(button.fontMetrics().horizontalAdvance(text) + 24)
    return button


def _title_from(text: str) -> str:
    words = text.split()
    title = " ".join(words[:TITLE_WORDS])
    return title + ("…" if len(words) > TITLE_WORDS else "")
