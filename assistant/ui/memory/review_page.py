"""The sidebar's Review tab: memories the assistant proposed while the policy is "ask first".

Each can be accepted as written, edited then accepted, or rejected (it is not proposed again),
one by one or all at once. The work runs in the background; what it changes comes back through
the bridge like any other change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from assistant.memory import MemoryItem, Proposal, Reviewed
from assistant.memory.resembling import RESEMBLES
from assistant.timestamps import relative_time
from assistant.ui.jobs import run_job
from assistant.ui.memory.model import GLOBAL_LABEL
from assistant.ui.notice_bar import NoticeBar
from assistant.ui.theme import set_muted
from assistant.ui.wording import count, shorten
from assistant.workspace import Workspace

ProposalRole = Qt.ItemDataRole.UserRole + 1
EMPTY_ASKING = "Nothing waits for review. What Assistant wants to remember appears here first."
EMPTY_NOT_ASKING = (
    "Nothing waits for review. To see what Assistant wants to remember before it is kept, "
    "choose Ask me first in the Remembering page of Settings."
)
_BY = {
    "curator": "found in the conversation",
    "tool": "the assistant asked to remember it",
    "mcp": "sent by another app (MCP)",
    "reflection": "an insight from your memories",
}


def caption(proposal: Proposal, old_text: str | None, scope: str | None = None) -> str:
    """The grey line under a proposal: why it waits if it resembles a forgotten fact, where it
    would be kept (`scope`: "Global" or a project's name; None without projects), its kind,
    who proposed it, when, what it changes."""
    parts = [proposal.kind, _BY.get(proposal.by, proposal.by), relative_time(proposal.proposed_at)]
    if scope is not None:
        parts.insert(0, scope)
    if proposal.resembles_forgotten:
        parts.insert(0, RESEMBLES)
    if old_text is not None and proposal.change == "replace":
        parts.append(f"replaces “{shorten(old_text, 60)}”")
    elif old_text is not None and proposal.change == "refine":
        parts.append(f"refines “{shorten(old_text, 60)}”")
    return " · ".join(parts)


class ReviewPage(QWidget):
    """The proposals, an editor for the one selected, and the buttons that decide."""

    count_changed = Signal(int)  # how many proposals wait
    done = Signal()  # the last proposal was decided on here: typing goes on elsewhere

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewPage")
        self._workspace = workspace
        self._review = workspace.review()
        self._busy = False

        self.intro = QLabel(self)
        self.intro.setObjectName("reviewEmpty")
        self.intro.setWordWrap(True)
        set_muted(self.intro)
        self.list = QListWidget(self)
        self.list.setObjectName("reviewList")
        self.list.setAccessibleName("Memories waiting for review")
        self.list.setAccessibleDescription(
            "What Assistant proposes to remember; select one or more to accept or reject them"
        )
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setWordWrap(True)
        self.list.setSpacing(3)
        self.list.itemSelectionChanged.connect(self._on_selection)
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("reviewText")
        self.editor.setAccessibleName("Text of the memory to accept")
        self.editor.setAccessibleDescription("Edit the selected memory before you accept it")
        self.editor.setPlaceholderText("Select a memory to edit it before you accept it")
        self.editor.setTabChangesFocus(True)
        self.editor.setFixedHeight(self.editor.fontMetrics().lineSpacing() * 3 + 12)
        self.notice = NoticeBar(self)

        button = self._button
        self.accept_button = button(
            "&Accept", "reviewAcceptButton", self.accept_selected, "Keep the selected memories"
        )
        self.reject_button = button(
            "&Reject", "reviewRejectButton", self.reject_selected, "Turn them down for good"
        )
        self.accept_all_button = button(
            "Accept All", "reviewAcceptAllButton", self.accept_all, "Keep every one, as written"
        )
        self.reject_all_button = button(
            "Reject All", "reviewRejectAllButton", self.reject_all, "Turn every one down"
        )
        one = QHBoxLayout()
        one.addWidget(self.accept_button)
        one.addWidget(self.reject_button)
        one.addStretch(1)
        every = QHBoxLayout()
        every.addWidget(self.accept_all_button)
        every.addWidget(self.reject_all_button)
        every.addStretch(1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 6)
        layout.setSpacing(6)
        # The intro takes the list's room when there is nothing to review; the notice keeps to
        # its text (it grew into the room, and moved the buttons, after the last was accepted).
        # The notice sits above the list: showing it never moves the buttons under a click.
        self.notice.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout.addWidget(self.notice)
        layout.addWidget(self.intro, 1, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.editor)
        layout.addLayout(one)
        layout.addLayout(every)
        self.refresh()

    def _button(self, text: str, name: str, slot: Callable[[], object], tip: str) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    # -- showing ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Show the proposals waiting now, keeping the selection and an edit in progress."""
        pending = self._workspace.inbox.pending()
        chosen = set(self.selected_ids())
        editing = self.editor.toPlainText() if len(chosen) == 1 else None
        with_edit = next(iter(chosen)) if editing is not None else None
        self.list.blockSignals(True)
        self.list.clear()
        for proposal in pending:
            old = self._workspace.memory.get(proposal.target) if proposal.target else None
            where = self._scope_of(proposal, old)
            item = QListWidgetItem(f"{proposal.text}\n{caption(proposal, old and old.text, where)}")
            item.setData(ProposalRole, proposal)
            item.setToolTip(proposal.text)
            self.list.addItem(item)
            item.setSelected(proposal.id in chosen)
        self.list.blockSignals(False)
        self._on_selection(keep_text=editing if with_edit in {p.id for p in pending} else None)
        asking = self._workspace.settings.memory_policy == "ask"
        self.intro.setText("" if pending else (EMPTY_ASKING if asking else EMPTY_NOT_ASKING))
        self.intro.setVisible(not pending)
        self.list.setVisible(bool(pending))
        self.editor.setVisible(bool(pending))
        for button in (self.accept_all_button, self.reject_all_button):
            button.setEnabled(bool(pending) and not self._busy)
        self.count_changed.emit(len(pending))

    def _scope_of(self, proposal: Proposal, old: MemoryItem | None) -> str | None:
        """Where accepting `proposal` keeps the memory: "Global" or its project's name (a
        change to a memory keeps that memory's scope); None while there are no projects."""
        projects = self._workspace.projects
        if not projects.all():
            return None
        scope = old.project if old is not None and proposal.change != "add" else proposal.project
        if scope is None:
            return GLOBAL_LABEL
        project = projects.get(scope)
        return project.name if project is not None else "A deleted project"

    def selected(self) -> list[Proposal]:
        """The proposals selected, in the order they wait."""
        return [
            item.data(ProposalRole)
            for item in (self.list.item(n) for n in range(self.list.count()))
            if item.isSelected()
        ]

    def selected_ids(self) -> list[str]:
        """The ids of the proposals selected."""
        return [p.id for p in self.selected()]

    def _on_selection(self, keep_text: str | None = None) -> None:
        chosen = self.selected()
        one = chosen[0] if len(chosen) == 1 else None
        self.editor.setEnabled(one is not None)
        if one is None:
            self.editor.clear()
        elif keep_text is None:
            self.editor.setPlainText(one.text)
        else:
            self.editor.setPlainText(keep_text)
        for button in (self.accept_button, self.reject_button):
            button.setEnabled(bool(chosen) and not self._busy)
        self.accept_button.setText(f"&Accept {len(chosen)}" if len(chosen) > 1 else "&Accept")
        self.reject_button.setText(f"&Reject {len(chosen)}" if len(chosen) > 1 else "&Reject")

    # -- deciding -----------------------------------------------------------------------------

    def accept_selected(self) -> None:
        """Keep the selected proposals; a single one with the text as edited."""
        chosen = self.selected_ids()
        edited: dict[str, str] = {}
        if len(chosen) == 1:
            edited[chosen[0]] = self.editor.toPlainText()
        self._accept(chosen, edited)

    def reject_selected(self) -> None:
        """Turn the selected proposals down."""
        self._reject(self.selected_ids())

    def accept_all(self) -> None:
        """Keep every proposal as written."""
        self._accept([p.id for p in self._workspace.inbox.pending()], {})

    def reject_all(self) -> None:
        """Turn every proposal down."""
        self._reject([p.id for p in self._workspace.inbox.pending()])

    def _accept(self, ids: Sequence[str], edited: dict[str, str]) -> None:
        if not ids or self._busy:
            return
        review = self._review
        self._run(lambda: review.accept(ids, edited), self._on_accepted)

    def _reject(self, ids: Sequence[str]) -> None:
        if not ids or self._busy:
            return
        review = self._review

        def done(rejected: int) -> None:
            self.notice.show_notice(f"Rejected {count(rejected, 'memory', 'memories')}.")

        self._run(lambda: review.reject(ids), done)

    def _run(self, work: Callable[[], object], on_done: Callable[..., None]) -> None:
        # The focus stays here: on a button being disabled Qt would move it on, into the chat.
        focused = QApplication.focusWidget()
        was_here = focused is not None and self.isAncestorOf(focused)
        if was_here:
            self.list.setFocus()
        self._set_busy(True)

        def finished(result: object) -> None:
            self._set_busy(False)
            on_done(result)
            if was_here:
                self._focus_next()

        def failed(message: str) -> None:
            self._set_busy(False)
            self.notice.show_notice(f"Could not review: {message}")

        run_job(lambda _p: work(), on_done=finished, on_error=failed)

    def _on_accepted(self, done: Reviewed) -> None:
        kept = count(len(done.edits), "memory", "memories")
        refused = "".join(f" Not kept: “{shorten(p.text, 50)}” ({why})." for p, why in done.refused)
        self.notice.show_notice(f"Kept {kept}.{refused}")

    def _focus_next(self) -> None:
        """On the proposal that is now first, as a mail app after a message is filed."""
        if self.list.count() == 0:
            self.done.emit()
            return
        if not self.selected():
            self.list.setCurrentRow(0)
        self.list.setFocus()

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.refresh()
