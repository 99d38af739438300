"""The model searches the user's files with `search_files`, through the real `openai` client and
a local server, and the reply's passages name their file and place for the chat's citations."""

from __future__ import annotations

import json
from pathlib import Path

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, ToolCallFinished
from assistant.agent.loop import Agent, AgentConfig
from assistant.agent.provider import OpenAIProvider
from assistant.knowledge import Citation, Knowledge, Place, citations_in
from assistant.memory import ConversationStore
from assistant.memory.semantic import SemanticMemory
from assistant.memory.working import WorkingMemoryStore
from tests.embedders import HashEmbedder
from tests.fake_openai import FakeOpenAI, Reply, ToolCall
from tests.files import make_pdf


def agent_with_files(root: Path, server: FakeOpenAI, knowledge: Knowledge) -> Agent:
    client = server.client(max_retries=0, timeout=5.0)
    return Agent(
        OpenAIProvider(client, "chat-model", max_retries=0),
        SemanticMemory.open(root / "memory"),
        ConversationStore(root),
        WorkingMemoryStore(root / "memory"),
        config=AgentConfig(auto_memories=False),
        knowledge=knowledge,
    )


def test_the_model_searches_the_users_files_and_the_passages_cite_them(
    data_dir: Path, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    make_pdf(folder / "report.pdf", ["Contents.", "The <b> budget for 2027 is 40,000 euros."])
    (folder / "plan.md").write_text("# Plan\n\n## Budget\n\nAsk the board in March.\n")
    knowledge = Knowledge(data_dir, HashEmbedder())
    knowledge.set_sources(knowledge.sources.with_folder(str(folder)))
    knowledge.sync()
    agent = agent_with_files(data_dir, fake_openai, knowledge)
    cid = agent.conversations.create().id
    fake_openai.enqueue(
        Reply.tool_calls(ToolCall("search_files", json.dumps({"query": "budget 2027"}))),
        Reply.text("The budget for 2027 is 40,000 euros (report.pdf p. 2)."),
    )
    events: list[AgentEvent] = []
    agent.run(cid, "What is our budget for 2027?", events.append, CancelToken())
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.ok, finished.result
    first, request = fake_openai.requests_to("/chat/completions")
    offered = [t["function"]["name"] for t in first.body["tools"]]
    assert "search_files" in offered
    tool_message = request.body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "40,000 euros" in tool_message["content"]
    assert "&lt;b&gt;" in tool_message["content"]  # the passage is fenced as quoted data
    cited = citations_in(tool_message["content"])
    assert cited[0] == Citation(str(folder / "report.pdf"), Place(page=2))
    assert cited[0].label() == "report.pdf p. 2"
    assert [c.label() for c in cited[1:]] == ["plan.md Plan > Budget, lines 3-5"]


def test_without_knowledge_folders_the_tool_is_not_offered(
    data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    agent = agent_with_files(data_dir, fake_openai, Knowledge(data_dir, HashEmbedder()))
    cid = agent.conversations.create().id
    fake_openai.enqueue(Reply.text("Hello."))
    agent.run(cid, "Hi", lambda _: None, CancelToken())
    (request,) = fake_openai.requests_to("/chat/completions")
    assert "search_files" not in [t["function"]["name"] for t in request.body["tools"]]
