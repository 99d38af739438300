"""Knowledge: the folders the user gave, their files' text in the index, and each file's status.

Files are read where they are, never copied. `sync` compares each file's size and modification
time with its record (a stat, nothing read) and reads only what changed; `refresh` does the
same for one path the watcher saw change. The records (`records`, in the passage log with the
chunks) say what the index was derived from, so the index is rebuilt from them at start without
reading the files again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from assistant.errors import StorageError
from assistant.knowledge.formats import kind_of
from assistant.knowledge.index import FileHit, FileIndex
from assistant.knowledge.passage_log import LOG_NAME, write_log
from assistant.knowledge.reading import UnreadableFileError, os_status, read_file
from assistant.knowledge.records import FileRecord, legacy_records, remove_legacy
from assistant.knowledge.sources import FolderUnavailableError, Sources, walk
from assistant.memory.embedding import Embedder

log = logging.getLogger(__name__)

KNOWLEDGE_DIR = "knowledge"
LEGACY_RECORDS = "files"  # the records' folder before the passage log
Progress = Callable[[int, int, str], None]  # done, total, the file being read
PROJECT_DEPTH = 4  # hits asked of the index per hit wanted, when projects' passages are left out


@dataclass(frozen=True)
class FolderState:
    """A knowledge folder as the Knowledge page shows it."""

    folder: str
    problem: str  # "" if it could be listed; else why not (its files stay indexed)
    files: tuple[FileRecord, ...]
    problems: tuple[tuple[str, str], ...]  # (path, status) of what could not be looked at

    @property
    def indexed(self) -> int:
        """How many of its files have text in the index."""
        return sum(r.indexed for r in self.files)

    @property
    def chunks(self) -> int:
        """How many chunks its files have."""
        return sum(r.chunks for r in self.files)


class Knowledge:
    """The knowledge folders of a data directory and their index; thread-safe.

    `load` (once) and `sync` read from disk: call them off the GUI thread.
    """

    def __init__(self, root: Path, embedder: Embedder | None) -> None:
        self.directory = root / KNOWLEDGE_DIR
        self._sources_file = self.directory / "folders.json"
        self.sources, self.warnings = Sources.load(self._sources_file)
        self.index = FileIndex(self.directory, embedder)
        self._lock = threading.RLock()
        self._load_lock = threading.Lock()
        self._records: dict[str, FileRecord] = {}
        self._problems: dict[str, str] = {}  # path -> status, of the last walks
        self._unavailable: dict[str, str] = {}  # folder -> why it could not be listed
        self._project_folders: dict[str, tuple[str, ...]] = {}  # project id -> its folders
        self._loaded = False

    def load(self) -> None:
        """Put the recorded chunks in the index (once; the files are not read)."""
        with self._load_lock:  # one loader; the others wait for it, the lock stays free
            if self._loaded:
                return
            self._carry_over()
            for record in self.index.load():
                with self._lock:
                    self._records.setdefault(record.path, record)
            self._loaded = True

    def _carry_over(self) -> None:
        """Move the records of the older layout (a file each) into a new passage log."""
        legacy = self.directory / LEGACY_RECORDS
        if not legacy.is_dir():
            return
        if not (self.directory / LOG_NAME).exists():
            try:
                write_log(self.directory / LOG_NAME, legacy_records(legacy))
            except StorageError as exc:  # the files are read again
                log.warning("Could not carry the index records over: %s", exc)
        remove_legacy(legacy)

    def set_sources(self, sources: Sources) -> None:
        """Save new folders and rules (StorageError if they cannot be saved); `sync` applies
        them."""
        with self._lock:
            sources.save(self._sources_file)
            self.sources = sources

    def set_project_folders(self, folders: Mapping[str, Sequence[str]]) -> None:
        """The knowledge folders of each project: read with the global ones (by the next
        `sync`), searched only in that project's chats."""
        with self._lock:
            self._project_folders = {p: tuple(f) for p, f in folders.items() if f}

    def read_sources(self) -> Sources:
        """The rules, with every folder that is read: the global ones and the projects'."""
        with self._lock:
            extra = [f for folders in self._project_folders.values() for f in folders]
            return replace(self.sources, folders=tuple(dict.fromkeys([*self.sources.folders,
                                                                       *extra])))  # fmt: skip

    def search(self, query: str, k: int = 5, project: str | None = None) -> list[FileHit]:
        """The chunks that best match `query` in the global knowledge folders and, for a chat
        in `project`, that project's (never another project's)."""
        self.load()
        with self._lock:
            others = any(p != project for p in self._project_folders)
            mine = self._project_folders.get(project, ()) if project is not None else ()
            allowed = replace(self.sources, folders=(*self.sources.folders, *mine))
        if not others:
            return self.index.search(query, k)
        hits = self.index.search(query, k * PROJECT_DEPTH)  # others' passages are left out
        return [h for h in hits if allowed.folder_of(h.path) is not None][:k]

    # -- scanning ------------------------------------------------------------------------------

    def sync(
        self, progress: Progress | None = None, cancel: Callable[[], bool] | None = None
    ) -> int:
        """Bring the index up to date with the folders; returns how many files were read.

        Unchanged files are only stat'ed. A folder that cannot be listed keeps its files'
        chunks (an unplugged drive comes back) and says why in its state.
        """
        self.load()
        sources = self.read_sources()
        stale: dict[str, os.stat_result] = {}
        seen: set[str] = set()
        problems: dict[str, str] = {}
        unavailable: dict[str, str] = {}
        for folder in sources.folders:
            try:
                found = walk(sources, folder)
            except FolderUnavailableError as exc:
                unavailable[folder] = str(exc)
                seen.update(p for p in self._records if sources.folder_of(p) == folder)
                continue
            problems.update(found.problems)
            seen.update(found.files)
            seen.update(found.problems)
            with self._lock:
                for path, stat in found.files.items():
                    record = self._records.get(path)
                    if record is None or not record.is_current(stat):
                        stale[path] = stat
        with self._lock:
            self._problems, self._unavailable = problems, unavailable
            gone = [p for p in self._records if p not in seen]
        for path in gone:
            self._forget(path)
        for path in problems:
            self._forget(path)
        for done, (path, stat) in enumerate(sorted(stale.items())):
            if cancel is not None and cancel():
                break
            if progress is not None:
                progress(done, len(stale), path)
            self._read(path, stat)
        if progress is not None:
            progress(len(stale), len(stale), "")
        return len(stale)

    def refresh(self, path: str) -> bool:
        """Read `path` again if it changed, drop it (and what was under it) if it is gone or
        no longer wanted; returns whether anything changed. For the watcher."""
        self.load()
        sources = self.read_sources()
        with self._lock:
            below = [p for p in self._records if p.startswith(path.rstrip(os.sep) + os.sep)]
        changed = False
        for inner in below:  # a folder renamed or deleted
            if not os.path.exists(inner):
                self._forget(inner)
                changed = True
        if not sources.wants(path):
            return self._forget(path) or changed
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return self._forget(path) or changed
        except OSError as exc:
            with self._lock:
                self._problems[path] = os_status(exc)
            return self._forget(path) or True
        if not os.path.isfile(path):
            return changed
        with self._lock:
            record = self._records.get(path)
            self._problems.pop(path, None)
        if record is not None and record.is_current(stat):
            return changed
        self._read(path, stat)
        return True

    def _read(self, path: str, stat: os.stat_result) -> FileRecord:
        """Read a file into the index and record it (its status if it gives no text)."""
        kind = kind_of(Path(path))
        chunks = []
        notes: list[str] = []
        pages = None
        status = ""
        if kind is None:
            status = "not a kind of file Assistant reads"
        else:
            try:
                reading = read_file(Path(path), kind, max_bytes=self.sources.max_bytes)
                pages = reading.pages
                chunks = list(reading.chunks)
                notes = reading.notes
            except UnreadableFileError as exc:
                status, chunks = str(exc), []
            except OSError as exc:  # the file went or changed while it was read
                status, chunks = os_status(exc), []
        record = FileRecord(
            path, stat.st_size, stat.st_mtime_ns, status, tuple(notes), pages, len(chunks)
        )
        self.index.put(path, chunks, record)
        with self._lock:
            self._records[path] = record
        return record

    def _forget(self, path: str) -> bool:
        with self._lock:
            had = self._records.pop(path, None) is not None
        self.index.drop(path)
        return had

    # -- what the Knowledge page shows ---------------------------------------------------------

    def states(self) -> list[FolderState]:
        """Each folder with its files' records and problems."""
        with self._lock:
            sources = self.sources
            records = list(self._records.values())
            problems = dict(self._problems)
            unavailable = dict(self._unavailable)
        out = []
        for folder in sources.folders:
            files = sorted((r for r in records if sources.folder_of(r.path) == folder),
                           key=lambda r: r.path)  # fmt: skip
            trouble = sorted((p, s) for p, s in problems.items() if sources.folder_of(p) == folder)
            out.append(
                FolderState(folder, unavailable.get(folder, ""), tuple(files), tuple(trouble))
            )
        return out

    def close(self) -> None:
        """Save the vectors and close the index's files."""
        self.index.close()
