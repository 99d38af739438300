"""Messages typed but not sent, one per conversation, kept across restarts.

`<data dir>/drafts.json` is `{"version": 1, "drafts": {conversation id: text}}`, written
whole and atomically; the key `NEW_CHAT` ("") holds the draft of a chat not started yet.
"""

from __future__ import annotations

from pathlib import Path

from assistant.fileio import atomic_write_json, read_json_object, set_aside, writing

DRAFTS_VERSION = 1
NEW_CHAT = ""
MAX_DRAFTS = 1000  # a file with more was not written by Assistant: the newest are kept
MAX_DRAFT_CHARS = 200_000


def read_drafts(path: Path) -> tuple[dict[str, str], str | None]:
    """The drafts in `path` ({} if none) and a warning if the file was unreadable (moved aside).

    StorageError if it cannot be read at all or was written by a newer version (kept as is).
    """
    try:
        raw = read_json_object(path, DRAFTS_VERSION, "your unsent messages")
        if raw is None:
            return {}, None
        drafts = raw.get("drafts")
        if not isinstance(drafts, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in drafts.items()
        ):
            raise ValueError("'drafts' is not an object of texts")
    except ValueError as exc:
        return {}, set_aside(path, "The file of unsent messages", exc)
    kept = list(drafts.items())[-MAX_DRAFTS:]
    return {key: text[:MAX_DRAFT_CHARS] for key, text in kept if text.strip()}, None


def write_drafts(path: Path, drafts: dict[str, str]) -> None:
    """Replace the file with `drafts` (StorageError if the disk refuses)."""
    with writing(path):
        atomic_write_json(path, {"version": DRAFTS_VERSION, "drafts": drafts})
