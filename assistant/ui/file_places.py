"""Where file dialogs open: the folder last used for the same purpose in this run, else home.

Each purpose ("attach", "export", "import", "knowledge") keeps its own folder, as desktop apps
do, so that picking a file for one never moves the dialog of another. Not saved: a new run
starts at home (a folder from last week may be gone, or an unplugged drive).
"""

from __future__ import annotations

from pathlib import Path

_last: dict[str, Path] = {}


def start_folder(purpose: str) -> Path:
    """The folder a dialog for `purpose` opens in."""
    folder = _last.get(purpose)
    return folder if folder is not None and folder.is_dir() else Path.home()


def remember(purpose: str, chosen: str | Path) -> None:
    """Remember where a file or folder for `purpose` was chosen ('' when cancelled: nothing)."""
    if not str(chosen):
        return
    path = Path(chosen)
    _last[purpose] = path if path.is_dir() else path.parent
