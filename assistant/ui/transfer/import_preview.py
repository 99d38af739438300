"""The preview of an import: what an export holds, what cannot be read, what is already here,
and what to do (conflicts, projects, pinned memories, suggested memories, instructions, the
memory policy)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QLabel,
    QListWidget,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from assistant.instructions import NO_INSTRUCTIONS, Instructions
from assistant.memory_policy import AUTOMATIC, MemoryPolicy
from assistant.transfer import ConflictPolicy, ImportPlan, SuggestedMemory, counted
from assistant.ui.transfer.pinned_choice import PinnedChoice
from assistant.ui.transfer.project_choice import ProjectChoice
from assistant.ui.wording import shorten

MAX_LISTED_UNREADABLE = 50
PREVIEW_MIN_WIDTH = 560
MAX_LISTED_CONFLICTS = 50
SUGGESTION_CHARS = 90  # a suggested memory's check box shows its start


@dataclass(frozen=True)
class ImportPreview:
    """A parsed import and what of it is already here."""

    path: Path
    plan: ImportPlan
    conflicts: list[str]  # conversation ids
    memory_conflicts: list[str]
    project_conflicts: list[str] = field(default_factory=list)  # names of projects here too
    memories_forgotten: list[str] = field(default_factory=list)  # the user had them forgotten


class ImportPreviewDialog(QDialog):
    """What an export holds, what cannot be read, what is already here, and what to do."""

    def __init__(
        self,
        parent: QWidget | None,
        preview: ImportPreview,
        current: Instructions = NO_INSTRUCTIONS,
        policy: MemoryPolicy = AUTOMATIC,
    ) -> None:
        """`current`: the custom instructions the user has (the preview warns before replacing);
        `policy`: the user's memory policy, likewise."""
        super().__init__(parent)
        self.setObjectName("importPreviewDialog")
        self.setWindowTitle("Import")
        self.setMinimumWidth(PREVIEW_MIN_WIDTH)
        self.preview = preview
        self._current = current
        self._policy = policy
        layout = QVBoxLayout(self)
        self._add_summary(layout)
        self._add_unreadable(layout)
        self._add_suggestions(layout)
        self._add_policy_choice(layout)
        # Never imported: nothing to ask about them.
        here = set(preview.memory_conflicts) | set(preview.memories_forgotten)
        arriving = [m for m in preview.plan.memories if m.id not in here]
        self.pinned = PinnedChoice(arriving, self)
        layout.addWidget(self.pinned)
        self.pinned.setVisible(bool(self.pinned.boxes))
        self.project_choice: ProjectChoice | None = None
        if preview.project_conflicts:
            self.project_choice = ProjectChoice(preview.project_conflicts, self)
            layout.addWidget(self.project_choice)
        self._add_conflicts(layout)

    def _add_summary(self, layout: QVBoxLayout) -> None:
        preview, plan = self.preview, self.preview.plan
        file_label = QLabel(f"File: {preview.path.name}", self)
        file_label.setToolTip(str(preview.path))
        self.format_label = QLabel(f"Format: {plan.format_name}", self)
        self.format_label.setObjectName("importFormatLabel")
        counts = [
            counted(len(plan.conversations), "conversation"),
            counted(plan.message_count, "message"),
        ]
        if plan.format == "assistant":
            counts.append(counted(len(plan.memories), "memory", "memories"))
            if plan.projects:
                counts.append(counted(len(plan.projects), "project"))
        files = len(plan.source.members) if plan.source is not None else 1
        if files > 1:
            counts.append(f"from {files} files")
        self.counts_label = QLabel(", ".join(counts), self)
        self.counts_label.setObjectName("importCountsLabel")
        layout.addWidget(file_label)
        layout.addWidget(self.format_label)
        layout.addWidget(self.counts_label)
        for note in plan.notes:
            label = QLabel(note, self)
            label.setWordWrap(True)
            layout.addWidget(label)

    def _add_unreadable(self, layout: QVBoxLayout) -> None:
        plan = self.preview.plan
        self.unreadable_list = QListWidget(self)
        self.unreadable_list.setObjectName("importUnreadableList")
        if plan.unreadable:
            verb = "could not be read and will be left out"
            unreadable_label = QLabel(f"{counted(len(plan.unreadable), 'conversation')} {verb}:")
            unreadable_label.setObjectName("importUnreadableLabel")
            layout.addWidget(unreadable_label)
            self.unreadable_list.setWordWrap(True)
            for entry in plan.unreadable[:MAX_LISTED_UNREADABLE]:
                self.unreadable_list.addItem(f"{entry.name}: {entry.reason}")
            if len(plan.unreadable) > MAX_LISTED_UNREADABLE:
                more = len(plan.unreadable) - MAX_LISTED_UNREADABLE
                self.unreadable_list.addItem(f"… and {more} more")
            self.unreadable_list.setMaximumHeight(110)
            layout.addWidget(self.unreadable_list)
        else:
            self.unreadable_list.hide()

    def _add_suggestions(self, layout: QVBoxLayout) -> None:
        plan = self.preview.plan
        self.suggestion_checks: list[tuple[QCheckBox, SuggestedMemory]] = []
        if plan.suggested_memories:
            box = QGroupBox("Keep what you told ChatGPT about yourself as memories?", self)
            box.setObjectName("importSuggestions")
            box_layout = QVBoxLayout(box)
            for suggestion in plan.suggested_memories:
                check = QCheckBox(shorten(suggestion.text, SUGGESTION_CHARS), box)
                check.setObjectName("importSuggestionCheck")
                check.setToolTip(suggestion.text)
                box_layout.addWidget(check)
                self.suggestion_checks.append((check, suggestion))
            self._add_instructions_choice(box_layout)
            layout.addWidget(box)

    def _add_instructions_choice(self, layout: QVBoxLayout) -> None:
        """ "Use them as custom instructions instead", unticked; says so if it replaces some."""
        text = "Use them as your custom instructions instead"
        if not self._current.empty:
            text += " (replaces the ones you have)"
        self.instructions_check = QCheckBox(text, self)
        self.instructions_check.setObjectName("importAsInstructions")
        self.instructions_check.setToolTip(
            "Assistant follows custom instructions in every chat (Edit > Custom Instructions…)"
        )
        self.instructions_check.toggled.connect(self._on_instructions_toggled)
        layout.addWidget(self.instructions_check)

    def _add_policy_choice(self, layout: QVBoxLayout) -> None:
        """ "Use the export's memory policy", ticked where the user's is the default (as an
        export's instructions are taken where there are none); says so if it replaces one."""
        exported = self.preview.plan.memory_policy
        self.policy_check: QCheckBox | None = None
        if exported is None or exported == self._policy:
            return
        text = f"Use the export's memory policy: {exported.describe()}"
        at_default = self._policy == AUTOMATIC
        if not at_default:
            text += f" (replaces yours: {self._policy.describe()})"
        self.policy_check = QCheckBox(text, self)
        self.policy_check.setObjectName("importPolicyCheck")
        self.policy_check.setToolTip("What Assistant may remember (Settings > Remembering)")
        self.policy_check.setChecked(at_default)
        layout.addWidget(self.policy_check)

    def _on_instructions_toggled(self, instead: bool) -> None:
        for check, _ in self.suggestion_checks:
            if instead:
                check.setChecked(False)
            check.setEnabled(not instead)

    def _add_conflicts(self, layout: QVBoxLayout) -> None:
        preview, plan = self.preview, self.preview.plan
        self.conflicts_label = QLabel(self._conflict_text(), self)
        self.conflicts_label.setObjectName("importConflictsLabel")
        self.conflicts_label.setWordWrap(True)
        layout.addWidget(self.conflicts_label)
        self.conflict_list = QListWidget(self)
        self.conflict_list.setObjectName("importConflictList")
        titles = {c.id: c.title for c in plan.conversations}
        for cid in preview.conflicts[:MAX_LISTED_CONFLICTS]:
            self.conflict_list.addItem(titles[cid])
        if len(preview.conflicts) > MAX_LISTED_CONFLICTS:
            self.conflict_list.addItem(
                f"… and {len(preview.conflicts) - MAX_LISTED_CONFLICTS} more"
            )
        self.conflict_list.setVisible(bool(preview.conflicts))
        layout.addWidget(self.conflict_list)

        self.skip_radio = QRadioButton("Skip conversations that already exist", self)
        self.skip_radio.setObjectName("importSkipRadio")
        self.copy_radio = QRadioButton("Import them as copies", self)
        self.copy_radio.setObjectName("importCopyRadio")
        group = QButtonGroup(self)
        group.addButton(self.skip_radio)
        group.addButton(self.copy_radio)
        self.skip_radio.setChecked(True)
        has_conflicts = bool(preview.conflicts)  # memories are never copied: see below
        for radio in (self.skip_radio, self.copy_radio):
            radio.setVisible(has_conflicts)  # asked only when a conversation is here already
            layout.addWidget(radio)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.import_button = buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setObjectName("importButton")
        self.import_button.setDefault(True)
        self.import_button.setEnabled(plan.total > 0)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _conflict_text(self) -> str:
        forgotten = len(self.preview.memories_forgotten)
        said = self._here_text()
        if forgotten:
            said += f" {forgotten} you asked to forget: not imported."
        return said

    def _here_text(self) -> str:
        conflicts, memories = self.preview.conflicts, self.preview.memory_conflicts
        if not conflicts and not memories:
            return "Nothing in this file is here yet."
        parts = []
        if conflicts:
            verb = "is" if len(conflicts) == 1 else "are"
            parts.append(f"{counted(len(conflicts), 'conversation')} {verb} already here")
        if memories:
            verb = "is" if len(memories) == 1 else "are"
            parts.append(f"{counted(len(memories), 'memory', 'memories')} {verb} already here")
        return (
            " and ".join(parts)
            + ". Nothing is overwritten; a memory already here is never imported twice."
        )

    def policy(self) -> ConflictPolicy:
        """The chosen conflict policy."""
        return "copy" if self.copy_radio.isChecked() else "skip"

    def chosen_suggestions(self) -> tuple[SuggestedMemory, ...]:
        """The suggested memories the user ticked (none by default)."""
        return tuple(s for check, s in self.suggestion_checks if check.isChecked())

    def chosen_instructions(self) -> Instructions | None:
        """The export's custom instructions, if the user chose to use them (not by default)."""
        if not self.suggestion_checks or not self.instructions_check.isChecked():
            return None
        return self.preview.plan.suggested_instructions()

    def chosen_policy(self) -> MemoryPolicy | None:
        """The export's memory policy, if the user chose it (by default only where theirs is
        the default)."""
        if self.policy_check is None or not self.policy_check.isChecked():
            return None
        return self.preview.plan.memory_policy
