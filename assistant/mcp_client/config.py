"""`<data dir>/mcp.json`: the MCP servers the assistant uses, in the `mcpServers` format.

The format is the one Claude Desktop, LM Studio and Jan use: `{"mcpServers": {NAME: {...}}}`
with `command`, `args`, `env` (and `cwd`) for a local server started over stdio, or `url` and
`headers` for a remote one over Streamable HTTP, and `disabled` to keep one without starting it
(Jan writes `"active": false` for that, which is read the same way).

Reading never fails as a whole for one bad server: each one that cannot be used gets a message
naming it, and the others work. Writing is atomic and never loses what was read: entries that
could not be understood, and top-level keys other than `mcpServers`, are written back as they
were; a file that is not JSON at all is never overwritten.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assistant.errors import StorageError
from assistant.fileio import atomic_write_json, refuse_link, storage_error

CONFIG_NAME = "mcp.json"
# An env value kept in the keyring instead of the file (added through Settings).
SECRET_PLACEHOLDER = "<kept in the keyring>"
_FIELDS = frozenset(
    {"command", "args", "env", "cwd", "url", "headers", "disabled", "active", "type"}
)
_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http"}

Transport = Literal["stdio", "http"]


def config_path(root: Path) -> Path:
    """Where the MCP servers of the data dir `root` are listed."""
    return root / CONFIG_NAME


@dataclass(frozen=True)
class ServerConfig:
    """One server: a command to start (stdio) or a URL to reach (Streamable HTTP)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False

    @property
    def transport(self) -> Transport:
        """How the server is reached."""
        return "http" if self.url else "stdio"

    def secret_names(self) -> list[str]:
        """The env variables whose values are kept in the keyring."""
        return [key for key, value in self.env.items() if value == SECRET_PLACEHOLDER]

    def to_json(self) -> dict[str, Any]:
        """The entry as written in mcp.json (fields left at their default are left out)."""
        entry: dict[str, Any] = {}
        if self.url:
            entry["url"] = self.url
            if self.headers:
                entry["headers"] = dict(self.headers)
        else:
            entry["command"] = self.command
            if self.args:
                entry["args"] = list(self.args)
            if self.env:
                entry["env"] = dict(self.env)
            if self.cwd:
                entry["cwd"] = self.cwd
        if self.disabled:
            entry["disabled"] = True
        return entry


def parse_server(name: str, entry: object) -> ServerConfig:
    """One `mcpServers` entry; ValueError with a message naming the server if unusable."""
    where = f"MCP server '{name}'"
    if not name.strip():
        raise ValueError("An MCP server in mcp.json has an empty name.")
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: its entry must be a JSON object.")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        listed = ", ".join(f"'{key}'" for key in unknown)
        raise ValueError(
            f"{where}: unknown field(s) {listed} (known: {', '.join(sorted(_FIELDS))})."
        )
    kind = entry.get("type")
    if kind is not None and kind not in _TYPES:
        raise ValueError(
            f"{where}: transport type {kind!r} is not supported (use a command for stdio, "
            "or a url for Streamable HTTP)."
        )
    command, url = entry.get("command"), entry.get("url")
    if command is not None and url is not None:
        raise ValueError(f"{where}: has both a command and a url; give one.")
    if not command and not url:
        raise ValueError(
            f"{where}: has neither a command (a local server) nor a url (a remote one)."
        )
    if command is not None and not isinstance(command, str):
        raise ValueError(f"{where}: 'command' must be a string.")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ValueError(f"{where}: 'url' must be an http:// or https:// address.")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"{where}: 'args' must be a list of strings.")
    disabled, active = entry.get("disabled", False), entry.get("active", True)
    if not isinstance(disabled, bool):
        raise ValueError(f"{where}: 'disabled' must be true or false.")
    if not isinstance(active, bool):
        raise ValueError(f"{where}: 'active' must be true or false.")
    cwd = entry.get("cwd", "")
    if not isinstance(cwd, str):
        raise ValueError(f"{where}: 'cwd' must be a string.")
    return ServerConfig(
        name=name,
        command=command or "",
        args=tuple(args),
        env=_strings(where, "env", entry.get("env", {})),
        cwd=cwd,
        url=url or "",
        headers=_strings(where, "headers", entry.get("headers", {})),
        disabled=disabled or not active,
    )


