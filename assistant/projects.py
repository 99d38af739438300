"""Projects: a name, instructions, knowledge folders and whether their memories are walled off
("isolated"); one JSON file each, `projects/<id>.json`.

A project's conversations are those whose file names it (`ConversationStore.set_project`), and
its memories those whose scope is its id (`MemoryItem.project`): one place says each, so that
moving one is one write.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from assistant.errors import StorageError
from assistant.fileio import (
    atomic_write_json,
    read_json_object,
    remove_file,
    set_aside,
    storage_error,
)
from assistant.memory.subscribers import Subscribers
from assistant.memory_policy import POLICY_MODES
from assistant.timestamps import is_timestamp, stamp

log = logging.getLogger(__name__)

PROJECTS_VERSION = 1
PROJECTS_DIR = "projects"
NAME_LIMIT = 80  # characters: a name fits the conversation list
PROJECT_INSTRUCTIONS_LIMIT = 4000  # characters; they are in every prompt of the project


@dataclass(frozen=True)
class Project:
    """One project, as its file holds it."""

    id: str
    name: str
    instructions: str = ""
    isolated: bool = False  # no global memories in its chats, none of its own learned global
    knowledge: tuple[str, ...] = ()  # knowledge folders of this project only
    created_at: str = ""
    updated_at: str = ""
    memory_policy: str = ""  # what its chats may remember (a PolicyMode); "": as in Settings

    def to_json(self) -> dict[str, Any]:
        """The project as its file (and an export) holds it."""
        return {
            "id": self.id,
            "name": self.name,
            "instructions": self.instructions,
            "isolated": self.isolated,
            "knowledge": list(self.knowledge),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "memory_policy": self.memory_policy,
        }

    @classmethod
    def from_json(cls, raw: object) -> Project:
        """Parse a project; ValueError naming the first bad field."""
        if not isinstance(raw, dict):
            raise ValueError("expected an object")
        project_id = raw.get("id")
        if not isinstance(project_id, str) or not is_project_id(project_id):
            raise ValueError("id: expected 1 to 64 letters, digits, '-' or '_'")
        name = clean_name(_str(raw, "name"))
        instructions = _str(raw, "instructions", "")
        if len(instructions) > PROJECT_INSTRUCTIONS_LIMIT:
            raise ValueError(f"instructions: longer than {PROJECT_INSTRUCTIONS_LIMIT} characters")
        isolated = raw.get("isolated", False)
        if not isinstance(isolated, bool):
            raise ValueError("isolated: expected true or false")
        knowledge = raw.get("knowledge", [])
        if not isinstance(knowledge, list) or not all(isinstance(f, str) for f in knowledge):
            raise ValueError("knowledge: expected a list of folders")
        times = {}
        for field_name in ("created_at", "updated_at"):
            value = _str(raw, field_name, "")
            if value and not is_timestamp(value):
                raise ValueError(f"{field_name}: not an ISO 8601 timestamp")
            times[field_name] = value
        policy = raw.get("memory_policy", "")
        if policy != "" and policy not in POLICY_MODES:
            raise ValueError(f"memory_policy: expected one of {', '.join(POLICY_MODES)} or ''")
        return cls(
            project_id,
            name,
            instructions,
            isolated,
            tuple(knowledge),
            **times,
            memory_policy=policy,
        )


def _str(raw: dict[str, Any], name: str, default: str | None = None) -> str:
    value = raw.get(name, default)
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string")
    return value


def is_project_id(value: str) -> bool:
    """Whether `value` can name a project (and its file)."""
    return 0 < len(value) <= 64 and all(c.isascii() and (c.isalnum() or c in "-_") for c in value)


def clean_name(name: str) -> str:
    """The name on one line; ValueError if it is empty or too long."""
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ValueError("A project needs a name.")
    if len(cleaned) > NAME_LIMIT:
        raise ValueError(f"A project name can be at most {NAME_LIMIT} characters.")
    return cleaned


def same_name(a: str, b: str) -> bool:
    """Whether two project names are the same to a user (case and spacing aside)."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


class ProjectExistsError(ValueError):
    """A project of that name (or id) is there already."""


