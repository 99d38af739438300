"""Export and import dialogs: choose what and where, preview an import, run it in the background.

The file dialogs and message boxes go through the module-level hooks `get_save_file_name`,
`get_open_file_name`, `get_existing_directory`, `show_error` and `show_info`, which tests
replace. Reading an import shows its progress from the first byte and can be cancelled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QLabel,
    QMainWindow,
    QMessageBox,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from assistant.errors import AssistantError
from assistant.instructions import Instructions
from assistant.memory_policy import MemoryPolicy
from assistant.sizes import KB
from assistant.transfer import (
    ImportPlan,
    ImportResult,
    Stores,
    apply_import,
    counted,
    export_data,
    export_summary,
    load_import,
    write_export,
)
from assistant.ui import file_places
from assistant.ui.jobs import Progress, run_job
from assistant.ui.transfer.import_preview import (
    MAX_LISTED_UNREADABLE,
    ImportPreview,
    ImportPreviewDialog,
)
from assistant.ui.transfer.import_progress import ImportProgress, Phases, show_result
from assistant.ui.transfer.import_turns import ImportTurns
from assistant.workspace import Workspace

JSON_FILTER = "JSON files (*.json);;All files (*)"
IMPORT_FILTER = (
    "ChatGPT export (*.zip *.json);;Claude or Assistant export (*.zip *.json);;All files (*)"
)
STATUS_MILLISECONDS = 10_000

# -- hooks -------------------------------------------------------------------------------------


def get_save_file_name(parent: QWidget, caption: str, path: str, filters: str) -> str:
    """Ask where to save; '' when cancelled."""
    name, _ = QFileDialog.getSaveFileName(parent, caption, path, filters)
    return name


def get_open_file_name(parent: QWidget, caption: str, directory: str, filters: str) -> str:
    """Ask which file to open; '' when cancelled."""
    name, _ = QFileDialog.getOpenFileName(parent, caption, directory, filters)
    return name


def get_existing_directory(parent: QWidget, caption: str, directory: str) -> str:
    """Ask which folder to open; '' when cancelled."""
    return QFileDialog.getExistingDirectory(parent, caption, directory)


def show_error(parent: QWidget, title: str, text: str) -> None:
    """Tell the user something failed."""
    QMessageBox.warning(parent, title, text)


def show_info(parent: QWidget, title: str, text: str) -> None:
    """Report a result: in the main window's status bar, else in a message box."""
    window = parent.window()
    if isinstance(window, QMainWindow):
        window.statusBar().showMessage(text, STATUS_MILLISECONDS)
    else:
        QMessageBox.information(parent, title, text)


# -- export ------------------------------------------------------------------------------------


class ExportDialog(QDialog):
    """What to export: the current conversation or all, with or without memories."""

    def __init__(self, parent: QWidget | None, has_current: bool) -> None:
        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle("Export conversations")
        self.setMinimumWidth(420)  # its title shows whole
        layout = QVBoxLayout(self)
        scope = QGroupBox("Export", self)
        scope_layout = QVBoxLayout(scope)
        self.current_radio = QRadioButton("Current conversation", scope)
        self.current_radio.setObjectName("exportCurrentRadio")
        self.current_radio.setEnabled(has_current)
        self.all_radio = QRadioButton("All conversations", scope)
        self.all_radio.setObjectName("exportAllRadio")
        (self.current_radio if has_current else self.all_radio).setChecked(True)
        scope_layout.addWidget(self.current_radio)
        scope_layout.addWidget(self.all_radio)
        self.memories_check = QCheckBox("Include long-term memories", self)
        self.memories_check.setObjectName("exportMemoriesCheck")
        self.attachments_check = QCheckBox(
            "Include attached files and images from tools (a larger file)", self
        )
        self.attachments_check.setObjectName("exportAttachmentsCheck")
        self.attachments_check.setToolTip(
            "The files attached to messages go into the export; without them, only their names"
        )
        note = QLabel("The file holds no API key or other secrets.", self)
        note.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(scope)
        layout.addWidget(self.memories_check)
        layout.addWidget(self.attachments_check)
        layout.addWidget(note)
        layout.addWidget(buttons)

    def all_conversations(self) -> bool:
        """Whether every conversation is to be exported."""
        return self.all_radio.isChecked()

    def include_memories(self) -> bool:
        """Whether long-term memories go into the file."""
        return self.memories_check.isChecked()

    def include_attachments(self) -> bool:
        """Whether the files attached to messages go into the file."""
        return self.attachments_check.isChecked()


def export_conversations(
    parent: QWidget, workspace: Workspace, current_conversation_id: str | None
) -> None:
    """Ask what to export and where, then write the file in the background (the files
    attached to messages go in if the user asks)."""
    _ExportFlow(parent, workspace, current_conversation_id).start()


