"""The LoCoMo conversations of the recall bench: turns, questions, and what the app would know.

Besides the turns and questions, each conversation carries what the app's curator and summaries
would give it, scripted from the dataset's own annotations: the `observation`s of each session
(facts about a speaker, each naming the turn it comes from) stand for the memories the curator
extracts (their source message is that turn), and the `session_summary`s for the summary of
each session's messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
ROOT = Path(__file__).resolve().parents[2]
# ../shared/data beside the repository (or beside a folder above it: a worktree's)
DEFAULT_DATA = next(
    (
        found
        for parent in ROOT.parents
        if (found := parent / "shared" / "data" / "locomo-dev.json").is_file()
    ),
    ROOT.parent / "shared" / "data" / "locomo-dev.json",
)


@dataclass(frozen=True)
class Turn:
    """One dialog turn: its id (`D3:7`), speaker, record text, session time and session."""

    id: str
    speaker: str
    text: str
    time: datetime
    session: int


@dataclass(frozen=True)
class Question:
    """A question, the ids of the turns that answer it, and its category."""

    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Memory:
    """A fact the curator would have extracted from a turn (a LoCoMo observation)."""

    text: str
    turn: str


@dataclass(frozen=True)
class Dialog:
    """One LoCoMo conversation, its curator memories and session summaries."""

    id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]
    memories: list[Memory]
    summaries: dict[int, str]  # session -> its summary


def load(path: Path) -> list[Dialog]:
    """The conversations of a LoCoMo file, evidence ids normalised as the README says."""
    return [_dialog(entry) for entry in json.loads(path.read_text(encoding="utf-8"))]


def _dialog(entry: dict[str, object]) -> Dialog:
    conversation: dict[str, object] = entry["conversation"]  # type: ignore[assignment]
    turns: list[Turn] = []
    session = 1
    while f"session_{session}" in conversation:
        stamp = str(conversation[f"session_{session}_date_time"])
        when = datetime.strptime(stamp, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        for turn in conversation[f"session_{session}"]:  # type: ignore[attr-defined]
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            turns.append(Turn(turn["dia_id"], turn["speaker"], text, when, session))
        session += 1
    known = {t.id for t in turns}
    questions = []
    for qa in entry["qa"]:  # type: ignore[attr-defined]
        ids = _turn_ids(qa.get("evidence", []), known)
        if ids:
            questions.append(Question(qa["question"], tuple(ids), int(qa["category"])))
    memories = []
    for observations in dict(entry.get("observation") or {}).values():  # type: ignore[call-overload]
        for facts in observations.values():
            for text, source in facts:
                for turn_id in _turn_ids([source] if isinstance(source, str) else source, known):
                    memories.append(Memory(text, turn_id))
    summaries = {}
    for name, text in dict(entry.get("session_summary") or {}).items():  # type: ignore[call-overload]
        if match := re.fullmatch(r"session_(\d+)_summary", name):
            summaries[int(match[1])] = str(text)
    speakers = (str(conversation["speaker_a"]), str(conversation["speaker_b"]))
    return Dialog(str(entry["sample_id"]), speakers, turns, questions, memories, summaries)


def _turn_ids(raw_ids: list[str], known: set[str]) -> list[str]:
    """The turn ids in `raw_ids` (`"D8:6; D9:17"`, `"D:11:26"`, `"D30:05"`) that name a turn."""
    ids: list[str] = []
    for raw in raw_ids:
        for match in _EVIDENCE.finditer(raw):
            turn_id = f"D{match[1]}:{int(match[2])}"
            if turn_id in known and turn_id not in ids:
                ids.append(turn_id)
    return ids