class ProjectStore:
    """The projects of a data dir; thread-safe. Subscribers hear the id of each project that
    was created, changed or deleted."""

    def __init__(self, root: Path) -> None:
        self.directory = root / PROJECTS_DIR
        self._lock = threading.RLock()
        self.warnings: list[str] = []
        self._projects: dict[str, Project] = self._load()
        self._subscribers: Subscribers[str] = Subscribers("project")

    def _load(self) -> dict[str, Project]:
        found: dict[str, Project] = {}
        if not self.directory.is_dir():
            return found
        for path in sorted(self.directory.glob("*.json")):
            try:
                raw = read_json_object(path, PROJECTS_VERSION, "a project")
                project = Project.from_json(raw)
                if project.id != path.stem:
                    raise ValueError(f"its id {project.id!r} is not its file name")
            except StorageError as exc:  # unreadable or newer: left as it is
                self.warnings.append(str(exc))
                continue
            except ValueError as exc:
                self.warnings.append(set_aside(path, f"The project file {path.name}", exc))
                continue
            found[project.id] = project
        return found

    def subscribe(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call `callback(project_id)` after each change; returns the unsubscriber."""
        return self._subscribers.add(callback)

    # -- reading -------------------------------------------------------------------------------

    def all(self) -> list[Project]:
        """Every project, by name."""
        with self._lock:
            return sorted(self._projects.values(), key=lambda p: (p.name.casefold(), p.id))

    def get(self, project_id: str | None) -> Project | None:
        """The project with this id, or None (also for None)."""
        if project_id is None:
            return None
        with self._lock:
            return self._projects.get(project_id)

    def by_name(self, name: str) -> Project | None:
        """The project of this name (case and spacing aside), or None."""
        with self._lock:
            return next((p for p in self._projects.values() if same_name(p.name, name)), None)

    # -- changing ------------------------------------------------------------------------------

    def create(
        self,
        name: str,
        *,
        instructions: str = "",
        isolated: bool = False,
        knowledge: Sequence[str] = (),
        memory_policy: str = "",
    ) -> Project:
        """A new project, saved; ProjectExistsError if the name is taken, ValueError for a bad
        name or instructions."""
        now = stamp()
        return self.insert(
            Project.from_json(
                {
                    "id": uuid.uuid4().hex,
                    "name": name,
                    "instructions": instructions,
                    "isolated": isolated,
                    "knowledge": list(knowledge),
                    "memory_policy": memory_policy,
                    "created_at": now,
                    "updated_at": now,
                }
            )
        )

    def insert(self, project: Project) -> Project:
        """Save a project as it is (an import's); ProjectExistsError if its id or name is
        taken."""
        with self._lock:
            if project.id in self._projects:
                raise ProjectExistsError(f"A project with the id {project.id} exists already.")
            self._check_name(project.name, project.id)
            self._save(project)
        self._subscribers.notify(project.id)
        return project

    def update(
        self,
        project_id: str,
        *,
        name: str | None = None,
        instructions: str | None = None,
        isolated: bool | None = None,
        knowledge: Sequence[str] | None = None,
        memory_policy: str | None = None,
    ) -> Project:
        """Change a project (None leaves a field as it is); KeyError if there is none."""
        with self._lock:
            old = self._projects.get(project_id)
            if old is None:
                raise KeyError(f"no project with id {project_id!r}")
            raw = old.to_json()
            for key, value in (
                ("name", name),
                ("instructions", instructions),
                ("isolated", isolated),
                ("knowledge", None if knowledge is None else list(knowledge)),
                ("memory_policy", memory_policy),
            ):
                if value is not None:
                    raw[key] = value
            project = Project.from_json({**raw, "updated_at": stamp()})
            if project == replace(old, updated_at=project.updated_at):
                return old
            self._check_name(project.name, project.id)
            self._save(project)
        self._subscribers.notify(project_id)
        return project

    def delete(self, project_id: str) -> None:
        """Remove a project's file (its conversations and memories are the caller's to move
        first); nothing if there is none."""
        with self._lock:
            if project_id not in self._projects:
                return
            path = self._path(project_id)
            try:
                remove_file(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise storage_error("delete the project file", path, exc) from exc
            del self._projects[project_id]
        self._subscribers.notify(project_id)

    def _check_name(self, name: str, project_id: str) -> None:
        other = self.by_name(name)
        if other is not None and other.id != project_id:
            raise ProjectExistsError(f"There is a project called {other.name!r} already.")

    def _save(self, project: Project) -> None:
        atomic_write_json(
            self._path(project.id), {"version": PROJECTS_VERSION, **project.to_json()}
        )
        self._projects[project.id] = project

    def _path(self, project_id: str) -> Path:
        return self.directory / f"{project_id}.json"
