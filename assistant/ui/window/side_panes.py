"""The two side panes: shown or hidden by the user, folded away by themselves when the window
is too narrow for them, and back when there is room again; narrower first, before the chat."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QSplitter, QWidget

CHAT_SHARE = 0.5  # of the width the chat has before side panes keep more than their minimum


@dataclass(frozen=True)
class SidePane:
    """A pane of the splitter, the action and button that show it, and when it folds."""

    index: int  # in the splitter
    action: QAction  # checkable: shown
    button: QAbstractButton  # checkable, follows the action
    folds_below: int  # window width
    key: str  # in the saved window state
    gives_down_to: int = 0  # the width it gives the chat room down to (0: its minimum width)


class SidePanes:
    """Keeps the panes' visibility in step with their actions and the window's width."""

    def __init__(self, splitter: QSplitter, panes: list[SidePane]) -> None:
        self._splitter = splitter
        self._panes = panes
        # After the splitter has laid out the panes just shown (their sizes come back then).
        self._make_room = QTimer(splitter, singleShot=True, interval=0)
        self._make_room.timeout.connect(self.chat_first)
        self._folded: set[int] = set()  # folded away for want of room, not by the user
        for pane in panes:
            pane.action.toggled.connect(lambda on, p=pane: self._choose(p, on))
            pane.button.clicked.connect(pane.action.toggle)

    def _choose(self, pane: SidePane, shown: bool) -> None:
        """Shown or hidden by the user (or by folding); it stays so until changed."""
        self._folded.discard(pane.index)
        widget = self._splitter.widget(pane.index)
        if widget is not None:
            widget.setVisible(shown)
        pane.button.setChecked(shown)

    def apply(self, width: int) -> None:
        """Show the panes (new widgets in the splitter) as their actions say, for `width`."""
        for pane in self._panes:
            widget = self._splitter.widget(pane.index)
            if widget is not None:
                widget.setVisible(pane.action.isChecked())
        self.fit(width)

    def fit(self, width: int) -> None:
        """Fold panes away when the window is narrower than they need; unfold them after."""
        for pane in sorted(self._panes, key=lambda p: -p.folds_below):
            if width < pane.folds_below and pane.action.isChecked():
                pane.action.setChecked(False)
                self._folded.add(pane.index)
            elif width >= pane.folds_below and pane.index in self._folded:
                pane.action.setChecked(True)
                self._folded.discard(pane.index)
        self._make_room.start()

    def chat_first(self) -> None:
        """Give the chat `CHAT_SHARE` of the width at least, taken from the side panes shown
        (in proportion to what they have over the width they give room down to): at 1024 px
        the saved or first sizes left the chat the narrowest pane. Sizes that leave it that
        share stay."""
        sizes = self._splitter.sizes()
        sides = {pane.index for pane in self._panes}
        chat = next((i for i in range(len(sizes)) if i not in sides), None)
        if chat is None:
            return
        short = int(sum(sizes) * CHAT_SHARE) - sizes[chat]
        floors = {pane.index: pane.gives_down_to for pane in self._panes}
        spare = {
            i: max(0, sizes[i] - max(floors[i], _minimum_width(self._splitter.widget(i))))
            for i in sides
            if i < len(sizes) and sizes[i] > 0  # (0: hidden)
        }
        room = sum(spare.values())
        if short <= 0 or room <= 0:
            return
        taken = min(short, room)
        given = {i: taken * extra // room for i, extra in spare.items()}
        widest = max(spare, key=lambda i: spare[i] - given[i])
        given[widest] += taken - sum(given.values())  # what rounding down left
        for i, pixels in given.items():
            sizes[i] -= pixels
            sizes[chat] += pixels
        self._splitter.setSizes(sizes)

    def restore(self, state: dict[str, str]) -> None:
        """Show the panes as saved ("shown" or "hidden")."""
        for pane in self._panes:
            if pane.key in state:
                pane.action.setChecked(state[pane.key] != "hidden")

    def save(self, state: dict[str, str]) -> None:
        """Record the user's choice for each pane (a folded pane counts as shown)."""
        for pane in self._panes:
            shown = pane.action.isChecked() or pane.index in self._folded
            state[pane.key] = "shown" if shown else "hidden"


def _minimum_width(widget: QWidget | None) -> int:
    """How narrow the splitter lets `widget` be: its minimum width if set, else its hint."""
    if widget is None:
        return 0
    return widget.minimumWidth() or widget.minimumSizeHint().width()
