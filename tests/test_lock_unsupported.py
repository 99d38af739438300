"""A data directory whose file system cannot lock (ENOLCK, EOPNOTSUPP on some network shares)
gives one clear sentence in the window and on the command line, never a traceback."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.cli import main
from assistant.datalock import DataDirLock, LockingUnsupportedError
from assistant.ui import app as app_module
from tests.data import exports

CODES = [errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EIO]


@pytest.fixture(params=CODES, ids=[errno.errorcode[c] for c in CODES])
def no_locks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    code: int = request.param

    def flock(fd: int, operation: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(fcntl, "flock", flock)
    return code


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_lock_says_why_in_one_sentence(data_dir: Path, no_locks: int) -> None:
    data_dir.mkdir(parents=True)
    before = open_fds()
    with pytest.raises(LockingUnsupportedError) as caught:
        DataDirLock(data_dir).acquire()
    message = str(caught.value)
    assert "does not support file locks" in message and str(data_dir) in message
    assert os.strerror(no_locks) in message
    assert message.count(". ") == 0 and message.endswith(".")
    assert open_fds() == before  # the lock file is not left open


@pytest.mark.parametrize("command", ["import", "export"])
def test_the_cli_says_it_in_one_line(
    data_dir: Path, no_locks: int, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    target = exports.HERE / "chatgpt-realistic.json"
    args = [command, str(target if command == "import" else data_dir.parent / "out.json")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "does not support file locks" in err and "Traceback" not in err


def test_the_window_says_it_in_one_message_box(
    qtbot: QtBot, data_dir: Path, no_locks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(
        app_module.QMessageBox, "critical", lambda parent, title, text: shown.append(text)
    )
    data_dir.mkdir(parents=True)
    assert app_module.run_app(data_dir) == 1
    assert len(shown) == 1
    assert "does not support file locks" in shown[0]
