"""The Knowledge page: the folders Assistant reads, what it leaves out, and each file's status.

Changes apply at once (the folders file is saved and the folders scanned again in the
background); the progress and the statuses follow the service's events.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from assistant.errors import StorageError
from assistant.knowledge import FileRecord, FolderState, KnowledgeEvent, Sources
from assistant.ui import file_places
from assistant.ui.debounce import Debounced
from assistant.ui.knowledge.bridge import KnowledgeBridge
from assistant.ui.knowledge.opening import system_open
from assistant.ui.wording import count, number

REFRESH_MS = 400  # the file list is redrawn at most this often while files are read


def file_status(record: FileRecord) -> str:
    """A file's status in words: "12 passages, 4 pages" or why it has none."""
    if not record.indexed:
        return record.status
    parts = [count(record.chunks, "passage", "passages")]
    if record.pages is not None:
        parts.append(count(record.pages, "page", "pages"))
    return ", ".join([*parts, *record.notes])


def folder_summary(state: FolderState) -> str:
    """A folder's line: how many files and passages, or why it cannot be read."""
    if state.problem:
        return f"⚠ {state.problem} (its files stay in the index)"
    passages = count(state.chunks, "passage", "passages")
    text = f"{count(state.indexed, 'file', 'files')} indexed, {passages}"
    left = len(state.files) - state.indexed + len(state.problems)
    return text + (f"; {count(left, 'file', 'files')} not read" if left else "")


def progress_text(event: KnowledgeEvent | None) -> str:
    """What the service is doing, in words."""
    if event is None:
        return "Starting…"
    if event.problem:
        return f"⚠ {event.problem}"
    if event.phase == "reading" and event.done < event.total:
        name = Path(event.path).name
        return f"Reading {number(event.done + 1)} of {number(event.total)} files: {name}"
    if event.phase == "embedding" and event.done < event.total:
        return (
            f"Preparing search by meaning: {number(event.done)} of {number(event.total)} passages"
        )
    return "Up to date"


