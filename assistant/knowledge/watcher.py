"""Watching the knowledge folders for changes (watchdog: inotify, FSEvents, ReadDirectoryChanges).

The watcher only reports paths; what changed is found by a stat (`Knowledge.refresh`), so a
burst of events for one file is one read, and a missed event is caught by the next rescan.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import ObservedWatch

log = logging.getLogger(__name__)

# Event types that may mean new content; "opened" and "closed_no_write" do not.
_CHANGES = frozenset({"created", "modified", "deleted", "moved", "closed"})


class _Handler(FileSystemEventHandler):
    def __init__(self, on_path: Callable[[str], None]) -> None:
        self._on_path = on_path
        # A folder given through a symbolic link is watched where it really is (watchdog
        # watches the link itself otherwise, and following links would follow those inside
        # too): its paths are reported back under the name it was given. Real path -> given.
        self.aliases: dict[str, str] = {}

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGES:
            return
        self._on_path(self._given(_text(event.src_path)))
        if event.event_type == "moved" and event.dest_path:
            self._on_path(self._given(_text(event.dest_path)))

    def _given(self, path: str) -> str:
        for real, given in self.aliases.items():
            if path == real or path.startswith(real.rstrip(os.sep) + os.sep):
                return given + path[len(real) :]
        return path


def _text(path: str | bytes) -> str:
    return path.decode(errors="surrogateescape") if isinstance(path, bytes) else path


class FolderWatcher:
    """Reports each path that changes under the watched folders to `on_path` (on the
    watcher's thread)."""

    def __init__(self, on_path: Callable[[str], None]) -> None:
        self._handler = _Handler(on_path)
        self._observer = Observer()
        self._observer.daemon = True
        self._watches: dict[str, ObservedWatch] = {}
        self._started = False

    def watch(self, folders: Iterable[str]) -> dict[str, str]:
        """Watch exactly these folders; returns why some cannot be watched, by folder."""
        wanted = set(folders)
        problems: dict[str, str] = {}
        for folder in set(self._watches) - wanted:
            self._observer.unschedule(self._watches.pop(folder))
        real = {folder: os.path.realpath(folder) for folder in wanted}
        self._handler.aliases = {real[f]: f for f in wanted if real[f] != f}
        for folder in wanted - set(self._watches):
            try:
                self._watches[folder] = self._observer.schedule(
                    self._handler, real[folder], recursive=True
                )
            except OSError as exc:  # gone, no permission, or too many inotify watches
                problems[folder] = f"not watched for changes: {exc.strerror or exc}"
                log.warning("Cannot watch %s: %s", folder, exc)
        if not self._started:
            self._observer.start()
            self._started = True
        return problems

    def stop(self) -> None:
        """Stop watching and end the watcher's thread."""
        if self._started:
            self._observer.stop()
            self._observer.join()
            self._started = False