def default_export_name(today: date | None = None) -> str:
    """`assistant-export-YYYY-MM-DD.json`."""
    return f"assistant-export-{(today or date.today()).isoformat()}.json"


class _ExportFlow(QObject):
    """One export: the options dialog, the file dialog, the job and its report."""

    def __init__(self, parent: QWidget, workspace: Workspace, current_id: str | None) -> None:
        super().__init__(parent)
        self._parent = parent
        self._workspace = workspace
        self._current_id = current_id
        self._path: Path | None = None

    def start(self) -> None:
        dialog = ExportDialog(self._parent, self._current_id is not None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda result: self._on_options(dialog, result))
        dialog.open()

    def _on_options(self, dialog: ExportDialog, result: int) -> None:
        if result != QDialog.DialogCode.Accepted:
            self.deleteLater()
            return
        ids = None
        if not dialog.all_conversations() and self._current_id is not None:
            ids = [self._current_id]
        memories = dialog.include_memories()
        attached = dialog.include_attachments()
        name = get_save_file_name(
            self._parent,
            "Export conversations",
            str(file_places.start_folder("export") / default_export_name()),
            JSON_FILTER,
        )
        if not name:
            self.deleteLater()
            return
        file_places.remember("export", name)
        path = Path(name)
        if not path.suffix:
            path = path.with_suffix(".json")
        self._path = path
        workspace = self._workspace

        def export(_: Progress) -> str:
            data = export_data(
                workspace,
                ids,
                include_memories=memories,
                instructions=workspace.settings.instructions(),
                attachments=workspace.attachments if attached else None,
                memory_policy=workspace.settings.policy(),
            )
            write_export(path, data)
            return export_summary(data, path.name)

        run_job(export, on_done=self._on_done, on_error=self._on_error)

    def _on_done(self, summary: object) -> None:
        show_info(self._parent, "Export finished", str(summary))
        self.deleteLater()

    def _on_error(self, message: str) -> None:
        show_error(self._parent, "Export failed", f"The export could not be written.\n\n{message}")
        self.deleteLater()


# -- import ------------------------------------------------------------------------------------


