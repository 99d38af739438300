"""Export and import keep projects, a conversation's project, a memory's scope and its moves, and
the custom instructions; a project named as one here is merged or kept apart; version 1 imports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.errors import InvalidImportError
from assistant.instructions import Instructions
from assistant.transfer import apply_import, export_data, parse_import
from assistant.workspace import Workspace


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Workspace]:
    workspace = Workspace.open(tmp_path / "source", embed=False)
    yield workspace
    workspace.close()


def _open(root: Path) -> Workspace:
    return Workspace.open(root, embed=False)


def _fill(workspace: Workspace) -> dict[str, str]:
    """Two projects (one isolated), a conversation in each and one outside, scoped memories."""
    novel = workspace.projects.create("Novel", instructions="Keep the tone dark.")
    garden = workspace.projects.create("Garden", isolated=True, knowledge=["/home/me/garden"])
    ids = {"novel": novel.id, "garden": garden.id}
    for name, project in (("plot", novel.id), ("beds", garden.id), ("tea", None)):
        cid = workspace.conversations.create(name.title(), project=project).id
        workspace.conversations.append(cid, "user", f"about the {name}")
        ids[name] = cid
    memory = workspace.memory
    ids["ada"] = memory.add("The heroine is called Ada", project=novel.id).id
    ids["tomatoes"] = memory.add("Tomatoes go by the south wall", project=garden.id).id
    ids["vegetarian"] = memory.add("The user is vegetarian").id
    moved = memory.add("The user writes in the mornings", project=novel.id)
    memory.move(moved.id, None)
    ids["mornings"] = moved.id
    workspace.set_instructions(Instructions(answer="Be brief."))
    return ids


def _export(workspace: Workspace) -> str:
    data = export_data(
        workspace, include_memories=True, instructions=workspace.settings.instructions()
    )
    return json.dumps(data)


def test_everything_comes_back_in_a_fresh_data_dir(source: Workspace, tmp_path: Path) -> None:
    ids = _fill(source)
    text = _export(source)
    doc = json.loads(text)
    assert doc["version"] == 2
    assert [p["name"] for p in doc["projects"]] == ["Garden", "Novel"]
    assert doc["instructions"] == {"about": "", "answer": "Be brief."}
    target = _open(tmp_path / "fresh")
    try:
        plan = parse_import(text)
        assert plan.project_conflicts(target) == []
        result = apply_import(plan, target, "skip")
        assert (result.projects_imported, result.projects_merged) == (2, 0)
        assert "2 projects" in result.summary()
        assert target.adopt_instructions(plan.instructions)  # type: ignore[arg-type]
        assert target.settings.instructions() == Instructions(answer="Be brief.")
        assert target.projects.all() == source.projects.all()
        projects = {c.id: c.project for c in target.conversations.all()}
        assert projects == {ids["plot"]: ids["novel"], ids["beds"]: ids["garden"], ids["tea"]: None}
        scopes = {i.id: i.project for i in target.memory.all()}
        assert scopes == {
            ids["ada"]: ids["novel"],
            ids["tomatoes"]: ids["garden"],
            ids["vegetarian"]: None,
            ids["mornings"]: None,
        }
        moved = [e for e in target.memory.history(ids["mornings"]) if e.type == "moved"]
        assert [(e.project_before, e.project_after) for e in moved] == [(ids["novel"], None)]
    finally:
        target.close()
    again = _open(tmp_path / "fresh")  # from the files
    try:
        assert {p.name: p.isolated for p in again.projects.all()} == {
            "Garden": True,
            "Novel": False,
        }
        assert again.memory.get(ids["ada"]).project == ids["novel"]  # type: ignore[union-attr]
    finally:
        again.close()


def test_importing_again_changes_nothing(source: Workspace) -> None:
    _fill(source)
    text = _export(source)
    before = (source.projects.all(), len(source.memory.all()))
    result = apply_import(parse_import(text), source, "skip")
    assert (result.projects_imported, result.projects_merged) == (0, 2)
    assert result.memories_imported == 0 and result.conversations_imported == 0
    assert (source.projects.all(), len(source.memory.all())) == before


@pytest.fixture
def named_here(tmp_path: Path) -> Iterator[tuple[Workspace, str]]:
    """A data dir with its own project called "Novel" holding a memory."""
    workspace = _open(tmp_path / "target")
    mine = workspace.projects.create("novel")
    workspace.memory.add("The heroine is called Ada", project=mine.id)
    yield workspace, mine.id
    workspace.close()


def test_a_project_of_the_same_name_is_merged_when_asked(
    source: Workspace, named_here: tuple[Workspace, str]
) -> None:
    ids = _fill(source)
    target, mine = named_here
    plan = parse_import(_export(source))
    assert plan.project_conflicts(target) == ["Novel"]
    result = apply_import(plan, target, "skip", projects="merge")
    assert (result.projects_imported, result.projects_merged) == (1, 1)
    assert [p.name for p in target.projects.all()] == ["Garden", "novel"]
    assert target.conversations.load(ids["plot"]).project == mine
    # The same memory in the same project: merged, not twice.
    in_novel = [i.text for i in target.memory.all() if i.project == mine]
    assert sorted(in_novel) == ["The heroine is called Ada"]
    assert result.memories_merged == 1


def test_a_project_of_the_same_name_is_kept_apart_when_asked(
    source: Workspace, named_here: tuple[Workspace, str]
) -> None:
    ids = _fill(source)
    target, mine = named_here
    result = apply_import(parse_import(_export(source)), target, "skip", projects="apart")
    assert (result.projects_imported, result.projects_merged) == (2, 0)
    names = {p.name: p.id for p in target.projects.all()}
    assert set(names) == {"Garden", "novel", "Novel (imported)"}
    apart = names["Novel (imported)"]
    assert apart == ids["novel"]
    assert target.projects.get(apart).instructions == "Keep the tone dark."  # type: ignore[union-attr]
    assert target.conversations.load(ids["plot"]).project == apart
    # Kept apart: each project has its own memory of Ada.
    ada = sorted(i.project or "" for i in target.memory.all() if "Ada" in i.text)
    assert ada == sorted([mine, apart])


def test_a_version_1_export_still_imports_everything_global(tmp_path: Path) -> None:
    doc = {
        "format": "assistant.export",
        "version": 1,
        "conversations": [
            {
                "id": "c1",
                "title": "Old",
                "created_at": "2024-01-01T00:00:00Z",
                "updated_at": "2024-01-01T00:00:00Z",
                "summary": "",
                "messages": [],
            }
        ],
        "memories": [
            {
                "id": "m1",
                "text": "The user likes tea",
                "kind": "preference",
                "created_at": "2024-01-01T00:00:00Z",
            }
        ],
    }
    target = _open(tmp_path / "target")
    try:
        result = apply_import(parse_import(json.dumps(doc)), target, "skip")
        assert result.conversations_imported == 1 and result.memories_imported == 1
        assert target.projects.all() == []
        assert target.conversations.load("c1").project is None
        assert target.memory.get("m1").project is None  # type: ignore[union-attr]
    finally:
        target.close()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            lambda d: d["conversations"][0].__setitem__("project", "nowhere"),
            "conversations[0].project",
        ),
        (lambda d: d["memories"][0].__setitem__("project", "nowhere"), "memories[0].project"),
        (lambda d: d["projects"][0].__setitem__("isolated", "yes"), "projects[0].isolated"),
        (lambda d: d["projects"].append(dict(d["projects"][0])), "projects[2].id"),
    ],
)
def test_a_bad_project_field_is_named_and_nothing_changes(
    source: Workspace, tmp_path: Path, change: object, field: str
) -> None:
    _fill(source)
    doc = json.loads(_export(source))
    doc["conversations"].sort(key=lambda c: "project" not in c)
    doc["memories"].sort(key=lambda m: "project" not in m)
    change(doc)  # type: ignore[operator]
    with pytest.raises(InvalidImportError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_import(json.dumps(doc))


def test_the_command_line_asks_merge_or_apart(
    source: Workspace,
    named_here: tuple[Workspace, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _fill(source)
    target, _ = named_here
    root = target.root
    target.close()
    export = tmp_path / "export.json"
    export.write_text(_export(source), encoding="utf-8")
    assert main(["--data-dir", str(root), "import", str(export)]) != 0
    err = capsys.readouterr().err
    assert err.startswith("assistant: export.json has projects named like projects here ('Novel')")
    assert "--projects merge" in err and err.endswith("Nothing was changed.\n")
    assert [p.name for p in _projects_of(root)] == ["novel"]  # nothing changed
    assert main(["--data-dir", str(root), "import", str(export), "--projects", "apart"]) == 0
    assert "Custom instructions set from the export." in capsys.readouterr().out
    assert [p.name for p in _projects_of(root)] == ["Garden", "novel", "Novel (imported)"]


def _projects_of(root: Path) -> list[object]:
    from assistant.projects import ProjectStore

    return ProjectStore(root).all()  # type: ignore[return-value]
