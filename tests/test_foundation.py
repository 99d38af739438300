"""Paths, settings, credentials, the CLI and the rule that the core never imports Qt."""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import stat
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest

from assistant import __version__
from assistant.cli import main
from assistant.credentials import KEYRING_SERVICE, KEYRING_USERNAME, Credentials
from assistant.errors import CredentialError, StorageError
from assistant.fileio import atomic_write_bytes
from assistant.paths import data_dir
from assistant.settings import Settings
from tests import child
from tests.conftest import MemoryKeyring


def test_data_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_dir = tmp_path / "env"
    flag_dir = tmp_path / "flag"
    monkeypatch.setenv("ASSISTANT_DATA_DIR", str(env_dir))
    assert data_dir(flag_dir) == flag_dir.resolve()
    assert data_dir() == env_dir.resolve()
    monkeypatch.delenv("ASSISTANT_DATA_DIR")
    platform_dir = data_dir()
    assert platform_dir.is_relative_to(tmp_path / "xdg-data")
    assert platform_dir.name == "Assistant"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_data_dir_is_private(tmp_path: Path) -> None:
    path = data_dir(tmp_path / "new" / "dir")
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_settings_round_trip(data_dir: Path) -> None:
    path = data_dir / "settings.json"
    settings = Settings(provider="ollama", chat_model="llama3.1", memories_per_prompt=3)
    settings.ui_state["geometry"] = "abc"
    settings.save(path)
    loaded, warnings = Settings.load(path)
    assert warnings == []
    assert loaded == settings
    assert json.loads(path.read_text())["version"] == 1


def test_settings_defaults_when_missing(data_dir: Path) -> None:
    loaded, warnings = Settings.load(data_dir / "settings.json")
    assert loaded == Settings()
    assert warnings == []


