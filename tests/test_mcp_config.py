"""mcp.json: read per server with clear messages, written atomically without losing anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.errors import StorageError
from assistant.mcp_client.config import SECRET_PLACEHOLDER, McpConfig, ServerConfig, parse_server


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_missing_file_is_no_servers(tmp_path: Path) -> None:
    config = McpConfig.load(tmp_path / "mcp.json")
    assert config.servers == {} and config.problems == {} and config.error is None


def test_both_kinds_of_server_are_read(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": "npx", "args": ["-y", "fs", "/tmp"], "env": {"A": "1"}},
                    "remote": {"url": "https://mcp.example/mcp", "headers": {"X-Key": "k"}},
                    "off": {"command": "x", "disabled": True},
                }
            }
        ),
    )
    config = McpConfig.load(path)
    files, remote = config.servers["files"], config.servers["remote"]
    assert files.transport == "stdio" and files.args == ("-y", "fs", "/tmp")
    assert files.env == {"A": "1"}
    assert remote.transport == "http" and remote.headers == {"X-Key": "k"}
    assert config.servers["off"].disabled
    assert config.problems == {}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"cmd": "x"}, "MCP server 'bad': unknown field(s) 'cmd'"),
        ({"args": ["a"]}, "MCP server 'bad': has neither a command"),
        ({"command": "x", "url": "http://h/mcp"}, "has both a command and a url"),
        ({"url": "ftp://h"}, "'url' must be an http:// or https:// address"),
        ({"command": "x", "args": "a b"}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"A": 1}}, "'env' must be an object of strings"),
        ({"command": "x", "disabled": "yes"}, "'disabled' must be true or false"),
        ({"url": "http://h/mcp", "type": "sse"}, "transport type 'sse' is not supported"),
        ("npx server", "its entry must be a JSON object"),
    ],
)
def test_a_bad_server_is_named_and_the_others_work(
    tmp_path: Path, entry: object, message: str
) -> None:
    path = write(
        tmp_path / "mcp.json",
        json.dumps({"mcpServers": {"good": {"command": "x"}, "bad": entry}}),
    )
    config = McpConfig.load(path)
    assert list(config.servers) == ["good"]
    assert message in config.problems["bad"]
    assert "'bad'" in config.problems["bad"] or "bad" in config.problems["bad"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "mcp.json is not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"mcpServers": []}', "'mcpServers' must be a JSON object"),
        (b"\xff\xfe{}", "mcp.json is not valid JSON"),
    ],
)
def test_an_unusable_file_says_why_and_is_never_overwritten(
    tmp_path: Path, text: str | bytes, message: str
) -> None:
    path = tmp_path / "mcp.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        write(path, text)
    before = path.read_bytes()
    config = McpConfig.load(path)
    assert config.error is not None and message in config.error
    config.put(ServerConfig("new", command="x"))
    with pytest.raises(StorageError, match="left as it is"):
        config.save(path)
    assert path.read_bytes() == before


def test_saving_keeps_what_it_could_not_read(tmp_path: Path) -> None:
    original = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "broken": {"command": "x", "autoApprove": ["read"]},
            "kept": {"command": "x", "args": ["1"]},
        },
    }
    path = write(tmp_path / "mcp.json", json.dumps(original))
    config = McpConfig.load(path)
    config.put(ServerConfig("added", url="http://127.0.0.1:9/mcp"))
    config.save(path)
    saved = json.loads(path.read_text())
    assert saved["globalShortcut"] == "Ctrl+Space"
    assert saved["mcpServers"]["broken"] == original["mcpServers"]["broken"]
    assert saved["mcpServers"]["kept"] == {"command": "x", "args": ["1"]}
    assert saved["mcpServers"]["added"] == {"url": "http://127.0.0.1:9/mcp"}
    assert list(saved["mcpServers"]) == ["broken", "kept", "added"]


def test_removing_and_renaming(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mcp.json",
        json.dumps({"mcpServers": {"a": {"command": "x"}, "b": {"bogus": 1}}}),
    )
    config = McpConfig.load(path)
    config.remove("b")
    config.put(ServerConfig("c", command="y"), old_name="a")
    config.save(path)
    assert json.loads(path.read_text()) == {"mcpServers": {"c": {"command": "y"}}}
    assert McpConfig.load(path).servers["c"].command == "y"


def test_a_written_file_reads_back_the_same(tmp_path: Path) -> None:
    server = ServerConfig(
        "s", command="run", args=("a",), env={"T": SECRET_PLACEHOLDER}, cwd="/w", disabled=True
    )
    config = McpConfig()
    config.put(server)
    config.save(tmp_path / "mcp.json")
    again = McpConfig.load(tmp_path / "mcp.json").servers["s"]
    assert again == server
    assert again.secret_names() == ["T"]
    assert parse_server("s", server.to_json()) == server
