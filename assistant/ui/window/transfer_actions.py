"""The File and Edit menus' transfers: import a file or a folder, export conversations, export
or copy the conversation shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QWidget

from assistant.ui.window.menu import MainMenu

if TYPE_CHECKING:
    from assistant.workspace import Workspace

Say = Callable[[str, int], None]  # a status bar message, and how long it stays (ms)


def connect_transfers(
    window: QWidget,
    menu: MainMenu,
    workspace: Workspace,
    shown: Callable[[], str | None],
    say: Say,
    *,
    instructions_set: Callable[[], None],
) -> None:
    """Connect the menus' transfer actions; `shown()` is the id of the conversation shown, and
    `instructions_set()` is called when an import replaced the custom instructions."""

    def import_one() -> None:
        from assistant.ui.transfer.dialogs import import_file

        import_file(window, workspace, None, instructions_set)

    def import_folder() -> None:
        from assistant.ui.transfer.dialogs import import_folder as choose_and_import

        choose_and_import(window, workspace, instructions_set)

    def export_all() -> None:
        from assistant.ui.transfer.dialogs import export_conversations

        export_conversations(window, workspace, shown())

    def export_shown() -> None:
        from assistant.ui.transfer.conversation_export import export_conversation

        cid = shown()
        if cid is not None:
            export_conversation(
                window,
                workspace.conversations,
                cid,
                lambda path: say(f"Saved to {path}", 0),
                lambda name: workspace.attachments.tool_image(cid, name),
            )

    def copy_shown() -> None:
        from assistant.ui.transfer.conversation_export import copy_conversation

        cid = shown()
        if cid is not None:
            copy_conversation(workspace.conversations, cid)
            say("Conversation copied as Markdown", 3000)

    menu.import_.triggered.connect(import_one)
    menu.import_folder.triggered.connect(import_folder)
    menu.export.triggered.connect(export_all)
    menu.export_conversation.triggered.connect(export_shown)
    menu.copy_conversation.triggered.connect(copy_shown)
