"""`assistant mcp` as other apps use it: the SDK's client against the command in a subprocess.

Without the app running, the command opens the data dir itself, under its lock, one request at
a time (the app tests are in test_mcp_through_app).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, Implementation, TextContent, TextResourceContents

from assistant.memory import SemanticMemory
from assistant.memory.semantic import LOG_NAME
from assistant.paths import memory_dir, settings_file
from assistant.settings import Settings
from tests import child
from tests.fake_openai import FakeOpenAI, Reply

CLAUDE = Implementation(name="claude-ai", version="0.14.10")  # as Claude Desktop calls itself


def server_params(root: Path, **env: str) -> StdioServerParameters:
    """`assistant mcp --data-dir ROOT` as a client would start it."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "assistant", "mcp", "--data-dir", str(root)],
        env=child.environment(**env),
        cwd=str(child.REPO),
    )


def with_client(
    root: Path,
    session: Callable[[Client], Awaitable[Any]],
    *,
    info: Implementation = CLAUDE,
    mode: str = "auto",
    **env: str,
) -> Any:
    """Run `session(client)` against `assistant mcp` on `root`; its result."""

    async def main() -> Any:
        async with Client(server_params(root, **env), client_info=info, mode=mode) as client:
            return await session(client)

    return anyio.run(main)


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def open_memory(root: Path) -> SemanticMemory:
    return SemanticMemory.open(memory_dir(root))


def use_model(root: Path, fake: FakeOpenAI) -> None:
    """Settings for the fake server's chat model (keyword search only: no embeddings)."""
    settings = Settings(provider="custom", base_url=fake.base_url, chat_model="chat")
    settings.embedding_model = ""
    settings.save(settings_file(root))


