"""The Memory page of the settings: memories per prompt, fading, and how much of the model's
context the prompt and the reply may use (what is remembered: `policy_page`)."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QGroupBox, QSizePolicy, QSpinBox, QVBoxLayout, QWidget

from assistant.settings import DEFAULT_PROMPT_BUDGET, PROMPT_SHARE, Settings
from assistant.ui.settings.form import SettingsForm
from assistant.ui.settings.page import SettingsPage


class MemoryPage(SettingsPage):
    """Memory and prompt size."""

    title = "Memory"
    fields = (
        "memories_per_prompt",
        "decay_half_life_days",
        "prompt_budget_tokens",
        "reply_max_tokens",
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        box = QGroupBox("Memory", self)
        self.form = form = SettingsForm(box)
        layout = QVBoxLayout(self)
        layout.addWidget(box)
        layout.addStretch(1)

        self.per_prompt = _spin(box, "memoriesPerPromptSpin", 1, 20, 1)
        form.add_row(
            "Memories per pr&ompt:",
            self.per_prompt,
            "How many related memories are given to the model with each message "
            "(pinned memories are always given).",
        )

        self.half_life = _spin(box, "decayHalfLifeSpin", 7, 3650, 30)
        self.half_life.setSuffix(" days")
        form.add_row(
            "Unused memories &fade by half in:",
            self.half_life,
            "An unpinned memory that is not used loses half its importance in this time; "
            "below 0.1 it is archived (kept, never deleted). Pinned memories never fade. "
            "The memory timeline shows each change.",
        )

        self.prompt_budget = _token_spin(box, "promptBudgetSpin", 0, 1_000_000, 500)
        self.prompt_budget.setSpecialValueText("Automatic")
        form.add_row(
            "Prompt &budget:",
            self.prompt_budget,
            "How much conversation and memory is sent with each message. Automatic uses "
            f"{PROMPT_SHARE:.0%} of the model's context window when the server tells it (else "
            f"{DEFAULT_PROMPT_BUDGET:,} tokens). Never more than fits the model; older messages "
            "are summarized.",
        )

        self.reply_tokens = _token_spin(box, "replyMaxTokensSpin", 64, 200_000, 256)
        form.add_row(
            "Reply &length:",
            self.reply_tokens,
            "The longest reply the model may write. A reply that reaches it is marked "
            '"cut off". Small local models have room for less.',
        )

    def load(self, settings: Settings) -> None:
        """Show the memory settings."""
        self.per_prompt.setValue(settings.memories_per_prompt)
        self.half_life.setValue(round(settings.decay_half_life_days))
        self.prompt_budget.setValue(settings.prompt_budget_tokens)
        self.reply_tokens.setValue(settings.reply_max_tokens)

    def edit(self, settings: Settings) -> Settings:
        """`settings` with the memory values shown."""
        return dataclasses.replace(
            settings,
            memories_per_prompt=self.per_prompt.value(),
            decay_half_life_days=float(self.half_life.value()),
            prompt_budget_tokens=self.prompt_budget.value(),
            reply_max_tokens=self.reply_tokens.value(),
        )


def _spin(
    parent: QWidget, name: str, low: int, high: int, step: int, *, width: int = 110
) -> QSpinBox:
    spin = QSpinBox(parent)
    spin.setObjectName(name)
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setMinimumWidth(width)
    spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
    return spin


def _token_spin(parent: QWidget, name: str, low: int, high: int, step: int) -> QSpinBox:
    """A spin box for a number of tokens."""
    spin = _spin(parent, name, low, high, step, width=140)
    spin.setSuffix(" tokens")
    spin.setGroupSeparatorShown(True)
    return spin
