"""The notice of the damage found on disk at start: each problem in words, what was kept aside.

It stays over the chat until dismissed; its text and its ✕ are reached with Tab. A parser's
own message ("Expecting value: line 1 column 2") is kept as a smaller detail under the problem.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt

from assistant.fileio import DETAIL
from assistant.ui.chat.pane import ChatPane
from assistant.ui.notice_bar import NoticeBar
from assistant.ui.wording import count


def problem_html(warning: str) -> str:
    """One problem as a list item: the words, then any detail in small type."""
    words, _, detail = warning.partition(DETAIL)
    item = html.escape(words)
    if detail:
        item += f"<br><small>Detail: {html.escape(detail)}</small>"
    return f"<li>{item}</li>"


def start_problems_notice(warnings: list[str], root: Path, pane: ChatPane) -> NoticeBar | None:
    """The notice listing `warnings` over the chat in `pane` (None without any)."""
    if not warnings:
        return None
    bar = NoticeBar(pane)
    bar.setAccessibleName("Problems found at start")
    title = f"{count(len(warnings), 'problem', 'problems')} found in your data at start"
    bar.show_notice("", timeout_ms=0, title=title)
    items = "".join(problem_html(w) for w in warnings)
    where = html.escape(str(root))
    bar.label.setText(
        f"<b>{html.escape(title)}</b><ul style='margin-left: 12px'>{items}</ul>"
        f"Nothing else was changed; the files named are in {where}."
    )
    bar.label.setAccessibleDescription(
        " ".join(w.replace(DETAIL, " Detail: ") for w in warnings) + f" The files are in {root}."
    )
    flags = Qt.TextInteractionFlag
    bar.label.setTextInteractionFlags(flags.TextSelectableByMouse | flags.TextSelectableByKeyboard)
    bar.label.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    pane.add_notice(bar)
    return bar
