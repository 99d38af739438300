"""The menu bar: every command of the window as a QAction, with platform shortcuts.

The actions are made with the frame (no Qt namespace needed); `install_shortcuts()` gives them
their keys once the workspace is open. `MainWindow` connects them.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from assistant import APP_NAME
from assistant.ui.theme import THEMES

_Key = QKeySequence.StandardKey


class MainMenu:
    """The window's actions and menus."""

    def __init__(self, window: QMainWindow) -> None:
        def action(text: str, name: str, tip: str = "") -> QAction:
            made = QAction(text, window)
            made.setObjectName(name)
            if tip:
                made.setStatusTip(tip)
            return made

        self.new = action("&New Conversation", "actionNew", "Start a new conversation")
        self.new_temporary = action(
            "New &Temporary Chat",
            "actionNewTemporary",
            "A chat that is not remembered and is deleted when you leave it",
        )
        self.import_ = action("&Import…", "actionImport", "Import conversations and memories")
        self.import_folder = action(
            "Import &Folder…", "actionImportFolder", "Import an unpacked ChatGPT or Claude export"
        )
        self.import_folder.setToolTip("Import an unpacked ChatGPT or Claude export")
        self.export = action("&Export…", "actionExport", "Export conversations and memories")
        self.export_conversation = action(
            "Export This &Conversation…",
            "actionExportConversation",
            "Save this conversation as Markdown, a web page or PDF",
        )
        self.copy_conversation = action(
            "&Copy Conversation",
            "actionCopyConversation",
            "Copy this conversation as Markdown",
        )
        self.attach = action("&Attach Files…", "actionAttach", "Send files with the message")
        self.quit = action("&Quit", "actionQuit")
        self.find = action("&Find in Conversation…", "actionFind", "Find text in this chat")
        self.search = action(
            "&Search All Conversations…", "actionSearch", "Find a message in any conversation"
        )
        self.settings = action("&Settings…", "actionSettings", "Connect a model, memory options")
        self.instructions = action(
            "Custom &Instructions…",
            "actionInstructions",
            "What Assistant should know about you, and how it should answer",
        )
        self.knowledge = action(
            "&Knowledge Folders…", "actionKnowledge", "Folders of files Assistant can search"
        )
        self.focus_input = action("Focus the &Message Box", "actionFocusInput")
        self.stop = action("S&top the Reply", "actionStop")
        self.next_conversation = action("&Next Conversation", "actionNextConversation")
        self.previous_conversation = action("&Previous Conversation", "actionPreviousConversation")
        self.show_conversations = action("&Conversations Pane", "actionShowConversations")
        self.show_memory = action("&Memory Pane", "actionShowMemory")
        self.memory_timeline = action(
            "Memory &Timeline", "actionTimeline", "What Assistant learned, changed and forgot"
        )
        self.text_larger = action("&Larger", "actionTextLarger", "Larger text in the chat")
        self.text_smaller = action("&Smaller", "actionTextSmaller", "Smaller text in the chat")
        self.text_reset = action("&Default Size", "actionTextReset", "The chat's usual text size")
        for toggle in (self.show_conversations, self.show_memory):
            toggle.setCheckable(True)
            toggle.setChecked(True)
        self.themes = QActionGroup(window)
        self.theme_actions: dict[str, QAction] = {}
        for key, label in THEMES.items():
            choice = action(label, f"actionTheme{label}")
            choice.setCheckable(True)
            choice.setData(key)
            self.themes.addAction(choice)
            self.theme_actions[key] = choice
        self.shortcuts = action("&Keyboard Shortcuts", "actionShortcuts")
        self.about = action(f"&About {APP_NAME}", "actionAbout")
        self._menus(window)
        self.workspace_actions = [
            self.new,
            self.new_temporary,
            self.attach,
            self.import_,
            self.import_folder,
            self.export,
            self.export_conversation,
            self.copy_conversation,
            self.find,
            self.search,
            self.settings,
            self.instructions,
            self.knowledge,
            self.next_conversation,
            self.previous_conversation,
            self.stop,
            self.memory_timeline,
            self.text_larger,
            self.text_smaller,
            self.text_reset,
        ]
        for needs_data in self.workspace_actions:
            needs_data.setEnabled(False)

    def _menus(self, window: QMainWindow) -> None:
        bar = window.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.new, self.new_temporary, self.attach])
        file_menu.addSeparator()
        file_menu.addActions([self.import_, self.import_folder, self.export])
        file_menu.addAction(self.export_conversation)
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.copy_conversation)
        edit_menu.addSeparator()
        edit_menu.addActions([self.find, self.search])
        edit_menu.addSeparator()
        edit_menu.addActions([self.settings, self.instructions, self.knowledge])
        self.projects_menu = bar.addMenu("&Projects")  # filled once the workspace is open
        self.projects_menu.setObjectName("projectsMenu")
        view_menu = bar.addMenu("&View")
        view_menu.addActions([self.show_conversations, self.show_memory, self.memory_timeline])
        view_menu.addSeparator()
        size_menu = QMenu("Text &Size", view_menu)
        size_menu.addActions([self.text_larger, self.text_smaller, self.text_reset])
        view_menu.addMenu(size_menu)
        theme_menu = QMenu("&Theme", view_menu)
        theme_menu.addActions(list(self.theme_actions.values()))
        view_menu.addMenu(theme_menu)
        go_menu = bar.addMenu("&Go")
        go_menu.addActions(
            [self.next_conversation, self.previous_conversation, self.focus_input, self.stop]
        )
        help_menu = bar.addMenu("&Help")
        help_menu.addActions([self.shortcuts, self.about])

    def install_shortcuts(self) -> None:
        """Give the actions their keys: the platform's standard ones where Qt has one."""
        keys: dict[QAction, list[QKeySequence]] = {
            self.new: [QKeySequence(_Key.New)],
            self.new_temporary: [QKeySequence("Ctrl+Shift+N")],
            self.quit: [QKeySequence(_Key.Quit)],
            self.find: [QKeySequence(_Key.Find)],
            self.search: [QKeySequence("Ctrl+K")],
            # Linux desktops have no standard Preferences key; Ctrl+, is what apps use there.
            self.settings: [QKeySequence(_Key.Preferences), QKeySequence("Ctrl+,")],
            self.focus_input: [QKeySequence("Shift+Esc")],
            self.stop: [QKeySequence("Ctrl+.")],
            self.next_conversation: [QKeySequence("Ctrl+PgDown"), QKeySequence(_Key.NextChild)],
            # X11 sends Ctrl+Shift+Tab as Backtab with Shift, which "Ctrl+Shift+Backtab" (Qt's
            # PreviousChild) does not always match: name the keys the user presses as well.
            self.previous_conversation: [
                QKeySequence("Ctrl+PgUp"),
                QKeySequence("Ctrl+Shift+Tab"),
                QKeySequence(_Key.PreviousChild),
            ],
            self.show_conversations: [QKeySequence("Ctrl+Shift+L")],
            self.show_memory: [QKeySequence("Ctrl+Shift+M")],
            self.shortcuts: [QKeySequence(_Key.HelpContents)],
            self.copy_conversation: [QKeySequence("Ctrl+Shift+C")],
            # Ctrl+= is Ctrl++ without Shift on most keyboards.
            self.text_larger: [QKeySequence(_Key.ZoomIn), QKeySequence("Ctrl+=")],
            self.text_smaller: [QKeySequence(_Key.ZoomOut)],
            self.text_reset: [QKeySequence("Ctrl+0")],
            self.attach: [QKeySequence("Ctrl+Shift+A")],
        }
        for target, sequences in keys.items():
            unique = list(dict.fromkeys(s for s in sequences if not s.isEmpty()))
            target.setShortcuts(unique)

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """(command, keys) for every action with a shortcut, for Help > Keyboard Shortcuts."""
        rows = []
        for target in (
            self.new,
            self.new_temporary,
            self.attach,
            self.find,
            self.search,
            self.copy_conversation,
            self.next_conversation,
            self.previous_conversation,
            self.focus_input,
            self.stop,
            self.show_conversations,
            self.show_memory,
            self.text_larger,
            self.text_smaller,
            self.text_reset,
            self.settings,
            self.shortcuts,
            self.quit,
        ):
            names = (s.toString(QKeySequence.SequenceFormat.NativeText) for s in target.shortcuts())
            keys = ", ".join(n for n in names if "Backtab" not in n)  # Qt's name, not a key's
            if keys:
                rows.append((target.text().replace("&", "").rstrip("…"), keys))
        undo = QKeySequence(QKeySequence.StandardKey.Undo).toString(
            QKeySequence.SequenceFormat.NativeText
        )
        rows += [
            ("Send the message", "Enter"),
            ("New line in the message", "Shift+Enter"),
            ("Stop the reply (in the message box)", "Esc"),
            ("Rename / delete the selected conversation", "F2 / Del"),
            (
                "Pin / archive the selected conversations (in the list)",
                "Ctrl+Shift+P / Ctrl+Shift+E",
            ),
            ("New project / its instructions and settings", "Ctrl+Alt+N / Ctrl+Alt+I"),
            ("Move the selected conversations to a project", "Ctrl+Alt+M"),
            ("Forget / undo forgetting the selected memory (in the memory list)", f"Del / {undo}"),
        ]
        return rows
