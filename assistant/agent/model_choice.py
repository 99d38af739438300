"""The model a turn asks: the conversation's choice or the settings' one, with its options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from assistant.agent.chat import ChatProvider
from assistant.memory import Conversation
from assistant.model_options import ModelOptions


@dataclass(frozen=True)
class TurnModel:
    """A turn's model: the provider that asks it, the options in force (the conversation's
    over the model's), and what to call when "auto" tool use turns tools off for it."""

    provider: ChatProvider
    options: ModelOptions = field(default_factory=ModelOptions)
    tools_looped: Callable[[str], None] | None = None  # remembers it, by model name

    def window(self) -> int | None:
        """The context window: as set for the model, else as the server says."""
        return self.options.context_tokens or self.provider.context_window()


ModelChooser = Callable[[Conversation], TurnModel]
