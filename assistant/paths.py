"""Where Assistant keeps its files: `--data-dir`, `ASSISTANT_DATA_DIR`, else the platform's."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from assistant import APP_NAME

DATA_DIR_ENV = "ASSISTANT_DATA_DIR"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Return the data directory, creating it (mode 0700 on POSIX) if missing."""
    if override:
        path = Path(override)
    elif os.environ.get(DATA_DIR_ENV):
        path = Path(os.environ[DATA_DIR_ENV])
    else:
        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    path = path.expanduser().resolve()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def memory_dir(root: Path) -> Path:
    """Directory of the long-term and working memory files."""
    return root / "memory"


def conversations_dir(root: Path) -> Path:
    """Directory of one JSON Lines file per conversation."""
    return root / "conversations"


def settings_file(root: Path) -> Path:
    """The non-secret settings file."""
    return root / "settings.json"


def drafts_file(root: Path) -> Path:
    """The messages typed but not sent yet, one per conversation."""
    return root / "drafts.json"
