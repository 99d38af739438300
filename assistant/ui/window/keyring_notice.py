"""The notice that this computer has no keyring, so an API key cannot be saved for the next run.

It shows over the chat at start until the user answers "Got it", which the settings remember
(`ui_state`; the key itself never goes to a file); closing it with ✕ hides it for this run only.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from assistant.errors import AssistantError
from assistant.paths import settings_file
from assistant.ui.chat.pane import ChatPane
from assistant.ui.notice_bar import NoticeBar

if TYPE_CHECKING:
    from assistant.workspace import Workspace

log = logging.getLogger(__name__)

STATE_KEY = "keyring_notice"
ACKNOWLEDGED = "acknowledged"
TITLE = "Your API key can't be saved on this computer"
TEXT = (
    "No system keyring (such as GNOME Keyring or KWallet) is available, so a key you enter in "
    "Settings is kept only until you quit, and asked for again next time; it is never written "
    "to a file. To keep it, install or unlock a keyring and enter the key again, or set the "
    "OPENAI_API_KEY environment variable."
)


def keyring_notice(workspace: Workspace, pane: ChatPane) -> NoticeBar | None:
    """The notice, shown over the chat in `pane`, if the keyring is missing and the user has not
    acknowledged it; else None."""
    if workspace.settings.ui_state.get(STATE_KEY) == ACKNOWLEDGED:
        return None
    if not workspace.credentials.keyring_missing():
        return None
    bar = NoticeBar(pane)
    bar.setAccessibleName("Keyring notice")
    bar.action_button.setObjectName("keyringNoticeAcknowledge")
    bar.show_notice(TEXT, "Got it", lambda: acknowledge(workspace), timeout_ms=0, title=TITLE)
    pane.add_notice(bar)
    return bar


def acknowledge(workspace: Workspace) -> None:
    """Remember that the user has read the notice: it is not shown at the next start."""
    workspace.settings.ui_state[STATE_KEY] = ACKNOWLEDGED
    try:
        workspace.settings.save(settings_file(workspace.root))
    except (AssistantError, OSError) as exc:  # kept in memory: saved again when the app closes
        log.warning("Could not save the settings: %s", exc)
