"""Knowledge folders and what is left out of them, saved in `knowledge/folders.json`.

The user's choice (not derived): the folders, whether hidden files and folders are skipped,
name patterns to leave out (`.git`, `node_modules`, `*.min.js`: matched against each name
and each path below the folder) and the size limit. `walk` lists a folder's supported files
by these rules, with a status for what could not be looked at.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assistant.fileio import atomic_write_json, read_json_object, set_aside
from assistant.knowledge.formats import is_indexed_kind, kind_of
from assistant.knowledge.reading import os_status
from assistant.sizes import MB

log = logging.getLogger(__name__)

SOURCES_VERSION = 1
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv",
                   "*.min.js", "*.lock")  # fmt: skip
DEFAULT_MAX_FILE_MB = 50


@dataclass(frozen=True)
class Sources:
    """The knowledge folders and the rules for what in them is read."""

    folders: tuple[str, ...] = ()
    skip_hidden: bool = True
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    max_file_mb: int = DEFAULT_MAX_FILE_MB

    @property
    def max_bytes(self) -> int:
        """The size limit in bytes."""
        return self.max_file_mb * MB

    def with_folder(self, folder: str) -> Sources:
        """These sources with one more folder (the same if it is there already)."""
        if folder in self.folders:
            return self
        return replace(self, folders=(*self.folders, folder))

    def without_folder(self, folder: str) -> Sources:
        """These sources without a folder."""
        return replace(self, folders=tuple(f for f in self.folders if f != folder))

    def folder_of(self, path: str) -> str | None:
        """The knowledge folder that holds `path`, if any."""
        for folder in self.folders:
            if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep):
                return folder
        return None

    def excludes(self, folder: str, path: str) -> bool:
        """Whether `path` (a file or folder in `folder`) is left out by the rules."""
        relative = os.path.relpath(path, folder)
        if relative == ".":
            return False
        parts = Path(relative).parts
        if self.skip_hidden and any(p.startswith(".") for p in parts):
            return True
        posix = Path(relative).as_posix()
        for pattern in self.exclude:
            if fnmatch.fnmatch(posix, pattern) or any(fnmatch.fnmatch(p, pattern) for p in parts):
                return True
        return False

    def wants(self, path: str) -> bool:
        """Whether `path` is a file of a kind that is indexed, in a folder, not left out."""
        folder = self.folder_of(path)
        if folder is None or not is_indexed_kind(kind_of(Path(path))):
            return False
        return not self.excludes(folder, path)

    # -- the file ------------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write the sources atomically."""
        atomic_write_json(
            path,
            {
                "version": SOURCES_VERSION,
                "folders": list(self.folders),
                "skip_hidden": self.skip_hidden,
                "exclude": list(self.exclude),
                "max_file_mb": self.max_file_mb,
            },
        )

    @classmethod
    def load(cls, path: Path) -> tuple[Sources, list[str]]:
        """The saved sources (defaults if none); a corrupt file is set aside, with a warning."""
        try:
            raw = read_json_object(path, SOURCES_VERSION, "the knowledge folders")
        except ValueError as exc:
            unused = "; no knowledge folders are used"
            return cls(), [set_aside(path, "The knowledge folders file", exc, unused)]
        if raw is None:
            return cls(), []
        return cls._from_json(raw)

    @classmethod
    def _from_json(cls, raw: dict[str, Any]) -> tuple[Sources, list[str]]:
        warnings = []
        values: dict[str, Any] = {}
        checks: dict[str, Callable[[Any], bool]] = {
            "folders": lambda v: isinstance(v, list) and all(isinstance(f, str) for f in v),
            "skip_hidden": lambda v: isinstance(v, bool),
            "exclude": lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
            "max_file_mb": lambda v: type(v) is int and v > 0,
        }
        for name, ok in checks.items():
            if name not in raw:
                continue
            if ok(raw[name]):
                value = raw[name]
                values[name] = tuple(value) if isinstance(value, list) else value
            else:
                warnings.append(f"Knowledge setting {name!r} had an invalid value; using default.")
        return cls(**values), warnings


@dataclass
class Walk:
    """What a walk of a folder found: files with their stat, and problems by path."""

    files: dict[str, os.stat_result] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)


class FolderUnavailableError(Exception):
    """A knowledge folder cannot be listed at all (gone, unplugged, no permission)."""


def walk(sources: Sources, folder: str) -> Walk:
    """The supported files of `folder` not left out, by stat (nothing is read). Folder links
    are not followed (so a link loop cannot trap it); a file that cannot be looked at, or a
    subfolder that cannot be listed, is a problem; FolderUnavailableError if `folder` itself
    cannot be listed."""
    found = Walk()
    try:
        top = list(os.scandir(folder))
    except OSError as exc:
        raise FolderUnavailableError(os_status(exc)) from exc
    stack: list[Iterator[os.DirEntry[str]]] = [iter(top)]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        if sources.excludes(folder, entry.path):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                try:
                    stack.append(iter(list(os.scandir(entry.path))))
                except OSError as exc:
                    found.problems[entry.path] = f"folder not read: {os_status(exc)}"
                continue
            if not is_indexed_kind(kind_of(Path(entry.name))):
                continue
            found.files[entry.path] = entry.stat()  # follows a link to a file
        except OSError as exc:
            found.problems[entry.path] = os_status(exc)
    return found
