"""With many MCP tools a turn is offered those relevant to it, and `find_tools` for the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from assistant.agent.cancel import CancelToken
from assistant.agent.events import AgentEvent, ToolCallFinished
from assistant.agent.loop import Agent, AgentConfig
from assistant.mcp_client.agent_tools import SELECTED, McpToolSource
from assistant.mcp_client.manager import McpManager
from assistant.mcp_client.selection import ToolIndex
from assistant.mcp_client.status import McpTool
from assistant.memory import ConversationStore
from assistant.memory.semantic import SemanticMemory
from assistant.memory.working import WorkingMemoryStore
from tests.bench.mcp_catalog import CATALOG
from tests.scripted import ScriptedProvider, calls

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


class Listed:
    """Ready servers' tools, as the manager lists them (selection needs no running server)."""

    def __init__(self, count: int) -> None:
        every = [
            McpTool(server, name, description, SCHEMA, read_only=True)
            for server, tools in CATALOG.items()
            for name, description in tools
        ]
        self.listed = every[:count]

    def tools(self) -> list[McpTool]:
        return self.listed


def source(count: int) -> McpToolSource:
    return McpToolSource(cast(McpManager, Listed(count)), ToolIndex(None))


def test_up_to_twenty_tools_are_all_offered() -> None:
    tools, hidden = source(20).tools_for("anything")
    assert len(tools) == 20 and hidden == frozenset()


def test_above_twenty_the_relevant_ones_and_a_search_are_offered() -> None:
    tools, hidden = source(200).tools_for("Will it rain in Lisbon tomorrow? Weather forecast")
    names = {t.name for t in tools}
    offered = names - hidden
    assert "find_tools" in offered
    assert len(offered) == SELECTED + 1
    assert "weather__get_forecast" in offered
    assert "weather__get_forecast" in names and len(names) == 201  # the rest can still be called


def test_find_tools_offers_what_it_finds_from_the_next_step(data_dir: Path) -> None:
    provider = ScriptedProvider()
    conversations = ConversationStore(data_dir)
    agent = Agent(
        provider,
        SemanticMemory.open(data_dir / "memory"),
        conversations,
        WorkingMemoryStore(data_dir / "memory"),
        config=AgentConfig(auto_memories=False),
        extra_tools=source(200),
    )
    provider.enqueue(calls(("find_tools", {"query": "pollen allergy"})), "Pollen is high.")
    events: list[AgentEvent] = []
    agent.run(conversations.create().id, "Hello there", events.append, CancelToken())
    (found,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert found.ok and "weather__pollen_count" in found.result

    def offered(request: dict[str, Any]) -> set[str]:
        return {t["function"]["name"] for t in request["tools"]}

    assert "weather__pollen_count" not in offered(provider.requests[0])
    assert "weather__pollen_count" in offered(provider.requests[1])
    provider.assert_all_used()
