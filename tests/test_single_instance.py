"""A second start on the same data dir hands over to the running app through a local socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from assistant.datalock import DataDirLock
from assistant.ui.single_instance import InstanceServer
from tests import child

pytestmark = pytest.mark.gui
REPO = Path(__file__).resolve().parent.parent

EXPORTS = Path(__file__).parent / "data" / "exports"


@pytest.fixture
def running_app(data_dir: Path) -> Iterator[InstanceServer]:
    """What a running app holds: the data dir's lock and the listening server."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with DataDirLock(data_dir):
        server = InstanceServer()
        assert server.listen(data_dir)
        yield server
        server.close()


def test_cli_import_hands_the_file_to_the_running_app(
    qtbot: QtBot, running_app: InstanceServer
) -> None:
    source = EXPORTS / "chatgpt-realistic.json"
    with qtbot.waitSignal(running_app.import_file, timeout=30000) as got:
        proc = child.start_assistant("import", str(source))
    out, err = proc.communicate(timeout=60)
    assert got.args == [str(source.resolve())]
    assert proc.returncode == 0, err
    assert "import preview is shown in its window" in out


def test_a_second_start_brings_the_running_window_to_the_front(
    qtbot: QtBot, running_app: InstanceServer
) -> None:
    with qtbot.waitSignal(running_app.activate, timeout=30000):
        proc = child.start_assistant()
    proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_a_second_start_without_an_answer_is_refused(data_dir: Path) -> None:
    """The lock is held but nobody listens (a CLI export, say): say so, change nothing."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with DataDirLock(data_dir):
        proc = child.start_assistant("export", str(data_dir / "out.json"))
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert err.count("\n") == 1 and "already using" in err
    assert not (data_dir / "out.json").exists()
