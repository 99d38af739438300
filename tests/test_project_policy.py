"""The memory policy per project: a project's chats follow its own mode (the never-topics stay
those of Settings), proposals made there keep the project's scope, the project dialog sets the
mode, and the project file (so an export) keeps it. Another app remembering through MCP follows
the policy too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from assistant.agent.cancel import CancelToken
from assistant.agent.curator import TOPIC_PROMPT, Curator
from assistant.agent.loop import Agent, AgentConfig
from assistant.mcp_server.operations import answer
from assistant.memory import ConversationStore, Inbox, SemanticMemory, TopicStore
from assistant.memory.working import WorkingMemoryStore
from assistant.memory_policy import MemoryPolicy
from assistant.paths import settings_file
from assistant.projects import Project, ProjectStore
from assistant.settings import Settings
from assistant.transfer import apply_import, export_data, parse_import
from assistant.ui.conversations.project_dialog import ProjectDialog
from assistant.workspace import Workspace
from tests.embedders import HashEmbedder
from tests.scripted import ScriptedProvider


def extraction(*memories: tuple[str, str]) -> str:
    listed = [
        {"kind": "fact", "text": text, "importance": 0.6, "topic": "work", "scope": scope}
        for text, scope in memories
    ]
    return json.dumps({"memories": listed})


def test_a_projects_chats_follow_its_mode_and_proposals_keep_its_scope(data_dir: Path) -> None:
    provider = ScriptedProvider()
    provider.always(lambda m: m[0]["content"] == TOPIC_PROMPT, "A summary.")
    memory = SemanticMemory.open(data_dir / "memory", HashEmbedder())
    conversations = ConversationStore(data_dir)
    projects = ProjectStore(data_dir)
    inbox = Inbox(data_dir / "memory")
    topics = TopicStore(data_dir / "memory")
    agent = Agent(
        provider,
        memory,
        conversations,
        WorkingMemoryStore(data_dir / "memory"),
        config=AgentConfig(auto_memories=True, memory_policy=MemoryPolicy(never=("money",))),
        curator=Curator(provider, memory, topics, inbox),
        projects=projects,
        inbox=inbox,
    )
    try:
        launch = projects.create("Launch", memory_policy="ask")
        in_project = conversations.create(project=launch.id).id
        provider.enqueue(
            "Noted.",
            extraction(
                ("The launch is on Friday", "project"),
                ("The user prefers mornings", "personal"),
                ("The launch budget is $5000", "project"),
            ),
        )
        agent.run(in_project, "Launch Friday; I like mornings; budget $5000", print, CancelToken())
        waiting = {p.text: p.project for p in inbox.pending()}
        assert waiting == {"The launch is on Friday": launch.id, "The user prefers mornings": None}
        assert len(memory) == 0  # the project asks first; money is never kept

        outside = conversations.create().id  # no project: the settings' mode, automatic
        provider.enqueue("Sure.", extraction(("The user plays chess", "personal")))
        agent.run(outside, "I play chess", print, CancelToken())
        assert [i.text for i in memory.all()] == ["The user plays chess"]
        provider.assert_all_used()
    finally:
        memory.close()
        conversations.close()


def test_the_project_file_keeps_the_mode_and_rejects_an_unknown_one(data_dir: Path) -> None:
    projects = ProjectStore(data_dir)
    made = projects.create("Thesis", memory_policy="on_request")
    assert ProjectStore(data_dir).get(made.id).memory_policy == "on_request"  # type: ignore[union-attr]
    assert projects.update(made.id, memory_policy="").memory_policy == ""
    with pytest.raises(ValueError, match="memory_policy"):
        Project.from_json({**made.to_json(), "memory_policy": "sometimes"})
    older = {k: v for k, v in made.to_json().items() if k != "memory_policy"}
    assert Project.from_json(older).memory_policy == ""  # files and exports from before


@pytest.mark.gui
def test_the_project_dialog_sets_the_mode(qtbot: QtBot) -> None:
    project = Project("p1", "Thesis", memory_policy="ask")
    dialog = ProjectDialog(project)
    qtbot.addWidget(dialog)
    combo = dialog.findChild(QComboBox, "projectMemoryPolicy")
    assert combo is not None and combo.currentData() == "ask"
    assert dialog.values().memory_policy == "ask"
    combo.setCurrentIndex(combo.findData(""))
    assert dialog.values().memory_policy == ""
    fresh = ProjectDialog(None)
    qtbot.addWidget(fresh)
    assert fresh.values().memory_policy == ""


def test_another_app_through_mcp_follows_the_policy(data_dir: Path) -> None:
    Settings(memory_policy="ask", never_remember=["health"], embedding_model="").save(
        settings_file(data_dir)
    )
    workspace = Workspace.open(data_dir, embed=False)
    try:

        def remember(text: str) -> str:
            request = {"op": "remember", "args": {"text": text}, "client": "Claude"}
            return answer(workspace, request)

        assert "never to remember anything about Health" in remember("The user has asthma.")
        assert remember("The user likes figs.").startswith("Proposed, not remembered yet")
        assert remember("The user likes figs.").startswith("Already waiting")
        (waiting,) = workspace.inbox.pending()
        assert waiting.by == "mcp" and len(workspace.memory) == 0
    finally:
        workspace.close()


def test_an_export_keeps_a_projects_mode(tmp_path: Path) -> None:
    source = Workspace.open(tmp_path / "source", embed=False)
    target = Workspace.open(tmp_path / "fresh", embed=False)
    try:
        made = source.projects.create("Thesis", memory_policy="ask")
        cid = source.conversations.create("Chapter one", project=made.id).id
        source.conversations.append(cid, "user", "About chapter one")
        text = json.dumps(export_data(source, include_memories=True))
        apply_import(parse_import(text), target, "skip")
        assert target.projects.get(made.id).memory_policy == "ask"  # type: ignore[union-attr]
    finally:
        source.close()
        target.close()
