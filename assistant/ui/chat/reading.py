"""How the chat reads: lines no longer than a comfortable measure, centred when the chat pane
is wide (side panes hidden, a big screen), and a text size of the user's choosing.

The size is a percentage of the app's font, one of `TEXT_SIZES` (View > Text Size, Ctrl+= /
Ctrl+- / Ctrl+0, or Settings), applied to the chat and the message box; the window keeps it
with its layout (`ui_state["text_size"]`).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal, SignalInstance
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QTextEdit, QWidget

TEXT_SIZES = (80, 90, 100, 110, 120, 135, 150, 175, 200)  # percent of the app's font
DEFAULT_SIZE = 100
LINE_CHARS = 96  # average characters a line at most (about 70 words of English prose)
STATE_KEY = "text_size"


def reading_width(font: QFont) -> int:
    """The widest a line of the chat gets, in pixels, at `font`."""
    return QFontMetrics(font).averageCharWidth() * LINE_CHARS


def side_margin(view_width: int, font: QFont, margin: int) -> int:
    """The margin left and right of the text that centres a line of at most `reading_width`
    in a view `view_width` wide (`margin` at least, the document's own)."""
    free = view_width - reading_width(font) - 2 * margin
    return margin + max(0, free // 2)


def parse_size(text: str | None) -> int:
    """A saved text size, or the default if it is not one of the sizes offered."""
    try:
        size = int(text or "")
    except ValueError:
        return DEFAULT_SIZE
    return size if size in TEXT_SIZES else DEFAULT_SIZE


class ReadingLayout(QObject):
    """Keeps `chat`'s lines to the reading width, and `chat` and `others` at the text size.

    `redrawn` is the chat's signal that it drew its document anew (which resets the margins).
    """

    size_changed = Signal(int)  # the new size, in percent

    def __init__(
        self,
        chat: QTextEdit,
        redrawn: SignalInstance,
        others: tuple[QWidget, ...] = (),
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._chat = chat
        self._widgets = (chat, *others)
        self._base = QFont(chat.font())
        self._margin = round(chat.document().documentMargin())
        self.size = DEFAULT_SIZE
        chat.viewport().installEventFilter(self)  # its width is the one that counts
        redrawn.connect(self.fit)

    def remember_in(self, state: dict[str, str]) -> None:
        """Show the size kept in `state` (the window's layout), and keep it there when changed."""
        self.set_size(parse_size(state.get(STATE_KEY)))
        self.size_changed.connect(lambda size: state.__setitem__(STATE_KEY, str(size)))

    def set_size(self, size: int) -> None:
        """Show the chat and the message box at `size` percent of the app's font."""
        size = size if size in TEXT_SIZES else DEFAULT_SIZE
        self.size = size
        font = QFont(self._base)
        font.setPointSizeF(self._base.pointSizeF() * size / 100)
        for widget in self._widgets:
            widget.setFont(font)
        self.fit()
        self.size_changed.emit(size)

    def step(self, steps: int) -> None:
        """A size `steps` larger (negative: smaller) among those offered; 0: the default."""
        if steps == 0:
            self.set_size(DEFAULT_SIZE)
            return
        index = TEXT_SIZES.index(self.size) + steps
        self.set_size(TEXT_SIZES[max(0, min(len(TEXT_SIZES) - 1, index))])

    def fit(self, *_args: object) -> None:
        """Set the margins that keep the lines at the reading width, centred."""
        side = side_margin(self._chat.viewport().width(), self._chat.font(), self._margin)
        root = self._chat.document().rootFrame()
        fmt = root.frameFormat()
        if fmt.leftMargin() != side or fmt.rightMargin() != side:
            fmt.setLeftMargin(side)
            fmt.setRightMargin(side)
            root.setFrameFormat(fmt)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False
