"""The main window: conversations on the left, the chat in the centre, memory on the right.

The window opens in two steps so that it shows at once: first the frame (menus, splitter,
input, status bar: Qt and the settings only), then, once the workspace is open (off the GUI
thread: numpy, the stores, the keyring), the panes. So the modules behind the panes are
imported where the panes are built, not at the top of this one. The menus, the status bar and
the input box are modules of their own; this one wires them to the panes and the worker.
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QThread, QThreadPool, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QMoveEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QSplitter,
    QWidget,
)

from assistant import APP_NAME
from assistant.paths import drafts_file, settings_file
from assistant.settings import read_ui_state
from assistant.ui import focus_ring, theme
from assistant.ui.chat.pane import ChatPane
from assistant.ui.debounce import Debounced
from assistant.ui.shutdown import release_when_finished
from assistant.ui.transfer.drop import ImportDropFilter
from assistant.ui.window.closing import SHOWN_KEY, detach
from assistant.ui.window.help import show_about, show_shortcuts
from assistant.ui.window.keyring_notice import keyring_notice
from assistant.ui.window.layout import restore_layout
from assistant.ui.window.loader import WorkspaceLoader
from assistant.ui.window.menu import MainMenu
from assistant.ui.window.placement import Placement
from assistant.ui.window.side_panes import SidePane, SidePanes
from assistant.ui.window.start_problems import start_problems_notice
from assistant.ui.window.status_bar import StatusBar
from assistant.ui.window.transfer_actions import connect_transfers
from assistant.ui.window.welcome import welcome_panel

if TYPE_CHECKING:
    from assistant.memory import Conversation
    from assistant.ui.conversations.list_edit import ListEdit
    from assistant.workspace import Workspace

log = logging.getLogger(__name__)

LIST_REFRESH_MS = 250
PAINT_FIRST_MS = 15  # the frame paints before the loader thread competes for the interpreter
LIST_MIN_WIDTH = 200  # fits the "New Chat" and "Temporary Chat" buttons
SIDEBAR_MIN_WIDTH = 260
SIDEBAR_GIVES_DOWN_TO = 330  # its filters still show whole; narrower only when dragged
MIN_WIDTH = 640
MIN_HEIGHT = 420
# Below these window widths a pane folds away by itself (and comes back when there is room).
MEMORY_PANE_FOLDS_BELOW = 1000
LIST_PANE_FOLDS_BELOW = 760


class MainWindow(QMainWindow):
    """Top-level window; widget object names are a contract (see DESIGN.md).

    `MainWindow(workspace)` builds everything at once; `MainWindow()` then `open_workspace(root)`
    shows the frame first and fills the panes when the workspace is open (`ready`), or emits
    `open_failed` with the reason.
    """

    ready = Signal()
    open_failed = Signal(str)
    workspace: Workspace  # set by `attach`; nothing that uses it can be reached before
    _embed = Signal()
    _maintain = Signal()

    def __init__(self, workspace: Workspace | None = None) -> None:
        super().__init__()
        self.setWindowTitle(APP_NAME)
        self.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)
        self._attached = False  # the workspace is ours to close
        self._ready = False  # and every pane is built on it
        self._closed = False
        self._loader: WorkspaceLoader | None = None
        self._placement = Placement(self, self.minimumSize())

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
        self._connect_frame()
        self._import_drop = ImportDropFilter(self, self._import_dropped)
        self.status = StatusBar(self)
        self.setStatusBar(self.status)
        self.fit_to_screen()
        focus_ring.install()
        self.input.setFocus()
        if workspace is not None:
            restore_layout(self, workspace.settings.ui_state)
            workspace.drop_leftover_chats()  # as the loader does, off the GUI thread
            self.attach(workspace)

    def open_workspace(self, root: Path) -> None:
        """Lay the frame out as last time, then open `root` in the background and fill the panes."""
        restore_layout(self, read_ui_state(settings_file(root)))  # the workspace reports problems
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
        from assistant.ui.chat.session import ChatSession
        from assistant.ui.chat.view import ChatView
        from assistant.ui.conversations.pane import ConversationPane
        from assistant.ui.conversations.project_actions import connect_projects
        from assistant.ui.memory.sidebar import MemorySidebar

        self.workspace = workspace
        self._attached = True
        self.bridge = StoreBridge(workspace, self)
        self.conversations = ConversationPane(workspace.conversations, self, workspace.projects)
        self.conversations.setMinimumWidth(LIST_MIN_WIDTH)
        self.sidebar = MemorySidebar(workspace, self.bridge, self)
        self.sidebar.setMinimumWidth(SIDEBAR_MIN_WIDTH)
        self.chat = ChatView(self._memory_text, self.stack, tool_image=self._tool_image)
        self.memory_edits = MemoryEditLines(self.chat, workspace.memory, self)
        self.find_bar = FindBar(self.chat, self.chat_pane, before_find=self.chat.load_all)
        self.welcome = welcome_panel(self.open_settings, self.stack)
        self.chat_pane.fill(self.chat, self.welcome, above_chat=self.find_bar)
        layout = self.splitter.saveState()  # as restored, or as the user has just dragged it
        for index, pane in ((0, self.conversations), (2, self.sidebar)):
            placeholder = self.splitter.replaceWidget(index, pane)
            if placeholder is not None:
                placeholder.deleteLater()
        self.splitter.restoreState(layout)
        self.side_panes.apply(self.width())
        self._start_worker(workspace)
        self.session = ChatSession(
            self.worker, workspace.conversations, self.chat, self.memory_edits, self
        )
        self._start_reading(workspace)
        self._start_knowledge(workspace)
        self.chat_pane.model_bar.attach(workspace)
        workspace.mcp.start()  # the MCP servers start in a thread of their own
        QThreadPool.globalInstance().start(warm_up_highlighting)
        self._connect()
        self.projects = connect_projects(self, self.menu.projects_menu, workspace)
        for action in self.menu.workspace_actions:
            action.setEnabled(True)
        # Only now: standard keys load the Qt namespace (40 ms), which the frame does without.
        self.menu.install_shortcuts()
        self.send_button.setEnabled(True)
        self.composer.attach_button.setEnabled(True)
        self.statusBar().clearMessage()
        self._update_status()
        self._show_welcome_if_needed()
        self._open_first()
        drafts_problem = self.drafts.take_warning()
        self.start_problems = start_problems_notice(
            [*workspace.warnings, *([drafts_problem] if drafts_problem else [])],
            workspace.root,
            self.chat_pane,
        )
        self.keyring_notice = keyring_notice(workspace, self.chat_pane)
        self.input.setFocus()
        self._become_ready()

    def _become_ready(self) -> None:
        # What starting made lives on: full passes of the cycle collector (holding the GIL, so the
        # GUI) skip it (101 ms a pass while a knowledge folder was read). Once a process.
        if not gc.get_freeze_count():
            gc.freeze()
        self._ready = True
        self.ready.emit()

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

    def _build_chat(self) -> ChatPane:
        self.chat_pane = pane = ChatPane(self)
        self.stack = pane.stack
        self.temporary_banner = pane.temporary_banner
        self.composer = pane.composer
        self.input = self.composer.input
        self.send_button = self.composer.send_button
        self.stop_button = self.composer.stop_button
        self.list_toggle = pane.list_toggle
        self.memory_toggle = pane.memory_toggle
        return pane

    def _connect_frame(self) -> None:
        """What works before the workspace is open: quitting, panes, themes, help."""
        menu = self.menu
        menu.quit.triggered.connect(self.close)
        menu.about.triggered.connect(
            lambda: show_about(self, self.workspace.root if self._attached else None)
        )
        menu.shortcuts.triggered.connect(lambda: show_shortcuts(self, menu.shortcut_rows()))
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
                    2,
                    menu.show_memory,
                    self.memory_toggle,
                    MEMORY_PANE_FOLDS_BELOW,
                    "memory_pane",
                    gives_down_to=SIDEBAR_GIVES_DOWN_TO,
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
        self._embed.connect(self.worker.embed_missing)
        self._maintain.connect(self.worker.maintain)
        self.worker.upkeep_changed.connect(self.status.set_upkeep)
        self.worker.progress.connect(self._on_progress)
        self.thread_.start()
        self._maintain.emit()

    def _start_reading(self, workspace: Workspace) -> None:
        """The unsent messages of the conversations; the chat's reading width, and its text
        size as last chosen (kept when changed)."""
        from assistant.ui.chat.drafts import Drafts
        from assistant.ui.chat.reading import ReadingLayout

        self.drafts = Drafts(drafts_file(workspace.root), self.composer, self)
        self.reading = ReadingLayout(self.chat, self.chat.rendered, (self.input,), self)
        self.reading.remember_in(workspace.settings.ui_state)
        self.menu.text_larger.triggered.connect(lambda: self.reading.step(1))
        self.menu.text_smaller.triggered.connect(lambda: self.reading.step(-1))
        self.menu.text_reset.triggered.connect(lambda: self.reading.step(0))

    def _start_knowledge(self, workspace: Workspace) -> None:
        """Keep the knowledge folders' index up to date in the background."""
        from assistant.ui.knowledge.bridge import KnowledgeBridge

        self.knowledge = KnowledgeBridge(workspace.knowledge, self)
        self.knowledge.changed.connect(self.status.show_knowledge)
        workspace.projects.subscribe(lambda _project_id: self.knowledge.rescan())
        self.knowledge.start()

    def _connect(self) -> None:
        from assistant.ui.chat.sending import Sending
        from assistant.ui.knowledge.file_actions import FileActions

        menu = self.menu
        menu.new.triggered.connect(self._on_new)
        menu.new_temporary.triggered.connect(self._on_new_temporary)
        connect_transfers(
            self,
            menu,
            self.workspace,
            lambda: self.session.conversation_id,
            self.status.say,
            instructions_set=self.sidebar.refresh_instructions,
        )
        menu.settings.triggered.connect(self.open_settings)
        menu.instructions.triggered.connect(self.open_instructions)
        menu.knowledge.triggered.connect(self.open_knowledge)
        menu.attach.triggered.connect(self.composer.pick_files)
        menu.find.triggered.connect(self.find_bar.open_bar)
        menu.search.triggered.connect(self.search_conversations)
        menu.memory_timeline.triggered.connect(self.sidebar.show_timeline)
        menu.stop.triggered.connect(self.stop)
        menu.next_conversation.triggered.connect(lambda: self.conversations.select_next(1))
        menu.previous_conversation.triggered.connect(lambda: self.conversations.select_next(-1))
        self.conversations.selected.connect(self._show_conversation)
        self.conversations.new_chat.connect(self.session.hold_new)  # it holds, the worker saves
        self.session.saved_new.connect(self.conversations.on_saved)
        self.session.new_chat_lost.connect(self._on_new_chat_lost)
        # Rename, pin, archive, move and delete: shown at once, written by the worker.
        self.conversations.edit_requested.connect(self._on_list_edit)
        self.conversations.edit_requested.connect(self.worker.edit_list)
        self.worker.list_edited.connect(self.conversations.on_edited)
        self.session.asked.connect(self.conversations.model.asked)
        self.chat.copied.connect(lambda what: self.statusBar().showMessage(what, 3000))
        self.chat.copied.connect(lambda _what: self.input.setFocus())  # typing goes on there
        self.chat.acted.connect(self.input.setFocus)  # Retry, Accept...: not on a link redrawn
        self.sidebar.review.done.connect(self.input.setFocus)
        self.chat.memory_clicked.connect(self.sidebar.show_memory)
        self.chat.review_requested.connect(self.sidebar.show_review)
        self.files = FileActions(
            self, self.workspace, self.chat, self.session, self.status.add_notice
        )
        self.sidebar.source_requested.connect(self.show_message)
        self.sidebar.file_requested.connect(self.files.open_citation)
        session = self.session
        self.sending = Sending(
            self.chat_pane,
            session,
            self.chat,
            can_send=self._can_send,
            new_conversation=self.new_conversation,
            sent_file=self.workspace.attachments.attachment,
        )
        session.connection.connect(self.status.set_connection)
        session.notice.connect(self.status.add_notice)
        session.conversation_changed.connect(self.sidebar.set_conversation)
        session.conversation_changed.connect(self.drafts.show)
        session.unsent.connect(self.drafts.give_back)
        self.drafts.notice.connect(self.status.add_notice)
        self.chat_pane.model_bar.wire(session, self.worker, self.chat, self._update_status)
        self.bridge.conversation_written.connect(session.on_written)
        # Coalesce: a turn saves several messages, the list needs one refresh.
        self._refresh_list = Debounced(LIST_REFRESH_MS, self.conversations.refresh_later, self)
        session.listing_changed.connect(self._refresh_list.trigger)
        self.bridge.memory_changed.connect(lambda _change: self._update_status())
        self.bridge.notice.connect(self.status.add_notice)

    # -- conversations ---------------------------------------------------------------------------

    def _open_first(self) -> None:
        """At start: the new chat a message was begun in, else the conversation shown at quit
        (if it is still listed), else the list's first."""
        last = self.workspace.settings.ui_state.get(SHOWN_KEY)
        if self.drafts.has_new_chat_draft():
            self.new_conversation()
        elif last is not None and self.conversations.model.row_of(last) >= 0:
            self.conversations.select(last)
        else:
            self.conversations.select(self.conversations.first_id())  # as the list shows

    def new_conversation(self, temporary: bool = False) -> str:
        """Open an empty conversation (reusing one if there is one) and focus the input."""
        cid = self.conversations.new_conversation(temporary=temporary)
        self.input.setFocus()
        return cid

    def _on_new(self) -> None:
        self.new_conversation()

    def _on_new_temporary(self) -> None:
        self.new_conversation(temporary=True)

    def _on_new_chat_lost(self, conversation: Conversation, error: str, sent: str) -> None:
        """A new chat's file could not be made: its row goes, what was written in it is kept."""
        where = self.drafts.keep_lost(conversation, sent)
        self.conversations.drop_new(conversation.id)
        kept = f" What you wrote in it is {where}." if where else ""
        self.status.add_notice(f"The new chat could not be saved: {error}{kept}")

    def _on_list_edit(self, edit: ListEdit) -> None:
        """Conversations deleted while a reply is written in one: that reply stops."""
        if edit.deletes:
            self.session.stop_if_answering(edit.ids)

    def _show_conversation(self, conversation_id: str | None) -> None:
        self.composer.end_edit()
        conversation = self.session.open(conversation_id)
        self.temporary_banner.show_for(
            temporary=conversation is not None and conversation.temporary,
            do_not_remember=conversation is not None and conversation.do_not_remember,
        )
        self._show_welcome_if_needed()
        hit = None if conversation_id is None else self.conversations.content_hit(conversation_id)
        if hit is not None:  # found by what was said in it: open it there
            self.chat.scroll_to_message(hit)

    def show_message(self, conversation_id: str, message_id: str) -> None:
        """Open a conversation at a message (on the branch that holds it)."""
        self.conversations.select(conversation_id)
        if self.session.conversation_id == conversation_id:
            self.session.show_message(message_id)

    def search_conversations(self) -> None:
        """Ctrl+K: find a message in any conversation and open it there."""
        from assistant.ui.conversations.search import ChatSearchDialog

        dialog = ChatSearchDialog(self.workspace.conversations, self, self.workspace.knowledge)
        dialog.chosen.connect(self.show_message)
        dialog.file_chosen.connect(self.files.open_citation)
        dialog.exec()
        dialog.deleteLater()

    def _tool_image(self, name: str) -> Path | None:
        """An image a tool returned in the conversation shown, as the conversation keeps it."""
        shown = self.session.conversation_id
        return None if shown is None else self.workspace.attachments.tool_image(shown, name)

    def _memory_text(self, memory_id: str) -> str | None:
        item = self.workspace.memory.get(memory_id)
        return None if item is None or item.state == "forgotten" else item.text

    # -- sending ---------------------------------------------------------------------------------

    def send(self) -> None:
        """Send the input's text and files (a new version of a message while editing one)."""
        self.sending.send()

    def stop(self) -> None:
        """Cancel the reply being written (memory upkeep goes on)."""
        self.session.stop()

    def _can_send(self) -> bool:
        """Whether a model is set up; if not, show the way to set one up."""
        if self.workspace.is_configured():
            return True
        self._show_welcome_if_needed()
        self.open_settings()
        return False

    # -- settings, status ------------------------------------------------------------------------

    def open_settings(self) -> None:
        """Show the settings; on OK, apply them and re-embed if the model changed."""
        self._settings("")

    def _settings(self, page: str) -> None:
        from assistant.ui.chat.reading import STATE_KEY, parse_size
        from assistant.ui.settings.dialog import SettingsDialog

        dialog = SettingsDialog(self.workspace, self, self.knowledge)
        dialog.show_page(page)
        before = self.workspace.settings.to_json()
        if dialog.exec():
            after = self.workspace.settings.to_json()
            changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
            if changed - {"ui_state"} and not self.session.busy:  # the last answer is stale
                self.status.set_connection("", "")
            self.reading.set_size(parse_size(self.workspace.settings.ui_state.get(STATE_KEY)))
            self.set_theme(self.workspace.settings.ui_state.get("theme", "system"))
            self._update_status()
            self._show_welcome_if_needed()
            self.chat_pane.model_bar.refresh_models()
            self._embed.emit()

    def open_instructions(self) -> None:
        """Edit the custom instructions; once saved, show them in the sidebar."""
        from assistant.ui.settings.instructions import edit_instructions

        if edit_instructions(self.workspace, self):
            self.sidebar.refresh_instructions()

    def open_knowledge(self) -> None:
        """Show the knowledge folders, their rules, progress and files (a page of Settings)."""
        from assistant.ui.settings.knowledge_page import KNOWLEDGE_TITLE

        self._settings(KNOWLEDGE_TITLE)

    def set_theme(self, name: str, starting: bool = False) -> None:
        """Use theme `name` ("system", "light", "dark") now and from the next start."""
        theme.apply(name, outlines_later=starting)
        action = self.menu.theme_actions.get(name)
        if action is not None:
            action.setChecked(True)
        if self._attached:
            self.workspace.settings.ui_state["theme"] = name

    def _show_welcome_if_needed(self) -> None:
        shown = self.session.conversation
        empty = shown is None or not shown.messages
        show = not self.workspace.is_configured() and empty
        self.stack.setCurrentWidget(self.welcome if show else self.chat)

    def _update_status(self) -> None:
        self.status.show_workspace(self.workspace, self.chat_pane.model_bar.current_model())

    def _on_progress(self, what: str, done: int, total: int) -> None:
        self.status.set_progress(what, done, total)
        if total <= 0:
            self._update_status()

    def _import_dropped(self, path: Path) -> None:
        """An export dropped on the window: import it once the data is open."""
        if self.workspace is None or not self.menu.import_.isEnabled():
            return
        from assistant.ui.transfer.dialogs import import_file

        import_file(self, self.workspace, str(path), self.sidebar.refresh_instructions)

    def import_path(self, path: str) -> None:
        """Preview and import `path` (handed over by `assistant import`), once the data is open."""
        from assistant.ui.transfer.dialogs import import_file

        def start() -> None:
            import_file(self, self.workspace, path, self.sidebar.refresh_instructions)

        if self._ready:
            start()
        else:
            self.ready.connect(start)

    # -- layout and closing ----------------------------------------------------------------------

    def fit_to_screen(self, available: QRect | None = None) -> None:
        """Size the window for a first run: at most 90 % of the screen's free area, centred."""
        self._placement.fit(available)

    def keep_on_screen(self, available: QRect | None = None) -> None:
        """Shrink and move the window so that all of it is on the screen's free area."""
        self._placement.keep_on_screen(available)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        """Once shown, make sure all of the window is on the screen."""
        super().showEvent(event)
        self._placement.settle()

    def moveEvent(self, event: QMoveEvent) -> None:  # noqa: N802
        """Fit the window again once the window manager framed (and moved) it."""
        super().moveEvent(event)
        self._placement.settle()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        """Fold or unfold the side panes for the new width."""
        super().resizeEvent(event)
        if hasattr(self, "side_panes"):  # resized while the frame is being built
            self.side_panes.fit(event.size().width())

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
        detach(self, self._ready)


def _placeholder(text: str, min_width: int, parent: QWidget) -> QLabel:
    """A pane's stand-in while the workspace opens."""
    label = QLabel(f'<div align="center">{text}</div>', parent)  # centred without Qt.Alignment
    theme.set_muted(label)
    label.setMinimumWidth(min_width)
    return label
