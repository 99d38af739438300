"""The settings dialog: pages of settings (the model server and key, memory, appearance, MCP
servers, knowledge), saved only on OK (the MCP servers page applies its changes at once, and
says so).

The pages are listed on the left, as in most desktop apps' preferences: seven tabs did not fit
a 1366 px screen (scroll arrows, the last one cut off). Up and Down in the list, or Ctrl+PgUp
and Ctrl+PgDown (Ctrl+Tab) anywhere, go from page to page; Esc closes. Each page is a
`SettingsPage` (`page.py`); a new page is one more entry in `pages`.
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QCoreApplication, QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLayout,
    QListWidget,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from assistant.errors import AssistantError
from assistant.settings import Settings
from assistant.ui.knowledge.bridge import KnowledgeBridge
from assistant.ui.settings.appearance_page import AppearancePage
from assistant.ui.settings.form import SettingsForm, align_labels
from assistant.ui.settings.knowledge_page import KnowledgeSettingsPage
from assistant.ui.settings.mcp_page import McpPage
from assistant.ui.settings.memory_page import MemoryPage
from assistant.ui.settings.model_page import ModelPage
from assistant.ui.settings.models_page import ModelsPage
from assistant.ui.settings.page import SettingsPage
from assistant.ui.settings.policy_page import PolicyPage
from assistant.workspace import Workspace


class SettingsDialog(QDialog):
    """Preferences in pages; nothing is saved until OK."""

    def __init__(
        self,
        workspace: Workspace,
        parent: QWidget | None = None,
        knowledge: KnowledgeBridge | None = None,
    ) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self._opened_height: int | None = None  # set when first shown
        self._fit_timer = QTimer(self, singleShot=True, interval=0)
        self._fit_timer.timeout.connect(self._fit_height)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")

        self.pages: list[SettingsPage] = [
            ModelPage(workspace.settings, workspace.credentials),
            ModelsPage(),
            MemoryPage(),
            PolicyPage(),
            AppearancePage(),
            McpPage(workspace),
        ]
        if knowledge is not None:  # the window's: its folders are indexed as they change
            self.pages.append(KnowledgeSettingsPage(knowledge))
        # Before the pages are stacked: the stack asks their sizes at once.
        align_labels(form for page in self.pages for form in page.findChildren(SettingsForm))
        self.page_list = QListWidget(self)
        self.page_list.setObjectName("settingsPageList")
        self.page_list.setAccessibleName("Settings pages")
        self._tabs = QStackedWidget(self)
        self._tabs.setObjectName("settingsPages")
        row_height = self.page_list.fontMetrics().height() + 10  # room to aim at, as tabs had
        for page in self.pages:
            self.page_list.addItem(page.title)
            self.page_list.item(self.page_list.count() - 1).setSizeHint(QSize(0, row_height))
            self._tabs.addWidget(page)
            page.resized.connect(self._fit_soon)
            page.usable_changed.connect(self._on_usable_changed)
        self.page_list.currentRowChanged.connect(self._tabs.setCurrentIndex)
        self._tabs.currentChanged.connect(self.page_list.setCurrentRow)
        self.page_list.setCurrentRow(0)
        metrics = self.page_list.fontMetrics()
        widest = max(metrics.horizontalAdvance(page.title) for page in self.pages)
        self.page_list.setFixedWidth(widest + 2 * self.page_list.frameWidth() + 24)
        for keys, step in (("Ctrl+PgDown", 1), ("Ctrl+PgUp", -1), ("Ctrl+Tab", 1),
                           ("Ctrl+Shift+Tab", -1), ("Ctrl+Backtab", -1)):  # fmt: skip
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(lambda step=step: self.turn(step))

        self._buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self._buttons.accepted.connect(self.accept)
        self._buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setSpacing(12)
        pages = QHBoxLayout()
        pages.addWidget(self.page_list)
        pages.addWidget(self._tabs, 1)
        layout.addLayout(pages, 1)
        layout.addWidget(self._buttons)
        self.page_list.setFocus()

        for page in self.pages:
            page.load(workspace.settings)
        # A fixed minimum: the layout would otherwise change it whenever a note appears, and
        # each change goes to the window system. Notes that need room grow the dialog instead.
        self.ensurePolished()
        layout.activate()
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.setMinimumSize(layout.totalMinimumSize())

    def show_page(self, title: str) -> None:
        """Bring the page with this title to the front."""
        for page in self.pages:
            if page.title == title:
                self._tabs.setCurrentWidget(page)

    def turn(self, step: int) -> None:
        """Show the next page (`step` 1) or the one before (-1), round from the last to the
        first."""
        self._tabs.setCurrentIndex((self._tabs.currentIndex() + step) % self._tabs.count())

    def sizeHint(self) -> QSize:  # noqa: N802 - a Qt override
        """Wide enough for long URLs and model names without stretching the window."""
        hint = super().sizeHint()
        return QSize(max(hint.width(), 580), hint.height())

    def values(self) -> Settings:
        """The settings as edited in the dialog (a copy; nothing is saved)."""
        settings = dataclasses.replace(
            self._workspace.settings, ui_state=dict(self._workspace.settings.ui_state)
        )
        for page in self.pages:
            settings = page.edit(settings)
        return settings

    def accept(self) -> None:
        """Save the settings and what the pages keep elsewhere, then close; on a problem or a
        failure to save, stay open."""
        for page in self.pages:
            problem = page.problem()
            if problem is not None:
                self._tabs.setCurrentWidget(page)
                self._warn(problem)
                return
        for page in self.pages:
            page.save(self._warn)
        settings = self._workspace.settings
        fields = [name for page in self.pages for name in page.fields]
        before = {name: getattr(settings, name) for name in fields}
        edited = self.values()
        for name in fields:
            setattr(settings, name, getattr(edited, name))
        try:
            self._workspace.save_settings()
        except (AssistantError, OSError) as exc:
            for name, value in before.items():
                setattr(settings, name, value)
            self._warn(f"The settings could not be saved: {exc}")
            return
        super().accept()

    def _warn(self, text: str) -> None:
        """Tell the user about a problem (a separate method so tests can replace it)."""
        QMessageBox.warning(self, "Settings", text)

    def _on_usable_changed(self, usable: bool) -> None:
        self._buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(usable)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - a Qt override
        """Remember the height the dialog opened with: it shrinks back to it."""
        super().showEvent(event)
        if self._opened_height is None:
            self._opened_height = self.height()
            self._fit_height()

    def _fit_soon(self) -> None:
        """Fit the height once the labels have their new text laid out (several changes at
        once make one fit)."""
        self._fit_timer.start()

    def _fit_height(self) -> None:
        """Fit the height to wrapped text (a long error): grow while it needs room, shrink back
        once it is gone, and stay on the screen (moved up, at most as tall as it)."""
        if self._opened_height is None or not self.isVisible():
            return
        # The new text's layout requests first, then the pages' height (the dialog's own
        # layout keeps heights it worked out before).
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        shown = self._tabs.currentWidget()
        for widget in shown.findChildren(QWidget) if shown is not None else []:
            widget.updateGeometry()
        tabs = self._tabs
        wanted = tabs.heightForWidth(tabs.width()) if tabs.hasHeightForWidth() else -1
        needed = (
            self.height() - tabs.height() + (wanted if wanted > 0 else tabs.sizeHint().height())
        )
        available = self.screen().availableGeometry()
        frame = self.frameGeometry().height() - self.height()
        height = min(max(self._opened_height, needed), available.height() - frame)
        if height != self.height():
            self.resize(self.width(), height)
        below = self.frameGeometry().bottom() - available.bottom()
        if below > 0:
            self.move(self.x(), max(available.top(), self.y() - below))
