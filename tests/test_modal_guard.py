"""A test that leaves a modal dialog open fails with a clear message instead of hanging the run
(`tests/modal_guard.py`): a test that does, run by pytest in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HANG_GUARD_S = 300  # only if the run hangs (the guard's deadline is 1 s there)

HANGING = """
from PySide6.QtWidgets import QMessageBox


def test_asks_and_nobody_answers(qtbot):
    box = QMessageBox(QMessageBox.Icon.Question, "Delete everything?", "Sure?")
    box.exec()  # nothing patched it out: without the guard, the run waits here for good


def test_after_it(qtbot):
    assert True
"""


@pytest.mark.slow
def test_a_modal_dialog_left_open_fails_its_test_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "test_hangs.py").write_text(HANGING, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nqt_api = pyside6\n", encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "ASSISTANT_TEST_MODAL_DEADLINE_S": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    plugins = ["-p", "tests.modal_guard", "-p", "no:randomly", "-p", "no:cacheprovider"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "-q", "-rA", str(tmp_path / "test_hangs.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "2 passed, 1 error" in out, out  # the test after it ran
    assert "ERROR at teardown of test_asks_and_nobody_answers" in out, out
    assert (
        "The test left a modal dialog open for more than 1 s (QMessageBox 'Delete everything?'); "
        "it was closed." in out
    ), out
