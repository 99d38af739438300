"""The global memory policy travels in the own export format: written when it is not the
default, taken on import where the one here is the default, a bad one named, an older export
without it imports unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.cli import main
from assistant.errors import InvalidImportError
from assistant.memory_policy import AUTOMATIC, MemoryPolicy
from assistant.paths import settings_file
from assistant.settings import Settings
from assistant.transfer import apply_import, export_data, parse_import
from assistant.workspace import Workspace

ASK = MemoryPolicy("ask", ("health", "money"), ("my ex",))


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Workspace]:
    workspace = Workspace.open(tmp_path / "source", embed=False)
    cid = workspace.conversations.create("Tea").id
    workspace.conversations.append(cid, "user", "green or black?")
    yield workspace
    workspace.close()


def _export(workspace: Workspace) -> dict[str, Any]:
    return export_data(workspace, memory_policy=workspace.settings.policy())


def _saved_policy(root: Path) -> MemoryPolicy:
    settings, _ = Settings.load(settings_file(root))
    return settings.policy()


def test_the_policy_goes_round_trip_into_a_fresh_data_dir(
    source: Workspace, tmp_path: Path
) -> None:
    source.set_policy(ASK)
    doc = _export(source)
    assert doc["memory_policy"] == {"mode": "ask", "never": ["health", "money"], "own": ["my ex"]}
    plan = parse_import(json.dumps(doc))
    assert plan.memory_policy == ASK
    target = Workspace.open(tmp_path / "target", embed=False)
    try:
        apply_import(plan, target, "skip")
        assert target.settings.policy() == AUTOMATIC  # applying the plan alone sets nothing
        assert plan.memory_policy is not None and target.adopt_policy(plan.memory_policy)
        assert target.settings.policy() == ASK
    finally:
        target.close()
    assert _saved_policy(tmp_path / "target") == ASK


def test_a_policy_set_here_is_not_replaced(source: Workspace, tmp_path: Path) -> None:
    source.set_policy(ASK)
    plan = parse_import(json.dumps(_export(source)))
    target = Workspace.open(tmp_path / "target", embed=False)
    try:
        own = MemoryPolicy("on_request")
        target.set_policy(own)
        assert not target.adopt_policy(ASK)
        assert target.settings.policy() == own
        assert plan.memory_policy == ASK
    finally:
        target.close()


def test_the_default_policy_is_not_written(source: Workspace) -> None:
    doc = _export(source)
    assert "memory_policy" not in doc
    assert parse_import(json.dumps(doc)).memory_policy is None


def test_an_export_without_a_policy_imports_unchanged(source: Workspace, tmp_path: Path) -> None:
    doc = _export(source)
    assert doc["version"] == 1  # no projects, no instructions, no policy: a version 1 file
    assert "projects" not in doc
    plan = parse_import(json.dumps(doc))
    assert plan.memory_policy is None
    target = Workspace.open(tmp_path / "target", embed=False)
    try:
        target.set_policy(ASK)
        result = apply_import(plan, target, "skip")
        assert result.conversations_imported == 1
        assert target.settings.policy() == ASK
    finally:
        target.close()


@pytest.mark.parametrize(
    ("policy", "error"),
    [
        ("ask", "the “memory_policy” field is wrong: it must be a group of named fields, not text"),
        ({"never": []}, "the “memory_policy.mode” field is missing"),
        (
            {"mode": "sometimes"},
            "the “memory_policy.mode” field is wrong: it must be one of automatic, ask, on_request",
        ),
        ({"mode": "ask", "never": "health"}, "the “memory_policy.never” field is wrong: it must"),
        (
            {"mode": "ask", "never": ["health", "religion"]},
            r"item 2 of “memory_policy.never” is wrong: it must be one of health, money, names, "
            r"not 'religion' \(at memory_policy.never\[1\]\)",
        ),
        (
            {"mode": "ask", "own": ["pets", 3]},
            r"item 2 of “memory_policy.own” is wrong: it must be text",
        ),
        ({"mode": "ask", "own": ["x" * 81]}, "“memory_policy.own” field is wrong: A topic can be"),
    ],
)
def test_a_bad_policy_is_named_and_nothing_changes(
    source: Workspace, tmp_path: Path, policy: object, error: str
) -> None:
    doc = _export(source)
    doc["memory_policy"] = policy
    export = tmp_path / "bad.json"
    export.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InvalidImportError, match=error):
        parse_import(json.dumps(doc))
    root = tmp_path / "target"
    assert main(["--data-dir", str(root), "import", str(export)]) != 0
    target = Workspace.open(root, embed=False)
    try:
        assert target.conversations.all() == []
        assert target.settings.policy() == AUTOMATIC
    finally:
        target.close()


def test_the_command_line_takes_the_policy_only_where_none_is_set(
    source: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source.set_policy(ASK)
    source_root = source.root
    export = tmp_path / "export.json"
    assert main(["--data-dir", str(source_root), "export", str(export)]) == 0
    assert json.loads(export.read_text(encoding="utf-8"))["memory_policy"]["mode"] == "ask"
    capsys.readouterr()

    fresh = tmp_path / "fresh"
    assert main(["--data-dir", str(fresh), "import", str(export)]) == 0
    out = capsys.readouterr().out
    assert "Memory policy set from the export: Ask first; never: Health, Money, “my ex”." in out
    assert _saved_policy(fresh) == ASK

    kept = tmp_path / "kept"
    own = MemoryPolicy("on_request", ("names",))
    workspace = Workspace.open(kept, embed=False)
    workspace.set_policy(own)
    workspace.close()
    assert main(["--data-dir", str(kept), "import", str(export)]) == 0
    assert "The export's memory policy was not taken" in capsys.readouterr().out
    assert _saved_policy(kept) == own
