"""Code blocks in the chat scroll sideways on their own; the chat never does.

The chat is one document, and a document lays a long line either wrapped or wider than the
view. Code lines are laid out unwrapped; the view never scrolls sideways (its horizontal range
is held at 0), and each code block that is wider than the view is painted again, clipped to its
box and shifted by its own offset, with a scroll bar under it. So the text stays in the
document: find, selection, copying and screen readers see the code as it is.

A block's offset is kept in its first line (`QTextBlock.userState`, -1 when unset). The wheel
scrolls a block sideways with Shift or a sideways swipe; a find or a selection inside a block
brings its caret into view; mouse positions over a shifted block are shifted back before the
view sees them, so selecting code selects what is under the pointer.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSignalBlocker, Qt
from PySide6.QtGui import (
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextBlock,
    QTextCharFormat,
    QTextFormat,
    QTextLayout,
    QWheelEvent,
)
from PySide6.QtWidgets import QScrollBar, QTextEdit

from assistant.ui.debounce import Debounced

PADDING = 8  # after the longest line, inside the box
BAR_SPACE = 12  # under each code block, where its scroll bar goes (the renderer keeps it free)
_MOUSE = (
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonRelease,
    QEvent.Type.MouseButtonDblClick,
    QEvent.Type.MouseMove,
)


def is_code(block: QTextBlock) -> bool:
    """Whether `block` is a line of a fenced or indented code block."""
    return block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence)


@dataclass
class _Run:
    """One code block on screen: its lines, its box (viewport coordinates), how far it scrolls."""

    lines: list[QTextBlock]
    box: QRectF
    overflow: int  # pixels of code beyond the box (0: it fits)

    @property
    def offset(self) -> int:
        return max(0, min(self.lines[0].userState(), self.overflow))


class CodeScroll(QObject):
    """Gives each wide code block of a `QTextEdit` its own sideways scrolling."""

    def __init__(self, view: QTextEdit) -> None:
        super().__init__(view)
        self._view = view
        self._bars: list[QScrollBar] = []
        self._runs: list[_Run] = []  # those on screen, as last placed
        hbar = view.horizontalScrollBar()
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        hbar.rangeChanged.connect(self._hold_still)
        self._place_soon = Debounced(0, self.place, self)
        view.verticalScrollBar().valueChanged.connect(self._place_soon.trigger)
        view.document().documentLayout().documentSizeChanged.connect(self._place_soon.trigger)
        view.cursorPositionChanged.connect(self._reveal_caret)
        view.viewport().installEventFilter(self)

    def _hold_still(self, _low: int, high: int) -> None:
        if high:  # the document is as wide as its longest code line: the view keeps still
            self._view.horizontalScrollBar().setRange(0, 0)

    # -- geometry ---------------------------------------------------------------------------------

    def runs(self) -> list[_Run]:
        """The code blocks at least partly on screen."""
        view = self._view
        document = view.document()
        layout = document.documentLayout()
        top = view.verticalScrollBar().value()
        height = view.viewport().height()
        right = document.textWidth() - document.documentMargin()
        block = view.cursorForPosition(view.viewport().rect().topLeft()).block()
        while block.isValid() and is_code(block.previous()):  # a block begun above the view
            block = block.previous()
        runs: list[_Run] = []
        while block.isValid():
            rect = layout.blockBoundingRect(block)
            if rect.top() > top + height:
                break
            if not is_code(block):
                block = block.next()
                continue
            lines = []
            while block.isValid() and is_code(block):
                lines.append(block)
                block = block.next()
            runs.append(self._run(lines, right, top))
        return runs

    def _run(self, lines: list[QTextBlock], right: float, top: int) -> _Run:
        document = self._view.document()
        layout = document.documentLayout()
        first = layout.blockBoundingRect(lines[0])
        last = layout.blockBoundingRect(lines[-1])
        left = first.left() + lines[0].blockFormat().indent() * document.indentWidth()
        widest = 0.0
        for line in lines:
            start = layout.blockBoundingRect(line).left()  # a row's x counts from there
            text = line.layout()
            for index in range(text.lineCount()):
                row = text.lineAt(index)
                widest = max(widest, start + row.x() + row.naturalTextWidth())
        bottom = last.top() + lines[-1].layout().boundingRect().height()
        box = QRectF(left, first.top() - top, right - left, bottom - first.top())
        return _Run(lines, box, max(0, round(widest + PADDING - right)))

    def run_at(self, point: QPointF) -> _Run | None:
        """The wide code block under a viewport point (its scroll bar included)."""
        for run in self.runs():
            if run.overflow and run.box.adjusted(0, 0, 0, BAR_SPACE).contains(point):
                return run
        return None

    # -- scrolling -------------------------------------------------------------------------------

    def scroll(self, run: _Run, offset: int) -> None:
        """Show `run` shifted left by `offset` pixels (clamped to its overflow)."""
        run.lines[0].setUserState(max(0, min(offset, run.overflow)))
        self._view.viewport().update(run.box.adjusted(0, 0, 0, BAR_SPACE).toAlignedRect())
        self.place()

    def place(self) -> None:
        """Put a scroll bar under each wide code block on screen; hide the rest."""
        self._runs = [run for run in self.runs() if run.overflow]
        while len(self._bars) < len(self._runs):
            self._bars.append(self._new_bar())
        for index, bar in enumerate(self._bars):
            if index >= len(self._runs):
                bar.hide()
                continue
            run = self._runs[index]
            box = run.box.toAlignedRect()
            bar.setGeometry(box.left(), box.bottom() + 2, box.width(), BAR_SPACE - 2)
            with QSignalBlocker(bar):
                bar.setRange(0, run.overflow)
                bar.setPageStep(box.width())
                bar.setSingleStep(20)
                bar.setValue(run.offset)
            bar.show()

    def _new_bar(self) -> QScrollBar:
        bar = QScrollBar(Qt.Orientation.Horizontal, self._view.viewport())
        bar.setObjectName("codeScrollBar")
        bar.setAccessibleName("Scroll code sideways")
        bar.setAccessibleDescription("Shows the rest of the long lines of this code block")
        bar.setCursor(Qt.CursorShape.ArrowCursor)
        bar.valueChanged.connect(lambda value, bar=bar: self._on_bar(bar, value))
        return bar

    def _on_bar(self, bar: QScrollBar, value: int) -> None:
        index = self._bars.index(bar)
        if index < len(self._runs):
            self.scroll(self._runs[index], value)

    def _reveal_caret(self) -> None:
        """A find or a selection ended inside a wide code block: bring its caret into view."""
        cursor = self._view.textCursor()
        if not is_code(cursor.block()):
            return
        rect = self._view.cursorRect(cursor)
        for run in self.runs():
            if run.overflow and cursor.block() in run.lines:
                x = rect.center().x() - run.box.left()  # unshifted, from the box's left edge
                offset = run.offset
                if x - offset > run.box.width() - PADDING:
                    offset = round(x - run.box.width() / 2)
                elif x - offset < PADDING:
                    offset = round(x - PADDING * 2)
                if offset != run.offset:
                    self.scroll(run, offset)
                return

    # -- events ---------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Paint the shifted blocks over the view; scroll and translate the mouse over them."""
        if event.type() == QEvent.Type.Paint and isinstance(event, QPaintEvent):
            self._view.paintEvent(event)
            self._paint()
            return True
        if event.type() == QEvent.Type.Resize:
            self._place_soon.trigger()
        elif event.type() == QEvent.Type.Wheel and isinstance(event, QWheelEvent):
            return self._wheel(event)
        elif event.type() in _MOUSE and isinstance(event, QMouseEvent):
            run = self.run_at(event.position())
            if run is not None and run.offset:
                moved = QMouseEvent(
                    event.type(),
                    event.position() + QPointF(run.offset, 0),
                    event.globalPosition(),
                    event.button(),
                    event.buttons(),
                    event.modifiers(),
                )
                self._view.viewportEvent(moved)
                return True
        return super().eventFilter(watched, event)

    def _wheel(self, event: QWheelEvent) -> bool:
        delta = event.angleDelta()
        sideways = delta.x() or (
            delta.y() if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 0
        )
        run = self.run_at(event.position()) if sideways else None
        if run is None:
            return False
        self.scroll(run, run.offset - round(sideways / 120 * 60))
        return True

    def _paint(self) -> None:
        runs = [run for run in self.runs() if run.overflow]
        if not runs:
            return
        view = self._view
        palette = view.palette()
        painter = QPainter(view.viewport())
        base = palette.color(QPalette.ColorRole.Base)
        right = view.viewport().width()
        top = view.verticalScrollBar().value()
        document = view.document().documentLayout()
        selection = QTextCharFormat()
        selection.setBackground(palette.color(QPalette.ColorRole.Highlight))
        selection.setForeground(palette.color(QPalette.ColorRole.HighlightedText))
        for run in runs:
            box = run.box
            beyond = QRectF(box.right(), box.top(), right - box.right(), box.height())
            painter.fillRect(beyond, base)  # where the unshifted line ran on
            background = run.lines[0].blockFormat().background()
            painter.fillRect(box, background if background.style() else base)
            painter.save()
            painter.setClipRect(box)
            painter.translate(-run.offset, -top)
            painter.setPen(palette.color(QPalette.ColorRole.Text))
            for line in run.lines:
                layout = line.layout()  # laid out relative to its frame, which is here:
                frame = document.blockBoundingRect(line).topLeft() - layout.position()
                layout.draw(painter, frame, self._selected(line, selection))
            painter.restore()
        painter.end()

    def _selected(self, block: QTextBlock, fmt: QTextCharFormat) -> list[QTextLayout.FormatRange]:
        """The part of the view's selection in `block`, as a range to draw in `fmt`."""
        cursor = self._view.textCursor()
        low = max(cursor.selectionStart(), block.position())
        high = min(cursor.selectionEnd(), block.position() + block.length() - 1)
        if high <= low:
            return []
        selected = QTextLayout.FormatRange()
        selected.start, selected.length, selected.format = low - block.position(), high - low, fmt
        return [selected]
