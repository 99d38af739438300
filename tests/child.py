"""Running Python, or the app's command line, in a child process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 120  # a guard against a hang, not a speed limit


def environment(root: Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment (the test's data dir, no network keyring), plus `extra`."""
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", **extra}
    if root is not None:
        env["ASSISTANT_DATA_DIR"] = str(root)
    return env


def python(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python ARGS` to completion, its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=REPO,
        env=env if env is not None else environment(),
        check=False,
    )


def assistant(*args: str, root: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`assistant ARGS` to completion (offscreen), with `root` as its data dir if given."""
    return python("-m", "assistant", *args, env=environment(root, QT_QPA_PLATFORM="offscreen"))


def start_assistant(*args: str) -> subprocess.Popen[str]:
    """`assistant ARGS` started in the background, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "assistant", *args],
        cwd=REPO,
        env=environment(QT_QPA_PLATFORM="offscreen"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
