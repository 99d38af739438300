"""mcp.json: read per server with clear messages, written atomically without losing anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from assistant.errors import StorageError
from assistant.mcp_client.config import (
    SECRET_PLACEHOLDER,
    McpConfig,
    ServerConfig,
    claude_desktop_config,
    import_servers,
    parse_server,
)


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
        ({"command": "x", "active": 1}, "'active' must be true or false"),
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


def _claude_file(path: Path, server: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write(path, json.dumps({"mcpServers": {server: {"command": "npx", "args": [server]}}}))


def _imports(source: Path, server: str) -> None:
    config = McpConfig()
    assert import_servers(config, source) == ([server], [])
    assert config.servers[server].args == (server,)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home dir of its own, with none of the platforms' variables set."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for name in ("APPDATA", "LOCALAPPDATA", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_claude_desktop_config_on_macos(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    expected = home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    assert claude_desktop_config() == expected
    with pytest.raises(StorageError, match=r"No config file at .*Application Support"):
        import_servers(McpConfig(), claude_desktop_config())
    _imports(_claude_file(expected, "files"), "files")


def test_claude_desktop_config_on_windows(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    default = home / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"
    assert claude_desktop_config() == default  # without APPDATA: under the home dir
    roaming = tmp_path / "Roaming"
    monkeypatch.setenv("APPDATA", str(roaming))
    usual = roaming / "Claude" / "claude_desktop_config.json"
    assert claude_desktop_config() == usual
    # The Microsoft Store install keeps it in its package; found when the usual one is absent.
    local = tmp_path / "Local"
    monkeypatch.setenv("LOCALAPPDATA", str(local))
    package = local / "Packages" / "Claude_pzs8sxrjxfjjc" / "LocalCache" / "Roaming"
    store = _claude_file(package / "Claude" / "claude_desktop_config.json", "store")
    assert claude_desktop_config() == store
    _imports(claude_desktop_config(), "store")
    _claude_file(usual, "files")
    assert claude_desktop_config() == usual
    _imports(claude_desktop_config(), "files")


def test_claude_desktop_config_elsewhere(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    assert claude_desktop_config() == home / ".config" / "Claude" / "claude_desktop_config.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    expected = tmp_path / "config" / "Claude" / "claude_desktop_config.json"
    assert claude_desktop_config() == expected
    _imports(_claude_file(expected, "files"), "files")
