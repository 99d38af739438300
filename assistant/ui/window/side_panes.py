"""The two side panes: shown or hidden by the user, folded away by themselves when the window
is too narrow for them, and back when there is room again."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QSplitter


@dataclass(frozen=True)
class SidePane:
    """A pane of the splitter, the action and button that show it, and when it folds."""

    index: int  # in the splitter
    action: QAction  # checkable: shown
    button: QAbstractButton  # checkable, follows the action
    folds_below: int  # window width
    key: str  # in the saved window state


class SidePanes:
    """Keeps the panes' visibility in step with their actions and the window's width."""

    def __init__(self, splitter: QSplitter, panes: list[SidePane]) -> None:
        self._splitter = splitter
        self._panes = panes
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
