"""The Remembering page of the settings: whether Assistant learns from conversations, how (keep
what it finds, ask first, or only on request), and the topics it must never remember."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from assistant.memory_policy import NEVER_TOPICS, PolicyMode, clean_own_topics
from assistant.settings import Settings
from assistant.ui.settings.form import SettingsForm, note
from assistant.ui.settings.page import SettingsPage

MODES: tuple[tuple[PolicyMode, str, str], ...] = (
    (
        "automatic",
        "&Keep what it finds",
        "Facts, preferences and plans worth keeping are saved at once; the chat shows each "
        "with Undo.",
    ),
    (
        "ask",
        "Ask &me first",
        "What it finds waits on the Review tab of the memory panel until you accept, edit or "
        "reject it. Waiting, it is in no prompt and no search.",
    ),
    (
        "on_request",
        'Only when I say "&remember"',
        'Only what you ask it to keep ("remember that…", in any language) is saved.',
    ),
)
OWN_TOPICS_HINT = "One a line, e.g. my ex, politics, work gossip"
NEVER_NOTE = (
    "The model is told never to keep these, in any language; Assistant also checks every memory "
    "the model proposes for their words (in English) and drops those. Memories you add "
    "yourself are not checked."
)


class PolicyPage(SettingsPage):
    """What is remembered: the policy and the never-topics."""

    title = "Remembering"
    fields = ("auto_memories", "memory_policy", "never_remember", "never_remember_own")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addWidget(self._build_learning())
        layout.addWidget(self._build_never())
        layout.addStretch(1)

    def _build_learning(self) -> QGroupBox:
        box = QGroupBox("Learning from conversations", self)
        form = SettingsForm(box)
        self.auto_memories = QCheckBox("&Learn from conversations", box)
        self.auto_memories.setObjectName("autoMemoriesCheck")
        form.add_row(
            "",
            self.auto_memories,
            "After each reply, another look at the exchange picks out what is worth keeping "
            "(one more request to the model). Off: only what you ask the assistant to remember.",
        )
        self.modes = QButtonGroup(self)
        self._mode_buttons: dict[PolicyMode, QRadioButton] = {}
        rows = QVBoxLayout()
        rows.setSpacing(2)
        for n, (mode, label, help_text) in enumerate(MODES):
            button = QRadioButton(label, box)
            button.setObjectName(f"memoryPolicy_{mode}")
            button.setToolTip(help_text)
            self.modes.addButton(button, n)
            self._mode_buttons[mode] = button
            rows.addWidget(button)
        # One note, for the mode chosen: the page stays no taller than the others.
        self.mode_note = note(box)
        self.mode_note.setObjectName("memoryPolicyNote")
        rows.addWidget(self.mode_note)
        self.mode_note.installEventFilter(self)  # kept as tall as the longest note
        self.modes.idClicked.connect(self._show_mode_note)
        form.add_row("What it finds:", rows)
        return box

    def _build_never(self) -> QGroupBox:
        box = QGroupBox("Never remember", self)
        form = SettingsForm(box)
        topics = QHBoxLayout()
        self.never: dict[str, QCheckBox] = {}
        for key, topic in NEVER_TOPICS.items():
            check = QCheckBox(topic.label, box)
            check.setObjectName(f"neverTopic_{key}")
            check.setToolTip(f"Never remember {topic.rule}.")
            self.never[key] = check
            topics.addWidget(check)
        topics.addStretch(1)
        form.add_row("Topics:", topics)
        self.own = QPlainTextEdit(box)
        self.own.setObjectName("neverOwnTopics")
        self.own.setAccessibleName("Your own topics never to remember")
        self.own.setPlaceholderText(OWN_TOPICS_HINT)
        self.own.setTabChangesFocus(True)
        self.own.setFixedHeight(self.own.fontMetrics().lineSpacing() * 3 + 12)
        form.add_row("Your &own:", self.own, "Words or short phrases, one a line.")
        form.add_note(NEVER_NOTE)
        return box

    def load(self, settings: Settings) -> None:
        """Show the policy."""
        self.auto_memories.setChecked(settings.auto_memories)
        self._mode_buttons[settings.memory_policy].setChecked(True)
        self._show_mode_note(self.modes.checkedId())
        for key, check in self.never.items():
            check.setChecked(key in settings.never_remember)
        self.own.setPlainText("\n".join(settings.never_remember_own))

    def problem(self) -> str | None:
        """What is wrong with the user's own topics, if anything."""
        try:
            clean_own_topics(self.own.toPlainText().splitlines())
        except ValueError as exc:
            return str(exc)
        return None

    def edit(self, settings: Settings) -> Settings:
        """`settings` with the policy shown (the own topics as typed, if they are not valid:
        `problem` keeps the dialog open then)."""
        lines = self.own.toPlainText().splitlines()
        try:
            own = clean_own_topics(lines)
        except ValueError:
            own = [line for line in lines if line.strip()]
        mode = next(m for m, b in self._mode_buttons.items() if b.isChecked())
        return dataclasses.replace(
            settings,
            auto_memories=self.auto_memories.isChecked(),
            memory_policy=mode,
            never_remember=[key for key, check in self.never.items() if check.isChecked()],
            never_remember_own=own,
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Keep the mode's note as tall as the longest at its width, so switching modes does
        not move the boxes under it."""
        if watched is self.mode_note and event.type() == QEvent.Type.Resize:
            width = self.mode_note.contentsRect().width()
            metrics = self.mode_note.fontMetrics()
            box = QRect(0, 0, width, 10_000)
            tallest = max(
                metrics.boundingRect(box, Qt.TextFlag.TextWordWrap, text).height()
                for _mode, _label, text in MODES
            )
            margins = self.mode_note.contentsMargins()
            self.mode_note.setMinimumHeight(tallest + margins.top() + margins.bottom())
        return super().eventFilter(watched, event)

    def _show_mode_note(self, index: int) -> None:
        self.mode_note.setText(MODES[index][2] if 0 <= index < len(MODES) else "")