def prepare_import(
    path: Path,
    workspace: Stores,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> ImportPreview:
    """Read and validate an export and find its conflicts (off the GUI thread)."""
    plan = load_import(path, progress, cancel)
    return ImportPreview(
        path,
        plan,
        plan.conflicts(workspace),
        plan.memory_conflicts(workspace),
        plan.project_conflicts(workspace),
        plan.memories_forgotten(workspace),
    )


def import_file(
    parent: QWidget,
    workspace: Workspace,
    path: str | None = None,
    instructions_set: Callable[[], None] | None = None,
) -> None:
    """Pick an export (unless given), preview it, and import it in the background.

    `instructions_set` is called when the import replaced the custom instructions.
    """
    if path is None:
        start = str(file_places.start_folder("import"))
        path = get_open_file_name(parent, "Import", start, IMPORT_FILTER)
        if not path:
            return
        file_places.remember("import", path)
    _ImportFlow(parent, workspace, Path(path), instructions_set).start()


def import_folder(
    parent: QWidget, workspace: Workspace, instructions_set: Callable[[], None] | None = None
) -> None:
    """Pick an unpacked export folder, preview it, and import it in the background."""
    start = str(file_places.start_folder("import"))
    path = get_existing_directory(parent, "Import an export folder", start)
    if path:
        file_places.remember("import", path)
        _ImportFlow(parent, workspace, Path(path), instructions_set).start()


class _ImportFlow(QObject):
    """One import: read with progress, preview, apply with progress, report; each cancellable."""

    def __init__(
        self,
        parent: QWidget,
        workspace: Workspace,
        path: Path,
        instructions_set: Callable[[], None] | None,
    ) -> None:
        super().__init__(parent)
        self._parent = parent
        self._workspace = workspace
        self._path = path
        self._instructions_set = instructions_set
        self._instructions_note = ""
        self._progress: ImportProgress | None = None
        self._turns = ImportTurns.of(parent)
        self._cancel = threading.Event()

    def start(self) -> None:
        """Read, preview and import, when the imports before this one have ended."""
        self._turns.take(self._begin)

    def _begin(self) -> None:
        path, workspace, cancel = self._path, self._workspace, self._cancel
        self._show_progress(f"Reading {path.name}…", "importReadProgressDialog")

        def read(report: Progress) -> ImportPreview:
            return prepare_import(path, workspace, _in_kb(report), cancel.is_set)

        run_job(
            read,
            on_done=self._on_parsed,
            on_error=self._on_parse_failed,
            on_progress=self._on_progress,
        )

    def _show_progress(self, text: str, name: str) -> None:
        self._progress = ImportProgress(self._parent, text, name, self._cancel.set)

    def _on_parse_failed(self, message: str) -> None:
        self._close_progress()
        if not self._cancel.is_set():
            if self._path.name not in message:  # the readers' errors name the file
                message = f"{self._path.name} can't be imported: {message}"
            show_error(self._parent, "Import failed", f"{message}\n\nNothing was changed.")
        self._end()

    def _on_parsed(self, preview: ImportPreview) -> None:
        self._close_progress()
        if self._cancel.is_set():
            self._end()
            return
        settings = self._workspace.settings
        dialog = ImportPreviewDialog(
            self._parent, preview, settings.instructions(), settings.policy()
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda result: self._on_previewed(dialog, preview.plan, result))
        dialog.open()

    def _on_previewed(self, dialog: ImportPreviewDialog, plan: ImportPlan, result: int) -> None:
        if result != QDialog.DialogCode.Accepted:
            self._end()
            return
        policy, suggestions, cancel = dialog.policy(), dialog.chosen_suggestions(), self._cancel
        projects = "merge" if dialog.project_choice is None else dialog.project_choice.policy()
        instructions = dialog.chosen_instructions()
        if instructions is None and self._workspace.settings.instructions().empty:
            instructions = plan.instructions  # an export's are taken where there are none
        if instructions is not None:
            self._use_instructions(instructions)
        policy_chosen = dialog.chosen_policy()
        if policy_chosen is not None:
            self._use_policy(policy_chosen)
        keep_pinned = dialog.pinned.kept()
        self._show_progress(f"Importing {self._path.name}…", "importProgressDialog")
        assert self._progress is not None
        self._progress.count_phases(
            Phases(len(plan.memories), len(plan.conversations), len(suggestions))
        )
        workspace = self._workspace
        run_job(
            lambda report: apply_import(
                plan,
                workspace,
                policy,
                report,
                suggestions=suggestions,
                keep_pinned=keep_pinned,
                cancel=cancel.is_set,
                projects=projects,
                attachments=workspace.attachments,
            ),
            on_done=lambda result: self._on_imported(plan, result),
            on_error=self._on_import_failed,
            on_progress=self._on_progress,
        )

    def _use_instructions(self, instructions: Instructions) -> None:
        """Make the export's custom instructions the user's (a small settings write)."""
        replaced = not self._workspace.settings.instructions().empty
        try:
            self._workspace.set_instructions(instructions)
        except AssistantError as exc:
            self._instructions_note = f"; the custom instructions could not be saved ({exc})"
            return
        verb = "replaced" if replaced else "set"
        self._instructions_note = f"; custom instructions {verb}"
        if self._instructions_set is not None:
            self._instructions_set()

    def _use_policy(self, policy: MemoryPolicy) -> None:
        """Make the export's memory policy the user's (a small settings write)."""
        try:
            self._workspace.set_policy(policy)
        except AssistantError as exc:
            self._instructions_note += f"; the memory policy could not be saved ({exc})"
            return
        self._instructions_note += f"; memory policy: {policy.describe()}"

    def _on_progress(self, done: int, total: int) -> None:
        if self._progress is not None:
            self._progress.update(done, total)

    def _close_progress(self) -> None:
        if self._progress is not None:
            self._progress.close()
            self._progress = None

    def _end(self) -> None:
        """The import has ended (its message box, if any, answered): the next may start."""
        self._turns.done()
        self.deleteLater()

    def _on_imported(self, plan: ImportPlan, result: ImportResult) -> None:
        self._close_progress()
        text = result.summary() + self._instructions_note
        details = ""
        if plan.unreadable:
            text += f"; {counted(len(plan.unreadable), 'conversation')} could not be read"
            names = [f"{u.name}: {u.reason}" for u in plan.unreadable[:MAX_LISTED_UNREADABLE]]
            details = "Not imported:\n" + "\n".join(names)
        show_info(self._parent, "Import finished", text)  # the status bar says it too
        show_result(self._parent, "Import finished", f"{text}.", details)
        self._end()

    def _on_import_failed(self, message: str) -> None:
        self._close_progress()
        if self._cancel.is_set():
            show_info(
                self._parent,
                "Import cancelled",
                "Import cancelled; what was imported before was kept.",
            )
        else:
            show_error(
                self._parent,
                "Import failed",
                f"The import of {self._path.name} stopped: {message}\n\nWhat was imported "
                "before the error was kept; nothing was overwritten.",
            )
        self._end()


def _in_kb(report: Progress) -> Progress:
    """Byte counts for a Qt signal of 32-bit ints: in kB, so that exports of GBs fit."""
    return lambda done, total: report(done // KB, total // KB)
