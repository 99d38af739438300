"""Markdown for the chat: laid out in a scratch document, then inserted as one fragment.

In the scratch document the structure is whole: code blocks get a background, Pygments
colours, a line naming the language with a Copy link, and room under them for the scroll bar
of a block wider than the chat (`code_scroll`);
headings get some air and table cells one top line.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import (
    QFont,
    QPalette,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFormat,
    QTextListFormat,
    QTextTable,
)

from assistant.ui import theme
from assistant.ui.chat.code_highlight import highlight
from assistant.ui.chat.code_scroll import BAR_SPACE, is_code

_BOLD = QTextCharFormat()
_BOLD.setFontWeight(QFont.Weight.Bold)
CODE_LINK = "copycode"  # copycode:<n> copies code block n
# GitHub's dialect with HTML read as text: a reply's `List<String>` or `<div>` is words to show,
# not markup to drop (Qt would otherwise swallow the tag and what follows it).
FEATURES = QTextDocument.MarkdownFeature.MarkdownDialectGitHub | (
    QTextDocument.MarkdownFeature.MarkdownNoHTML
)


# A block property marking the words of a message (what find searches), as against the
# headers, actions and lines around them.
MESSAGE_TEXT = QTextFormat.Property.UserProperty + 1


def is_message_text(block: QTextBlock) -> bool:
    """Whether `block` holds words of a message (not a header, action or tool line)."""
    return block.blockFormat().boolProperty(MESSAGE_TEXT)


def set_markdown(document: QTextDocument, markdown: str) -> None:
    """Lay out `markdown` in `document`, any HTML in it kept as literal text."""
    document.setMarkdown(markdown, FEATURES)


def _same_cell(table: QTextTable, block: QTextBlock, other: QTextBlock) -> bool:
    """Whether `other` is in the same cell of `table` as `block`."""
    if not other.isValid():
        return False
    a, b = table.cellAt(block.position()), table.cellAt(other.position())
    return b.isValid() and (a.row(), a.column()) == (b.row(), b.column())


_NUMBERED = {
    QTextListFormat.Style.ListDecimal,
    QTextListFormat.Style.ListLowerAlpha,
    QTextListFormat.Style.ListUpperAlpha,
    QTextListFormat.Style.ListLowerRoman,
    QTextListFormat.Style.ListUpperRoman,
}


def plain_text(markdown: str) -> str:
    """What a Markdown text reads as without its markup: list items keep their numbers or
    bullets (indented by level), line breaks stay."""
    document = QTextDocument()
    set_markdown(document, markdown)
    lines = []
    block = document.begin()
    while block.isValid():
        text = block.text().replace("\u2028", "\n").replace("\xa0", " ")
        listed = block.textList()
        if listed is not None:
            style = listed.format().style()
            marker = listed.itemText(block) if style in _NUMBERED else "•"
            text = "  " * max(0, listed.format().indent() - 1) + f"{marker} {text}"
        lines.append(text)
        block = block.next()
    return "\n".join(lines)


class MarkdownRenderer:
    """Inserts Markdown at a cursor; remembers the code blocks it offered to copy."""

    def __init__(self, parent: QObject, palette: Callable[[], QPalette]) -> None:
        self._scratch = QTextDocument(parent)
        self._palette = palette
        self.code: list[str] = []  # the text of each copyable code block, by link number

    def clear(self) -> None:
        """Forget the code blocks (the view was cleared)."""
        self.code.clear()

    def insert(self, cursor: QTextCursor, text: str, *, copyable: bool = True) -> None:
        """Insert `text` rendered as Markdown; the first block merges with the cursor's block.

        `copyable` False leaves out the Copy line of code blocks (for text still streaming).
        """
        scratch = self._scratch
        set_markdown(scratch, text)
        palette = self._palette()
        self._style_blocks(palette)
        self._code_blocks(palette, copyable=copyable)
        cursor.setBlockFormat(scratch.begin().blockFormat())
        cursor.insertFragment(QTextDocumentFragment(scratch))

    def _style_blocks(self, palette: QPalette) -> None:
        code_bg = palette.color(QPalette.ColorRole.AlternateBase)
        quote_bg = theme.mix(palette.color(QPalette.ColorRole.Base), theme.muted(palette), 0.08)
        block = self._scratch.begin()
        while block.isValid():
            here = QTextCursor(block)
            fmt = block.blockFormat()
            fmt.setProperty(MESSAGE_TEXT, True)
            if fmt.hasProperty(QTextFormat.Property.BlockCodeFence):
                fmt.setBackground(code_bg)
                fmt.setLeftMargin(8)
                fmt.setNonBreakableLines(True)  # a wide block scrolls on its own (code_scroll)
            elif fmt.headingLevel():
                fmt.setTopMargin(10)
                fmt.setBottomMargin(4)
            elif level := fmt.intProperty(QTextFormat.Property.BlockQuoteLevel):
                # Set apart as quoted: a tint, inset by level, the text in the muted colour.
                fmt.setBackground(quote_bg)
                fmt.setLeftMargin(12 * level)
                fmt.setIndent(0)
                here.movePosition(
                    QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
                )
                quoted = QTextCharFormat()
                quoted.setForeground(theme.muted(palette))
                here.mergeCharFormat(quoted)
            elif (table := here.currentTable()) is not None:
                if not block.text() and _same_cell(table, block, block.next()):
                    here.deleteChar()  # Qt starts the first cell with an empty line after code
                    block = here.block()  # now holding the cell's text
                    continue
                fmt.setTopMargin(0)  # and gives it the paragraph's top margin
                if table.cellAt(block.position()).row() == 0:  # and may not make it bold
                    here.movePosition(
                        QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
                    )
                    here.mergeCharFormat(_BOLD)
            here.setBlockFormat(fmt)
            block = block.next()

    def _code_blocks(self, palette: QPalette, *, copyable: bool) -> None:
        """Colour each run of code lines and put a 'language · Copy' line above it."""
        dark = theme.is_dark(palette)
        runs: list[list[QTextBlock]] = []
        block = self._scratch.begin()
        while block.isValid():
            if is_code(block):
                if runs and runs[-1][-1].next() == block:
                    runs[-1].append(block)
                else:
                    runs.append([block])
            block = block.next()
        for lines in reversed(runs):  # from the end: inserting a line moves what follows
            code = "\n".join(b.text() for b in lines)
            language = lines[0].blockFormat().stringProperty(QTextFormat.Property.BlockCodeLanguage)
            for start, length, fmt in highlight(code, language, dark=dark):
                self._format_code(lines[0].position() + start, length, fmt)
            last = QTextCursor(lines[-1])
            spaced = lines[-1].blockFormat()
            spaced.setBottomMargin(BAR_SPACE)  # room for its scroll bar
            last.setBlockFormat(spaced)
            if copyable:
                self._copy_line(lines[0], language, code, palette)

    def _format_code(self, position: int, length: int, fmt: QTextCharFormat) -> None:
        # The document separates lines with one block separator, as "\n" does in the code.
        cursor = QTextCursor(self._scratch)
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(fmt)

    def _copy_line(self, first: QTextBlock, language: str, code: str, palette: QPalette) -> None:
        self.code.append(code)
        cursor = QTextCursor(first)
        code_format = first.blockFormat()
        fmt = QTextBlockFormat()
        fmt.setTopMargin(6)
        cursor.insertBlock(code_format, first.charFormat())  # the code moves down a line
        cursor.movePosition(QTextCursor.MoveOperation.PreviousBlock)
        cursor.setBlockFormat(fmt)
        label = QTextCharFormat()
        label.setForeground(theme.muted(palette))
        label.setFontPointSize(max(7.0, cursor.document().defaultFont().pointSizeF() * 0.85))
        cursor.insertText(f"{language or 'code'}   ", label)
        link = QTextCharFormat(label)
        link.setAnchor(True)
        link.setAnchorHref(f"{CODE_LINK}:{len(self.code) - 1}")
        link.setForeground(palette.color(QPalette.ColorRole.Link))
        cursor.insertText("Copy code", link)