def processes_on(root: Path) -> list[str]:
    """The command lines of live processes that name `root` (Linux: /proc)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(root) in line:
            found.append(line)
    return found


@pytest.fixture(autouse=True)
def no_process_left(data_dir: Path) -> Iterator[None]:
    yield
    if sys.platform.startswith("linux"):
        assert processes_on(data_dir) == []


@pytest.fixture
def seeded(data_dir: Path) -> dict[str, str]:
    """A data dir with a pinned memory, a plain one and one the user had forgotten."""
    memory = open_memory(data_dir)
    pinned = memory.add("The user lives in Porto.", "fact", 0.9, pinned=True)
    plain = memory.add("The user plays the cello on Sundays.", "fact", 0.6)
    gone = memory.add("The user's old password hint is 'blue whale'.", "fact", 0.5)
    memory.forget(gone.id)
    memory.close()
    return {"pinned": pinned.id, "plain": plain.id}


def test_tools_annotations_and_resources(data_dir: Path, seeded: dict[str, str]) -> None:
    async def session(client: Client) -> tuple[Any, ...]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        pinned = await client.read_resource("assistant://memories/pinned")
        working = await client.read_resource("assistant://working-memory")
        return tools, resources, pinned, working

    tools, resources, pinned, working = with_client(data_dir, session)
    assert set(tools) == {"search_memory", "remember", "recent_memories", "search_conversations"}
    for name in ("search_memory", "recent_memories", "search_conversations"):
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint and not hints.open_world_hint
    hints = tools["remember"].annotations
    assert hints is not None
    assert hints.read_only_hint is False and hints.destructive_hint is False
    assert hints.idempotent_hint is True and hints.open_world_hint is False
    assert tools["remember"].input_schema["properties"]["text"]["maxLength"] == 2000
    assert "forget" not in tools and "pin" not in tools  # the user decides those in the app
    assert resources == {"assistant://memories/pinned", "assistant://working-memory"}
    [contents] = pinned.contents
    assert isinstance(contents, TextResourceContents)
    assert seeded["pinned"] in contents.text and "Porto" in contents.text
    assert "cello" not in contents.text
    [contents] = working.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.text == "The working memory is empty."


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026 revision, and the handshake
def test_remember_then_search_names_the_client(data_dir: Path, mode: str) -> None:
    async def session(client: Client) -> list[str]:
        said = [text_of(await client.call_tool("remember", {"text": "The user's cat is Miso."}))]
        said.append(text_of(await client.call_tool("search_memory", {"query": "cat name"})))
        said.append(text_of(await client.call_tool("recent_memories", {"limit": 5})))
        return said

    remembered, found, recent = with_client(data_dir, session, mode=mode)
    assert remembered.startswith("Remembered as [")
    assert "No model is set up in Assistant, so the curator's fallback decided" in remembered
    memory = open_memory(data_dir)
    [item] = memory.all()
    memory.load_history()
    [created] = memory.history(item.id)
    memory.close()
    assert (item.text, item.origin, item.client) == (
        "The user's cat is Miso.",
        "mcp",
        "claude-ai",  # clientInfo.name, as the client sent it (shown as Claude Desktop)
    )
    assert (created.type, created.by, created.client) == ("created", "mcp", "claude-ai")
    assert f"[{item.id}]" in remembered
    assert f"[{item.id}]" in found and "Miso" in found
    assert "why: Matches 'cat'" in found and "(current; learned" in found
    assert found.startswith('<data source="memories">')
    assert f"[{item.id}]" in recent
    records = [json.loads(line) for line in (memory_dir(data_dir) / LOG_NAME).open()]
    assert {r["version"] for r in records if r["op"] in ("put", "event")} == {3}


def test_the_same_statement_twice_is_remembered_once(data_dir: Path) -> None:
    async def session(client: Client) -> list[str]:
        args = {"text": "The user prefers tea to coffee.", "kind": "preference"}
        return [text_of(await client.call_tool("remember", args)) for _ in range(2)]

    first, second = with_client(
        data_dir, session, info=Implementation(name="LM Studio", version="1")
    )
    memory = open_memory(data_dir)
    [item] = memory.all()
    memory.close()
    assert item.kind == "preference" and item.client == "LM Studio"
    assert first.startswith("Remembered as")
    assert second.startswith(f"Already remembered as [{item.id}]")


def test_a_forgotten_fact_and_a_pinned_memory_hold(
    data_dir: Path, seeded: dict[str, str], fake_openai: FakeOpenAI
) -> None:
    """With a model: it would supersede the pinned memory; the rules keep it as it is."""
    use_model(data_dir, fake_openai)
    decision = {
        "candidate": 0,
        "action": "SUPERSEDE",
        "target": seeded["pinned"],
        "reason": "moved",
    }
    fake_openai.enqueue(Reply.text(json.dumps({"decisions": [decision]})))

    async def session(client: Client) -> list[str]:
        said = []
        for text in ("The user's old password hint is 'blue whale'.", "The user lives in Lisbon."):
            said.append(text_of(await client.call_tool("remember", {"text": text})))
        return said

    forgotten, pinned = with_client(
        data_dir, session, OPENAI_API_KEY=fake_openai.api_key, OPENAI_BASE_URL=fake_openai.base_url
    )
    assert forgotten.startswith("Not remembered: the user made Assistant forget this")
    assert pinned.startswith(
        f"Not changed: this would change the pinned memory [{seeded['pinned']}]"
    )
    assert len(fake_openai.requests_to("/v1/chat/completions")) == 1  # the decision, once
    memory = open_memory(data_dir)
    texts = sorted(i.text for i in memory.all())
    memory.close()
    assert texts == ["The user lives in Porto.", "The user plays the cello on Sundays."]


def test_a_contradiction_supersedes_with_history(
    data_dir: Path, seeded: dict[str, str], fake_openai: FakeOpenAI
) -> None:
    use_model(data_dir, fake_openai)
    old = seeded["plain"]
    decision = {"candidate": 0, "action": "SUPERSEDE", "target": old, "reason": "took up piano"}
    fake_openai.enqueue(Reply.text(json.dumps({"decisions": [decision]})))

    async def session(client: Client) -> str:
        args = {"text": "The user now plays the piano on Sundays instead of the cello."}
        return text_of(await client.call_tool("remember", args))

    said = with_client(
        data_dir, session, OPENAI_API_KEY=fake_openai.api_key, OPENAI_BASE_URL=fake_openai.base_url
    )
    memory = open_memory(data_dir)
    replaced = memory.get(old)
    assert replaced is not None and replaced.superseded_by is not None
    new = memory.get(replaced.superseded_by)
    memory.load_history()
    events = memory.history(old)
    memory.close()
    assert new is not None and (new.origin, new.client) == ("mcp", "claude-ai")
    assert replaced.state == "archived" and replaced.valid_to is not None
    assert said == (
        f"Remembered as [{new.id}]. It replaces [{old}], which no longer holds (took up piano); "
        'it said "The user plays the cello on Sundays."; the old memory is kept in its history.'
    )
    superseded = events[-1]
    assert (superseded.type, superseded.by, superseded.client) == (
        "superseded",
        "mcp",
        "claude-ai",
    )


def test_bad_input_gets_a_clear_error_and_changes_nothing(data_dir: Path) -> None:
    async def session(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("forget", {"memory_id": "x"}),
            await client.call_tool("search_memory", {"query": "cat", "k": "many"}),
            await client.call_tool("search_memory", {"query": "cat", "k": 500}),
            await client.call_tool("search_memory", {}),
            await client.call_tool("remember", {"text": "x" * 2001}),
            await client.call_tool("remember", {"text": "   "}),
            await client.call_tool("remember", {"text": "A fact.", "kind": "insight"}),
        ]

    results = with_client(data_dir, session)
    assert all(r.is_error for r in results)
    unknown, word, big, missing, long, blank, kind = map(text_of, results)
    assert "Unknown tool: forget" in unknown
    assert "k" in word and "integer" in word
    assert "less than or equal to 20" in big
    assert "query" in missing and "Field required" in missing
    assert "at most 2000 characters" in long
    assert "'text' must be a non-empty text" in blank
    assert "kind" in kind
    memory = open_memory(data_dir)
    assert memory.all() == []
    memory.close()


def test_search_conversations(data_dir: Path) -> None:
    from assistant.memory import ConversationStore

    store = ConversationStore(data_dir)
    cid = store.create("Garden plans").id
    store.append(cid, "user", "Which tomatoes grow well on a balcony?")
    store.close()

    async def session(client: Client) -> list[str]:
        return [
            text_of(await client.call_tool("search_conversations", {"query": "tomatoes"})),
            text_of(await client.call_tool("search_conversations", {"query": "bicycles"})),
        ]

    found, none = with_client(data_dir, session)
    assert found.startswith('<data source="conversations">')
    assert "Garden plans" in found and "balcony" in found
    assert none == "No message matches 'bicycles'."
