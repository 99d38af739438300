"""Typed, non-secret settings, saved atomically as `settings.json` (the API key is never here)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from assistant.fileio import atomic_write_json, read_json_object, set_aside
from assistant.instructions import Instructions
from assistant.memory_policy import NEVER_TOPICS, POLICY_MODES, MemoryPolicy, PolicyMode
from assistant.model_options import ModelOptions, usable_options

log = logging.getLogger(__name__)

SETTINGS_VERSION = 1
BASE_URL_ENV = "OPENAI_BASE_URL"

# An automatic prompt budget (0) is this share of the model's context window, the rest being left
# for the reply; or this many tokens when the server does not tell the window.
PROMPT_SHARE = 0.6
DEFAULT_PROMPT_BUDGET = 8000

ProviderName = Literal["openai", "ollama", "lmstudio", "custom"]


@dataclass(frozen=True)
class Provider:
    """A kind of server the user can pick; the models are chosen when switching to it."""

    label: str
    base_url: str  # "" for a custom URL
    chat_model: str = ""  # "" keeps the model that was chosen
    embedding_model: str = ""
    key_hint: str = "Only if the server asks for one"  # the API key field's placeholder


# The one list of providers: Settings, its dialog and the status bar read it.
PROVIDERS: dict[ProviderName, Provider] = {
    "openai": Provider(
        "OpenAI",
        "https://api.openai.com/v1",
        "gpt-4o-mini",
        "text-embedding-3-small",
        "Your OpenAI API key (sk-…)",
    ),
    "ollama": Provider(
        "Ollama",
        "http://127.0.0.1:11434/v1",
        "llama3.1",
        "nomic-embed-text",
        "Not needed for Ollama",
    ),
    "lmstudio": Provider(
        "LM Studio", "http://127.0.0.1:1234/v1", key_hint="Not needed for LM Studio"
    ),
    "custom": Provider("Custom URL", ""),
}


# The built-in embedder (assistant.memory.local_embedder), which needs no server.
LOCAL_EMBEDDING_MODEL = "all-MiniLM-L6-v2-int8"


@dataclass
class Settings:
    """Everything the user can configure except the API key."""

    provider: ProviderName = "openai"
    base_url: str = ""
    chat_model: str = "gpt-4o-mini"
    # The last Custom URL and its chat model, brought back when Custom URL is chosen again.
    custom_base_url: str = ""
    custom_chat_model: str = ""
    embedding_model: str = LOCAL_EMBEDDING_MODEL  # or a model of the server, or "" for none
    auto_memories: bool = True
    # What is remembered (assistant.memory_policy): the mode, built-in topics never to remember
    # (keys of NEVER_TOPICS) and the user's own.
    memory_policy: PolicyMode = "automatic"
    never_remember: list[str] = field(default_factory=list)
    never_remember_own: list[str] = field(default_factory=list)
    memories_per_prompt: int = 6
    reflection_after_memories: int = 10  # reflect after this many new memories
    reflection_per_day: int = 3  # insights written a day at most
    decay_half_life_days: float = 180.0  # unused memories lose half their importance in this
    prompt_budget_tokens: int = 0  # 0: a share of the model's context window
    reply_max_tokens: int = 4096
    max_steps: int = 8
    request_timeout: float = 60.0
    # MCP tools as `server/tool`: those switched off, and those the user always allows to run.
    mcp_tools_off: list[str] = field(default_factory=list)
    mcp_trusted: list[str] = field(default_factory=list)
    # Per model: sampling values, reply and context sizes, tool use (`model_options.py`).
    model_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    instructions_about: str = ""  # custom instructions: what the assistant should know
    instructions_answer: str = ""  # and how it should answer
    ui_state: dict[str, str] = field(default_factory=dict)
    # Fields this version does not know (a later one wrote them): saved back as they were.
    unknown: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def effective_base_url(self) -> str:
        """The server to talk to: `OPENAI_BASE_URL`, else the custom URL, else the preset's."""
        return os.environ.get(BASE_URL_ENV) or self.base_url or PROVIDERS[self.provider].base_url

    def options_for(self, model: str) -> ModelOptions:
        """The options set for `model` (none set: all None)."""
        raw = self.model_options.get(model)
        return ModelOptions() if raw is None else ModelOptions.from_json(raw, model)

    def set_options_for(self, model: str, options: ModelOptions) -> None:
        """Keep `options` for `model` (none set: forget the model's entry)."""
        values = options.to_json()
        if values:
            self.model_options = {**self.model_options, model: values}
        else:
            self.model_options = {k: v for k, v in self.model_options.items() if k != model}

    def instructions(self) -> Instructions:
        """The user's custom instructions."""
        return Instructions(self.instructions_about, self.instructions_answer)

    def policy(self) -> MemoryPolicy:
        """What may be remembered, and what never."""
        return MemoryPolicy(
            self.memory_policy, tuple(self.never_remember), tuple(self.never_remember_own)
        )

    def to_json(self) -> dict[str, Any]:
        """The settings as a JSON object with the file format version (and the fields this
        version does not know, as they were read)."""
        known = {k: v for k, v in dataclasses.asdict(self).items() if k != "unknown"}
        return {**self.unknown, "version": SETTINGS_VERSION, **known}

    def save(self, path: Path) -> None:
        """Write the settings atomically (temp file, fsync, rename)."""
        atomic_write_json(path, self.to_json())

    @classmethod
    def load(cls, path: Path) -> tuple[Settings, list[str]]:
        """Read settings; a corrupt file is moved aside and defaults are used, with a warning.

        A file that cannot be read, or was made by a newer version, is a StorageError and
        stays as it is.
        """
        try:
            raw = read_json_object(path, SETTINGS_VERSION, "the settings")
        except ValueError as exc:
            return cls(), [set_aside(path, "The settings file", exc, "; defaults are used")]
        if raw is None:
            return cls(), []
        return cls.from_json(raw)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> tuple[Settings, list[str]]:
        """Build settings from a JSON object, keeping defaults for missing or mistyped fields."""
        values: dict[str, Any] = {}
        warnings: list[str] = []
        names = {f.name for f in dataclasses.fields(cls)} - {"unknown"}
        values["unknown"] = {
            k: v for k, v in raw.items() if k not in names and k not in _RETIRED and k != "version"
        }
        for f in dataclasses.fields(cls):
            if f.name not in raw or f.name not in names:
                continue
            value = raw[f.name]
            if f.name == "model_options" and isinstance(value, dict):
                values[f.name], problems = usable_options(value)
                warnings += [f"Model option {p}; that value is not used." for p in problems]
            elif _valid(f.name, value):
                values[f.name] = value
            else:
                warnings.append(
                    f"Setting {f.name!r} had an invalid value {value!r}; using default."
                )
        for msg in warnings:
            log.warning(msg)
        return cls(**values), warnings


