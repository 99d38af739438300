"""Watching the knowledge folders for changes (watchdog: inotify, FSEvents, ReadDirectoryChanges).

The watcher only reports paths; what changed is found by a stat (`Knowledge.refresh`), so a
burst of events for one file is one read, and a missed event is caught by the next rescan.
"""

from __future__ import annotations

import logging
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

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGES:
            return
        self._on_path(_text(event.src_path))
        if event.event_type == "moved" and event.dest_path:
            self._on_path(_text(event.dest_path))


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
        for folder in wanted - set(self._watches):
            try:
                self._watches[folder] = self._observer.schedule(
                    self._handler, folder, recursive=True
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
