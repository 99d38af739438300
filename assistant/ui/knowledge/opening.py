"""Opening a place in a file that a reply read: text in an in-app preview at its lines, other
files (PDFs) in the system's viewer, or a box saying that no app was found for it (with its path,
to show in its folder or to copy)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from assistant.knowledge import Citation, kind_of
from assistant.sizes import MB

PREVIEW_BYTES = 2 * MB  # larger text files open in the system's viewer
REMEMBER_CHARS = 2000  # of a file with no lines highlighted nor selected


class FilePreview(QDialog):
    """A text file, read-only, scrolled to a citation's lines and with them highlighted;
    "Remember this" gives the selected text (or the highlighted lines) to be remembered."""

    remember = Signal(str)

    def __init__(self, citation: Citation, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("filePreview")
        self.setWindowTitle(citation.label())
        layout = QVBoxLayout(self)
        where = QLabel(citation.path, self)
        layout.addWidget(where)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("filePreviewText")
        self.text.setReadOnly(True)
        self.text.setPlainText(text)
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        open_button = buttons.addButton("Open in the System's Viewer",
                                        QDialogButtonBox.ButtonRole.ActionRole)  # fmt: skip
        open_button.clicked.connect(lambda: system_open(citation.path, self))
        remember_button = buttons.addButton("Remember This…",
                                            QDialogButtonBox.ButtonRole.ActionRole)  # fmt: skip
        remember_button.setObjectName("rememberButton")
        remember_button.setToolTip("Make a memory of the selected text, or the lines shown")
        remember_button.clicked.connect(self._remember)
        layout.addWidget(buttons)
        self.resize(760, 560)
        self._show_lines(citation)

    def _show_lines(self, citation: Citation) -> None:
        first, last = citation.place.first_line, citation.place.last_line
        if first is None:
            return
        document = self.text.document()
        start = document.findBlockByNumber(first - 1)
        end = document.findBlockByNumber((last or first) - 1)
        if not start.isValid():
            return
        cursor = QTextCursor(start)
        if end.isValid():
            cursor.setPosition(end.position() + end.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        selection.format.setBackground(self.palette().highlight().color().lighter(170))
        self.text.setExtraSelections([selection])
        self.text.setTextCursor(QTextCursor(start))
        self.text.centerCursor()

    def _remember(self) -> None:
        chosen = self.text.textCursor().selectedText().replace("\u2029", "\n")
        text = chosen or self.highlighted or self.text.toPlainText()[:REMEMBER_CHARS]
        if text.strip():
            self.remember.emit(text)

    @property
    def highlighted(self) -> str:
        """The highlighted lines' text."""
        selections = self.text.extraSelections()
        return selections[0].cursor.selectedText().replace("\u2029", "\n") if selections else ""


def open_citation(citation: Citation, parent: QWidget) -> FilePreview | None:
    """Open the file of `citation` at its place; returns the preview if one was shown."""
    path = Path(citation.path)
    try:
        size = path.stat().st_size
    except OSError:
        QMessageBox.information(parent, "File not found",
                                f"The file is no longer there:\n{citation.path}")  # fmt: skip
        return None
    if kind_of(path) in ("text", "markdown", "code") and size <= PREVIEW_BYTES:
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            text = None
        if text is not None:
            preview = FilePreview(citation, text, parent)
            preview.show()
            return preview
    system_open(citation.path, parent)
    return None


def system_open(path: str, parent: QWidget) -> bool:
    """Open `path` in the system's app for its kind; if there is none, say so in a box that
    shows the path (returns whether an app took the file)."""
    if QDesktopServices.openUrl(QUrl.fromLocalFile(path)):
        return True
    NoViewerBox(path, parent).show()
    return False


class NoViewerBox(QDialog):
    """No app took the file: its path, selectable, with "Show in Folder" and "Copy Path"."""

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noViewerBox")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.path = path
        name = Path(path).name
        self.setWindowTitle(f"Cannot open {name}")
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        self.message = QLabel(f"No app to open {name} was found on this computer.", self)
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        where = QLabel(path, self)
        where.setObjectName("noViewerPath")
        where.setWordWrap(True)
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(where)
        self.hint = QLabel("Open it from its folder, or copy its path into an app that reads "
                           "this kind of file.", self)  # fmt: skip
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        self.folder_button = buttons.addButton("Show in Folder",
                                               QDialogButtonBox.ButtonRole.ActionRole)  # fmt: skip
        self.folder_button.clicked.connect(self._show_folder)
        self.copy_button = buttons.addButton("Copy Path", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self._copy)
        layout.addWidget(buttons)
        self.copy_button.setFocus()

    def _show_folder(self) -> None:
        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(self.path).parent))):
            self.accept()
            return
        self.folder_button.setEnabled(False)
        self.hint.setText("No file manager was found either: copy the path instead.")

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.path)
        self.hint.setText("The path is copied: paste it where you need it.")
