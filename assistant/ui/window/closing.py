"""Closing the window's workspace: stop what `MainWindow.attach` started (reply, upkeep, jobs),
delete the chats left to go, save the layout (and the conversation shown) and the drafts, then
close the stores, at once or once the work still running has finished."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from assistant.errors import AssistantError
from assistant.ui.shutdown import release_when_finished, stop_thread
from assistant.ui.window.layout import save_layout

if TYPE_CHECKING:
    from assistant.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)

SHOWN_KEY = "conversation"  # in the settings' `ui_state`: the one shown at quit, opened at start


def detach(window: MainWindow, ready: bool) -> None:
    """Stop the window's background work, then close its workspace; `ready`: every pane was
    built on it (there are chats, a layout and drafts to see to)."""
    stopped = True
    if hasattr(window, "thread_"):
        window.worker.stop()
        stopped = stop_thread(window.thread_)
    # A temporary or empty chat shown (or left during its reply) goes, once nothing writes.
    leftovers = window.session.leftovers() if ready else []
    if ready:
        if stopped:
            for cid in leftovers:
                window.workspace.delete_quietly(cid)
        shown = window.session.conversation
        state = window.workspace.settings.ui_state
        if shown is None or shown.id in leftovers:
            state.pop(SHOWN_KEY, None)
        else:
            state[SHOWN_KEY] = shown.id
        try:
            save_layout(window)
            window.drafts.save_now()
        except (AssistantError, OSError) as exc:  # quitting still closes the stores
            log.warning("Could not save the window layout or drafts: %s", exc)
    if hasattr(window, "bridge"):
        window.bridge.disconnect_stores()
    if hasattr(window, "knowledge"):
        window.knowledge.stop()
    if stopped:
        window.workspace.close()
    else:
        log.warning("Background work is still running; the data closes when it is done")
        workspace = window.workspace

        def close_after_work() -> None:
            workspace.drop_leftover_chats(among=leftovers)
            workspace.close()

        release_when_finished(window.thread_, close_after_work, jobs=True, keep=window.worker)
