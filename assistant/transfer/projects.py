"""Importing projects: which project here each project of the file becomes, and the scopes of
its memories and conversations that follow."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from assistant.memory import MemoryEvent, MemoryItem
from assistant.projects import NAME_LIMIT, Project, ProjectStore
from assistant.transfer.plan import ProjectPolicy

APART_SUFFIX = " (imported)"


@dataclass
class ProjectMapping:
    """The project here of each project id of the file, and how many were created or merged."""

    ids: dict[str, str] = field(default_factory=dict)
    created: int = 0
    merged: int = 0

    def of(self, project: str | None) -> str | None:
        """The id here of a project id of the file (None stays None: global)."""
        return None if project is None else self.ids.get(project, project)

    def item(self, item: MemoryItem) -> MemoryItem:
        """A memory of the file in its project here."""
        project = self.of(item.project)
        return item if project == item.project else item._replace(project=project)

    def event(self, event: MemoryEvent) -> MemoryEvent:
        """A "moved" event of the file naming the projects here."""
        if event.type != "moved":
            return event
        return dataclasses.replace(
            event,
            project_before=self.of(event.project_before),
            project_after=self.of(event.project_after),
        )


def map_projects(
    projects: Sequence[Project], store: ProjectStore | None, policy: ProjectPolicy
) -> ProjectMapping:
    """Create or find the project here of each project of the file (see `apply_import`).

    Without a project store (a bare set of stores) the ids stay as the file has them.
    """
    mapping = ProjectMapping()
    if store is None:
        return mapping
    for project in projects:
        here = store.get(project.id)
        same_name = store.by_name(project.name)
        if here is None and same_name is not None and policy == "merge":
            here = same_name
        if here is not None:
            mapping.ids[project.id] = here.id
            mapping.merged += 1
            continue
        name = project.name if same_name is None else _apart_name(store, project.name)
        made = store.insert(dataclasses.replace(project, name=name))
        mapping.ids[project.id] = made.id
        mapping.created += 1
    return mapping


def _apart_name(store: ProjectStore, name: str) -> str:
    """A free name for a project kept apart from the one here named `name`."""
    base = name[: NAME_LIMIT - len(APART_SUFFIX) - 3]
    candidate, n = base + APART_SUFFIX, 1
    while store.by_name(candidate) is not None:
        n += 1
        candidate = f"{base} (imported {n})"
    return candidate