def _strings(where: str, key: str, value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{where}: '{key}' must be an object of strings.")
    return dict(value)


@dataclass
class McpConfig:
    """The servers of mcp.json: those usable, and a message for each one that is not."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # server name -> message
    error: str | None = None  # the whole file is unusable (then it is never overwritten)
    raw: dict[str, Any] = field(default_factory=dict)  # the file as read

    @classmethod
    def load(cls, path: Path) -> McpConfig:
        """Read mcp.json; a missing file is an empty list, a broken one a message."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls()
        except OSError as exc:
            return cls(error=str(storage_error("read the MCP servers from", path, exc)))
        try:
            raw = json.loads(data.decode("utf-8"))
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError
            return cls(error=f"{path.name} is not valid JSON ({exc}).")
        if not isinstance(raw, dict):
            return cls(error=f"{path.name} must hold a JSON object with 'mcpServers'.")
        listed = raw.get("mcpServers", {})
        if not isinstance(listed, dict):
            return cls(error=f"{path.name}: 'mcpServers' must be a JSON object of servers.")
        config = cls(raw=raw)
        for name, entry in listed.items():
            try:
                config.servers[name] = parse_server(name, entry)
            except ValueError as exc:
                config.problems[name] = str(exc)
        return config

    def save(self, path: Path) -> None:
        """Write the servers atomically, keeping entries and keys it could not read.

        StorageError if the file as read was unusable: it is the user's to fix, not to replace.
        """
        if self.error is not None:
            raise StorageError(f"{self.error} Fix or remove {path} first; it was left as it is.")
        refuse_link(path)
        listed = self.raw.get("mcpServers", {})
        servers: dict[str, Any] = {}
        for name in dict.fromkeys([*listed, *self.servers]):
            if name in self.servers:
                servers[name] = self.servers[name].to_json()
            elif name in self.problems:
                servers[name] = listed[name]  # not understood: kept as it was
        atomic_write_json(path, {**self.raw, "mcpServers": servers})
        self.raw = {**self.raw, "mcpServers": servers}

    def put(self, server: ServerConfig, old_name: str | None = None) -> None:
        """Add or replace a server (renamed from `old_name`)."""
        if old_name is not None and old_name != server.name:
            self.remove(old_name)
        self.problems.pop(server.name, None)
        self.servers[server.name] = server

    def remove(self, name: str) -> None:
        """Drop a server, usable or not (the user asked)."""
        self.servers.pop(name, None)
        self.problems.pop(name, None)
        listed = self.raw.get("mcpServers")
        if isinstance(listed, dict):
            self.raw = {**self.raw, "mcpServers": {k: v for k, v in listed.items() if k != name}}


CLAUDE_CONFIG = Path("Claude") / "claude_desktop_config.json"


def claude_desktop_config() -> Path:
    """Where Claude Desktop keeps its MCP servers on this OS (the file may not exist).

    macOS: `~/Library/Application Support/Claude`; Windows: `%APPDATA%\\Claude`, or, for the
    Microsoft Store install (whose AppData is virtualized), its package's own copy of it;
    elsewhere `$XDG_CONFIG_HOME/Claude` (Claude Desktop has no Linux build; community ports
    use that).
    """
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / CLAUDE_CONFIG
    if sys.platform == "win32":
        roaming = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
        usual = roaming / CLAUDE_CONFIG
        local = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
        store = sorted(
            (local / "Packages").glob(f"Claude_*/LocalCache/Roaming/{CLAUDE_CONFIG.as_posix()}")
        )
        return usual if usual.exists() or not store else store[0]
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / CLAUDE_CONFIG


def import_servers(config: McpConfig, source: Path) -> tuple[list[str], list[str]]:
    """Add the servers of another app's config (`mcpServers` format) to `config`: the names
    added, and a message for each one left out (a name taken here, or unusable).

    StorageError if the file is missing or is not such a config; nothing is added then.
    """
    found = McpConfig.load(source)
    if not source.exists():
        raise StorageError(f"No config file at {source}: nothing to import.")
    if found.error is not None:
        raise StorageError(f"{found.error} ({source})")
    added: list[str] = []
    skipped = [f"{problem} (not imported)" for problem in found.problems.values()]
    for name, server in found.servers.items():
        if name in config.servers or name in config.problems:
            skipped.append(f"MCP server '{name}' is here already: kept as it is.")
        else:
            config.put(server)
            added.append(name)
    return added, skipped
