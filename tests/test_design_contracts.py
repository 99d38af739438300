"""The contracts of the design page, checked from the outside: the real command in a child
process, real files in a temp data dir, read back as a user or another program would."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import Implementation, TextContent

from assistant.credentials import Credentials
from assistant.drafts import write_drafts
from assistant.instructions import Instructions
from assistant.mcp_client.config import McpConfig, config_path
from assistant.mcp_client.status import McpTool
from assistant.memory import ConversationStore, Proposal
from assistant.memory.ranking import SearchConfig, fuse_rankings
from assistant.paths import drafts_file, settings_file
from assistant.settings import Settings
from assistant.transfer import export_data
from assistant.workspace import Workspace
from tests import child
from tests.fake_openai import FakeOpenAI, Reply
from tests.files import make_pdf
from tests.test_conversation_search import ConceptEmbedder, fill

pytestmark = pytest.mark.slow

MESSAGE_FIELDS = {"id", "parent_id", "role", "content", "created_at"}
OPTIONAL_MESSAGE_FIELDS = {"tool_calls", "tool_call_id", "name", "memory_ids"}


def two_conversations(root: Path) -> dict[str, str]:
    """A trip (with a tool call and the memories of a reply) and a recipe; their ids."""
    store = ConversationStore(root)
    trip = store.create("Trip").id
    ask = store.append(trip, "user", "Remember that I fly to Lisbon on Friday")
    call = {"id": "call_1", "type": "function", "function": {"name": "remember", "arguments": "{}"}}
    store.append(trip, "assistant", "", tool_calls=[call])
    store.append(trip, "tool", "Remembered.", tool_call_id="call_1", name="remember")
    store.append(trip, "assistant", "Noted: Lisbon on Friday.", memory_ids=["m1"])
    recipe = store.create("Recipe").id
    store.append(recipe, "user", "How long do I boil an egg?")
    store.close()
    return {"trip": trip, "recipe": recipe, "ask": ask.id}


def test_assistant_export_writes_the_contract_format(tmp_path: Path) -> None:
    root = tmp_path / "flag-dir"  # --data-dir, not the ASSISTANT_DATA_DIR of every test
    ids = two_conversations(root)
    out = tmp_path / "out.json"
    result = child.assistant("--data-dir", str(root), "export", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert list(doc) == ["format", "version", "exported_at", "app", "conversations"]
    assert (doc["format"], doc["version"]) == ("assistant.export", 1)
    assert set(doc["app"]) == {"name", "version"} and doc["app"]["name"] == "Assistant"
    assert [c["id"] for c in doc["conversations"]] == [ids["trip"], ids["recipe"]]
    trip = doc["conversations"][0]
    assert set(trip) == {"id", "title", "created_at", "updated_at", "summary", "messages"}
    for message in trip["messages"]:
        assert MESSAGE_FIELDS <= set(message) <= MESSAGE_FIELDS | OPTIONAL_MESSAGE_FIELDS | {"ok"}
    ask, call, tool, reply = trip["messages"]
    assert (ask["id"], ask["parent_id"], ask["role"]) == (ids["ask"], None, "user")
    assert call["parent_id"] == ask["id"]
    assert call["tool_calls"][0]["function"]["name"] == "remember"
    assert (tool["tool_call_id"], tool["name"]) == ("call_1", "remember")
    assert reply["memory_ids"] == ["m1"]


def test_assistant_export_conversation_writes_only_that_one(tmp_path: Path) -> None:
    ids = two_conversations(tmp_path / "data")
    out = tmp_path / "one.json"
    result = child.assistant("export", str(out), "--conversation", ids["recipe"])
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [c["title"] for c in doc["conversations"]] == ["Recipe"]
    missing = tmp_path / "none.json"
    result = child.assistant("export", str(missing), "--conversation", "no-such-id")
    assert result.returncode == 1
    assert "no-such-id" in result.stderr
    assert not missing.exists()


def test_an_export_is_version_2_only_with_what_version_2_added(data_dir: Path) -> None:
    workspace = Workspace.open(data_dir, embed=False)
    try:
        workspace.conversations.create("Plain")
        assert export_data(workspace)["version"] == 1
        with_instructions = export_data(workspace, instructions=Instructions(about="I cook."))
        assert with_instructions["version"] == 2
        workspace.projects.create("Garden")
        doc = export_data(workspace)
        assert (doc["version"], [p["name"] for p in doc["projects"]]) == (2, ["Garden"])
    finally:
        workspace.close()


def test_assistant_mcp_offers_search_memory_and_remember_and_names_the_client(
    tmp_path: Path,
) -> None:
    """The SDK's classic client (`ClientSession` over `stdio_client`) against `assistant mcp
    --data-dir DIR`: the memory it writes has origin `mcp` and the client's `clientInfo.name`."""
    root = tmp_path / "mcp-data"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "assistant", "mcp", "--data-dir", str(root)],
        env=child.environment(),
        cwd=str(child.REPO),
    )
    info = Implementation(name="contract-client", title="Contract Client", version="1.0")

    async def session() -> tuple[dict[str, Any], str]:
        async with (
            stdio_client(server) as (read, write),
            ClientSession(read, write, client_info=info) as client,
        ):
            await client.initialize()
            tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            await client.call_tool("remember", {"text": "The user's bike is a red Gazelle."})
            found = await client.call_tool("search_memory", {"query": "bike", "k": 3})
            [content] = found.content
            assert isinstance(content, TextContent)
            return tools, content.text

    tools, found = anyio.run(session)
    assert tools["search_memory"]["required"] == ["query"]
    assert {"query", "k"} <= set(tools["search_memory"]["properties"])
    assert tools["remember"]["required"] == ["text"]
    assert "red Gazelle" in found
    records = [json.loads(line) for line in (root / "memory" / "semantic.jsonl").open()]
    [item] = [r["item"] for r in records if r["op"] == "put"]
    assert (item["text"], item["origin"], item["client"]) == (
        "The user's bike is a red Gazelle.",
        "mcp",
        "contract-client",
    )


@pytest.mark.parametrize("opened", ["constructor", "open"])
def test_conversation_store_takes_any_embedder_and_finds_messages_by_meaning(
    tmp_path: Path, opened: str
) -> None:
    """`ConversationStore(root, embedder=...)` or `.open(root, embedder=...)`: `search(query,
    k)` is hybrid (a word the message does not have finds it by meaning) and names the
    message."""
    root = tmp_path / "data"
    make = ConversationStore.open if opened == "open" else ConversationStore
    store = make(root, embedder=ConceptEmbedder())
    try:
        ids = fill(store)
        store.embed_pending()
        hits = store.search("car", k=3)
        assert hits[0].message_id == ids["ask"]  # "automobile", by meaning alone
        assert store.search("puppy", 1)[0].message_id == ids["puppy"]
    finally:
        store.close()
    assert (root / "conversations").is_dir()


def test_every_data_file_is_json_with_a_version_and_files_are_read_where_they_are(
    data_dir: Path, tmp_path: Path
) -> None:
    """Plain JSON and JSON Lines, each (every line of a log) with a `version`, in the layout
    the design suggests; a knowledge folder's files are indexed, never copied in."""
    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "ferry.pdf", ["The ferry to Porto leaves at nine."])
    (docs / "notes.md").write_text("# Garden\n\nTomatoes go by the south wall.\n")
    workspace = Workspace.open(data_dir)
    try:
        workspace.settings.chat_model = "contract-model"
        workspace.save_settings()
        garden = workspace.projects.create("Garden")
        cid = workspace.conversations.create("Chat", project=garden.id).id
        asked = workspace.conversations.append(cid, "user", "Where do tomatoes go?")
        workspace.conversations.append(cid, "assistant", "By the south wall.")
        workspace.conversations.set_summary(cid, "About tomatoes.", asked.id)
        workspace.working.update(cid, task="Plan the garden", push_subgoal="Buy seeds")
        kept = workspace.memory.add("The user grows tomatoes", project=garden.id)
        workspace.memory.pin(kept.id)
        gone = workspace.memory.add("The user's locker code is 1234")
        workspace.memory.forget(gone.id)
        workspace.topics.add_memory("garden", kept.id)
        workspace.inbox.propose([Proposal("The user likes basil")])
        write_drafts(drafts_file(data_dir), {cid: "and the basil?"})
        workspace.knowledge.set_sources(workspace.knowledge.sources.with_folder(str(docs)))
        assert workspace.knowledge.sync() == 2
        workspace.conversations.embed_pending()
    finally:
        workspace.close()
    layout = {
        "settings.json",
        "drafts.json",
        "memory/semantic.jsonl",
        "memory/working.json",
        f"conversations/{cid}.jsonl",
        f"projects/{garden.id}.json",
    }
    found = {p.relative_to(data_dir).as_posix() for p in data_dir.rglob("*") if p.is_file()}
    assert layout <= found
    assert any(re.fullmatch(r"memory/vectors-.+\.npy", name) for name in found)
    logs = {"memory/semantic.jsonl", f"conversations/{cid}.jsonl"}  # every record versioned
    unversioned = []
    for name in sorted(found):
        path = data_dir / name
        if path.suffix == ".json":
            docs_in = [json.loads(path.read_text(encoding="utf-8"))]
        elif path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            docs_in = [json.loads(line) for line in (lines if name in logs else lines[:1])]
        else:  # binary caches rebuilt from the rest, and a marker that holds no data
            assert path.suffix in {".npy", ".npz", ".bin"} or path.name == ".writes", name
            continue
        unversioned += [name for doc in docs_in if not isinstance(doc.get("version"), int)]
    assert unversioned == []
    ferry = (docs / "ferry.pdf").read_bytes()
    copied = [n for n in found if (data_dir / n).read_bytes() == ferry or n.endswith(".pdf")]
    assert copied == []
    assert "locker code" not in "".join((data_dir / n).read_text("latin-1") for n in found)


def test_openai_environment_variables_override_the_keyring_and_the_settings(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Settings name a dead server and the keyring holds another key: the chat and the server's
    embeddings go to `OPENAI_BASE_URL` with `OPENAI_API_KEY`."""
    Settings(
        provider="custom",
        base_url="http://127.0.0.1:9/v1",
        chat_model="contract-model",
        embedding_model="embed-model",
    ).save(settings_file(data_dir))
    Credentials().set_api_key("sk-from-the-keyring")
    with FakeOpenAI(required_api_key="sk-from-the-environment") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
        server.enqueue(Reply.text("Hello."))
        workspace = Workspace.open(data_dir)
        try:
            reply = workspace.provider().chat([{"role": "user", "content": "Hi"}])
            assert reply.content == "Hello."
            assert workspace.embedder is not None
            assert workspace.embedder.embed(["a text"]).shape[0] == 1
        finally:
            workspace.close()
        paths = [r.path for r in server.requests]
        keys = {r.headers["authorization"] for r in server.requests}
    assert paths == ["/v1/chat/completions", "/v1/embeddings"]
    assert keys == {"Bearer sk-from-the-environment"}


def test_reciprocal_rank_fusion_with_k_60_stays_available() -> None:
    """The design's fusion (RRF, k = 60) is `SearchConfig(fusion="rrf")`; the default is a
    weighted sum of normalised scores, which ranked better (docs/benchmarks.md)."""
    config = SearchConfig(fusion="rrf")
    assert config.rrf_k == 60
    fused = fuse_rankings([("a", 9.0), ("b", 5.0)], [("b", 0.9), ("c", 0.8)], config)
    relevance = dict(zip(fused.order, fused.relevance.tolist(), strict=True))
    # Each rank r adds 1/(60 + r), scaled so that first in both rankings is 1.
    expected = {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62}
    for key, value in expected.items():
        assert relevance[key] == pytest.approx(value * 61 / 2)
    assert SearchConfig().fusion == "convex"
    assert fuse_rankings([], [], config).order == []  # nothing found by either: no hits


@pytest.mark.parametrize(
    ("read_only", "destructive", "asks"),
    [(False, False, True), (False, True, True), (True, True, True), (True, False, False)],
)
def test_an_mcp_tool_asks_unless_read_only_and_not_destructive(
    read_only: bool, destructive: bool, asks: bool
) -> None:
    tool = McpTool("shop", "refund_order", "", {}, read_only=read_only, destructive=destructive)
    assert tool.may_change_things is asks


def test_mcp_json_as_claude_desktop_lm_studio_and_jan_write_it(data_dir: Path) -> None:
    """`mcpServers` with command, args and env (stdio), url and headers (Streamable HTTP),
    `disabled`; Jan writes `"active": false` for a server kept but not started."""
    data_dir.mkdir(parents=True, exist_ok=True)
    servers = {
        "files": {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "/tmp"}},
        "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}},
        "off": {"command": "uvx", "args": ["x"], "disabled": True},
        "jan-off": {"command": "uvx", "args": ["y"], "env": {}, "active": False},
        "jan-on": {"command": "uvx", "args": ["z"], "env": {}, "active": True},
    }
    (data_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    config = McpConfig.load(config_path(data_dir))
    assert config.problems == {} and config.error is None
    read = config.servers
    assert (read["files"].transport, read["files"].env) == ("stdio", {"ROOT": "/tmp"})
    assert (read["remote"].transport, read["remote"].headers["Authorization"]) == (
        "http",
        "Bearer t",
    )
    off = {name for name, server in read.items() if server.disabled}
    assert off == {"off", "jan-off"}