def read_ui_state(path: Path) -> dict[str, str]:
    """Only the window layout saved in the settings file, touching nothing (empty if unusable).

    For the window frame, drawn before the settings are loaded for good (which reports problems).
    """
    try:
        state = json.loads(path.read_text(encoding="utf-8")).get("ui_state")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return {}
    return state if _valid("ui_state", state) else {}


_TYPES: dict[str, tuple[type, ...]] = {
    "base_url": (str,),
    "chat_model": (str,),
    "custom_base_url": (str,),
    "custom_chat_model": (str,),
    "embedding_model": (str,),
    "auto_memories": (bool,),
    "never_remember": (list,),
    "never_remember_own": (list,),
    "memories_per_prompt": (int,),
    "reflection_after_memories": (int,),
    "reflection_per_day": (int,),
    "decay_half_life_days": (int, float),
    "prompt_budget_tokens": (int,),
    "reply_max_tokens": (int,),
    "max_steps": (int,),
    "request_timeout": (int, float),
    "instructions_about": (str,),
    "instructions_answer": (str,),
    "ui_state": (dict,),
    "mcp_tools_off": (list,),
    "mcp_trusted": (list,),
    "model_options": (dict,),
}


# Fields of earlier versions that this one replaced: dropped, not kept for a later version.
_RETIRED = frozenset({"decay_days"})  # the archive delay, before decay_half_life_days


# Number settings where 0 means "choose for me".
_ZERO_MEANS_AUTOMATIC = frozenset({"prompt_budget_tokens"})


def _valid(name: str, value: Any) -> bool:
    if name == "provider":
        return value in get_args(ProviderName)
    if name == "memory_policy":
        return value in POLICY_MODES
    if name == "never_remember" and isinstance(value, list):
        return all(key in NEVER_TOPICS for key in value)
    types = _TYPES[name]
    if isinstance(value, bool) and bool not in types:
        return False
    if not isinstance(value, types):
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value >= 0 if name in _ZERO_MEANS_AUTOMATIC else value > 0
    if isinstance(value, dict):
        return all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    if isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    return True