def test_corrupt_settings_are_moved_aside(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "settings.json"
    path.write_text("{not json", encoding="utf-8")
    loaded, warnings = Settings.load(path)
    assert loaded == Settings()
    assert len(warnings) == 1
    assert "moved it to settings.json.corrupt-" in warnings[0]
    aside = list(data_dir.glob("settings.json.corrupt-*"))
    assert [p.read_text() for p in aside] == ["{not json"]


def test_invalid_setting_values_fall_back_per_field(data_dir: Path) -> None:
    raw = {
        "version": 1,
        "provider": "nope",
        "chat_model": "m",
        "max_steps": "8",
        "memories_per_prompt": -1,
    }
    loaded, warnings = Settings.from_json(raw)
    assert loaded.chat_model == "m"
    assert loaded.provider == Settings().provider
    assert loaded.max_steps == Settings().max_steps
    assert loaded.memories_per_prompt == Settings().memories_per_prompt
    assert len(warnings) == 3


def test_the_archive_delay_of_older_versions_gives_way_to_the_half_life() -> None:
    loaded, warnings = Settings.from_json({"version": 1, "decay_days": 30})
    assert (loaded.decay_half_life_days, warnings) == (180.0, [])
    assert "decay_days" not in loaded.to_json()


@pytest.mark.parametrize(
    ("value", "expected"), [(30, 30), (45.5, 45.5), (0, 180.0), (-3, 180.0), (True, 180.0)]
)
def test_decay_half_life_is_a_positive_number_of_days(value: object, expected: float) -> None:
    loaded, warnings = Settings.from_json({"version": 1, "decay_half_life_days": value})
    assert loaded.decay_half_life_days == expected
    assert len(warnings) == (expected != value)
    assert Settings().decay_half_life_days == 180.0


def test_base_url_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(provider="ollama").effective_base_url() == "http://127.0.0.1:11434/v1"
    assert (
        Settings(provider="custom", base_url="http://h:1/v1").effective_base_url()
        == "http://h:1/v1"
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert Settings(provider="ollama").effective_base_url() == "http://127.0.0.1:9/v1"


def test_atomic_write_keeps_old_file_when_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.json"
    atomic_write_bytes(path, b"old")

    def fail(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(StorageError, match=r"Could not write .*f\.json: the disk is full"):
        atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_key_is_stored_in_keyring_not_in_files(
    memory_keyring: MemoryKeyring, data_dir: Path
) -> None:
    creds = Credentials()
    creds.set_api_key("sk-secret-123")
    assert memory_keyring.passwords[(KEYRING_SERVICE, KEYRING_USERNAME)] == "sk-secret-123"
    assert Credentials().api_key() == "sk-secret-123"
    Settings().save(data_dir / "settings.json")
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert b"sk-secret-123" not in path.read_bytes()
    assert "keyring" in creds.source()
    creds.delete_api_key()
    assert Credentials().api_key() is None


def test_environment_key_overrides_keyring(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    Credentials().set_api_key("from-keyring")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    creds = Credentials()
    assert creds.api_key() == "from-env"
    assert "OPENAI_API_KEY" in creds.source()


def test_failing_keyring_keeps_key_for_this_run_only() -> None:
    keyring.set_keyring(keyring.backends.fail.Keyring())
    creds = Credentials()
    assert not creds.keyring_available()
    assert creds.api_key() is None
    with pytest.raises(CredentialError, match="session only"):
        creds.set_api_key("sk-temp")
    assert creds.api_key() == "sk-temp"
    assert "session only" in creds.source()
    assert Credentials().api_key() is None


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert __version__ in capsys.readouterr().out


@pytest.mark.slow
def test_self_test_builds_window_offscreen(data_dir: Path) -> None:
    result = child.assistant("--self-test", "--timing")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("SELF-TEST OK")
    assert "window shown after" in result.stdout
    assert "window ready after" in result.stdout
    assert data_dir.is_dir()


@pytest.mark.slow
def test_self_test_reports_unwritable_data_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = child.assistant("--self-test", "--data-dir", str(blocker / "sub"))
    assert result.returncode != 0
    assert "SELF-TEST OK" not in result.stdout
    assert "data directory" in result.stderr


def test_nothing_outside_the_ui_imports_qt() -> None:
    """Every module of the package but `assistant.ui` (and `__main__`, which starts it)."""
    code = (
        "import sys, pkgutil, importlib, assistant\n"
        "for top in pkgutil.iter_modules(assistant.__path__, 'assistant.'):\n"
        "    if top.name in ('assistant.ui', 'assistant.__main__'):\n"
        "        continue\n"
        "    module = importlib.import_module(top.name)\n"
        "    if top.ispkg:\n"
        "        for m in pkgutil.walk_packages(module.__path__, top.name + '.'):\n"
        "            importlib.import_module(m.name)\n"
        "assert {'assistant.workspace', 'assistant.mcp_client.manager'} <= set(sys.modules)\n"
        "qt = sorted(m for m in sys.modules if m.startswith('PySide6'))\n"
        "print(qt)\n"
        "sys.exit(1 if qt else 0)\n"
    )
    result = child.python("-c", code)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_ui_calls_the_agent_only_through_the_worker() -> None:
    """Ruff keeps `assistant.agent` imports out of the UI; this keeps out the calls that reach
    the agent through the Workspace (building an agent or a provider, reflecting)."""
    ui = Path(__file__).resolve().parent.parent / "assistant" / "ui"
    agent_calls = re.compile(r"\.(agent|provider|reflect)\(")
    found = [
        f"{path.relative_to(ui)}:{number}: {line.strip()}"
        for path in sorted(ui.rglob("*.py"))
        if path.name != "worker.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if agent_calls.search(line)
    ]
    assert found == []


def test_network_guard_blocks_non_loopback() -> None:
    with pytest.raises(AssertionError, match="network"):
        socket.create_connection(("203.0.113.1", 443), timeout=1)
    with pytest.raises(AssertionError, match="resolve"):
        socket.getaddrinfo("api.openai.com", 443)
