"""Opening a place in a file that a reply read: text in an in-app preview at its lines, other
files (PDFs) in the system's viewer."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QDesktopServices, QTextCursor
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

PREVIEW_BYTES = 2 * 2**20  # larger text files open in the system's viewer
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
        open_button = buttons.addButton("Open in the system's viewer",
                                        QDialogButtonBox.ButtonRole.ActionRole)  # fmt: skip
        open_button.clicked.connect(lambda: _system_open(citation.path))
        remember_button = buttons.addButton("Remember this…",
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
    _system_open(citation.path)
    return None


def _system_open(path: str) -> None:
    QDesktopServices.openUrl(QUrl.fromLocalFile(path))