class KnowledgePage(QWidget):
    """Folders, rules, progress and per-file statuses of the knowledge folders."""

    def __init__(self, bridge: KnowledgeBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("knowledgePage")
        self._bridge = bridge
        self._knowledge = bridge.knowledge
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Assistant reads the text files, Markdown, code and PDFs in these folders where "
            "they are (nothing is copied) and finds passages in them when you ask. Changes "
            "are followed as they happen.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addLayout(self._build_folders())
        layout.addLayout(self._build_rules())
        self.progress = QProgressBar(self)
        self.progress.setObjectName("knowledgeProgress")
        self.progress.setTextVisible(False)
        self.progress_label = QLabel(self)
        self.progress_label.setObjectName("knowledgeProgressLabel")
        layout.addWidget(self.progress_label)
        layout.addWidget(self.progress)
        self.files = QTreeWidget(self)
        self.files.setObjectName("knowledgeFiles")
        self.files.setHeaderLabels(["File", "Status"])
        self.files.setColumnWidth(0, 280)
        self.files.itemActivated.connect(self._open_item)
        layout.addWidget(self.files, 1)
        self._redraw = Debounced(REFRESH_MS, self.refresh, self, throttled=True)
        bridge.changed.connect(self._on_event)
        self._load_rules()
        self._show_progress(bridge.last)
        self.refresh()

    def _build_folders(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.folders = QListWidget(self)
        self.folders.setObjectName("knowledgeFolders")
        self.folders.setMaximumHeight(110)
        row.addWidget(self.folders, 1)
        buttons = QVBoxLayout()
        self.add_button = QPushButton("&Add Folder…", self)
        self.add_button.setObjectName("addKnowledgeFolderButton")
        self.add_button.clicked.connect(self._on_add)
        self.remove_button = QPushButton("&Remove", self)
        self.remove_button.setObjectName("removeKnowledgeFolderButton")
        self.remove_button.clicked.connect(self._on_remove)
        self.remove_button.setEnabled(False)
        self.folders.currentRowChanged.connect(lambda r: self.remove_button.setEnabled(r >= 0))
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch()
        row.addLayout(buttons)
        return row

    def _build_rules(self) -> QFormLayout:
        form = QFormLayout()
        self.exclude = QLineEdit(self)
        self.exclude.setObjectName("knowledgeExclude")
        self.exclude.setToolTip("Names or patterns of files and folders to leave out, with commas")
        self.exclude.editingFinished.connect(self._apply_rules)
        form.addRow("&Leave out:", self.exclude)
        self.skip_hidden = QCheckBox(
            "Skip &hidden files and folders (names starting with '.')", self
        )
        self.skip_hidden.setObjectName("knowledgeSkipHidden")
        self.skip_hidden.toggled.connect(self._apply_rules)
        form.addRow("", self.skip_hidden)
        self.max_mb = QSpinBox(self)
        self.max_mb.setObjectName("knowledgeMaxSize")
        self.max_mb.setRange(1, 2048)
        self.max_mb.setSuffix(" MB")
        self.max_mb.editingFinished.connect(self._apply_rules)
        form.addRow("Files up to &size:", self.max_mb)
        return form

    def _load_rules(self) -> None:
        sources = self._knowledge.sources
        self.folders.clear()
        self.folders.addItems(list(sources.folders))
        self.exclude.setText(", ".join(sources.exclude))
        self.skip_hidden.blockSignals(True)
        self.skip_hidden.setChecked(sources.skip_hidden)
        self.skip_hidden.blockSignals(False)
        self.max_mb.setValue(sources.max_file_mb)

    def _save(self, sources: Sources) -> None:
        if sources == self._knowledge.sources:
            return
        try:
            self._knowledge.set_sources(sources)
        except StorageError as exc:
            self.progress_label.setText(f"⚠ {exc}")
            return
        self._load_rules()
        self._bridge.rescan()
        self.refresh()

    def add_folder(self, folder: str) -> None:
        """Read this folder's files from now on."""
        self._save(self._knowledge.sources.with_folder(os.path.abspath(folder)))

    def _on_add(self) -> None:
        start = str(file_places.start_folder("knowledge"))
        folder = QFileDialog.getExistingDirectory(self, "Add a knowledge folder", start)
        if folder:
            file_places.remember("knowledge", folder)
            self.add_folder(folder)

    def _on_remove(self) -> None:
        item = self.folders.currentItem()
        if item is not None:
            self._save(self._knowledge.sources.without_folder(item.text()))

    def _apply_rules(self) -> None:
        patterns = tuple(p.strip() for p in self.exclude.text().split(",") if p.strip())
        sources = self._knowledge.sources
        self._save(replace(sources, exclude=patterns, skip_hidden=self.skip_hidden.isChecked(),
                           max_file_mb=self.max_mb.value()))  # fmt: skip

    def _on_event(self, event: KnowledgeEvent) -> None:
        self._show_progress(event)
        self._redraw.trigger()

    def _show_progress(self, event: KnowledgeEvent | None) -> None:
        self.progress_label.setText(progress_text(event))
        working = event is not None and event.phase != "idle" and event.done < event.total
        self.progress.setVisible(working or event is None)
        if event is None:
            self.progress.setRange(0, 0)
        elif working:
            self.progress.setRange(0, event.total)
            self.progress.setValue(event.done)

    def refresh(self) -> None:
        """Draw the folders' files and statuses as they are now."""
        tops = [self.files.topLevelItem(i) for i in range(self.files.topLevelItemCount())]
        expanded = {top.text(0) for top in tops if top is not None and top.isExpanded()}
        self.files.clear()
        for state in self._knowledge.states():
            top = QTreeWidgetItem([state.folder, folder_summary(state)])
            top.setData(0, Qt.ItemDataRole.UserRole, state.folder)
            for record in state.files:
                top.addChild(self._file_item(state.folder, record.path, file_status(record)))
            for path, status in state.problems:
                top.addChild(self._file_item(state.folder, path, status))
            self.files.addTopLevelItem(top)
            top.setExpanded(state.folder in expanded or len(state.files) <= 50)

    def _file_item(self, folder: str, path: str, status: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem([os.path.relpath(path, folder), status])
        item.setData(0, Qt.ItemDataRole.UserRole, path)
        item.setToolTip(1, status)
        return item

    def _open_item(self, item: QTreeWidgetItem) -> None:
        path = item.data(0, Qt.ItemDataRole.UserRole)
        if path:
            system_open(path, self)
