"""The window fits the screen it opens on: virtual screens of common laptop sizes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.ui.window.main_window import MEMORY_PANE_FOLDS_BELOW

pytestmark = [pytest.mark.gui, pytest.mark.slow]

PROBE = r"""
import json, sys
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([])
from assistant.ui.window.main_window import MainWindow
from assistant.workspace import Workspace

def measure(win):
    app.processEvents()
    frame, inner = win.frameGeometry(), win.geometry()
    bottom = win.status.mapTo(win, win.status.rect().bottomRight())
    return {
        "available": win.screen().availableGeometry().getRect(),
        "frame": frame.getRect(),
        "status_bottom": inner.top() + bottom.y(),
        "input_bottom": inner.top() + win.input.mapTo(win, win.input.rect().bottomLeft()).y(),
        "panes": [w.isVisible() and w.width() for w in (win.conversations, win.stack, win.sidebar)],
        "minimum": [win.minimumWidth(), win.minimumHeight()],
    }

root = Path(sys.argv[1])
win = MainWindow(Workspace.open(root))
win.show()
first = measure(win)
win.menu.show_memory.setChecked(True)
win.menu.show_conversations.setChecked(True)
all_shown = measure(win)
win.resize(2600, 1600)  # as saved on a bigger screen, or at a larger scale
win.close()
again = MainWindow(Workspace.open(root))
again.show()
restored = measure(again)
again.close()
print(json.dumps({"first": first, "all_shown": all_shown, "restored": restored}))
"""


def inside(rect: list[int], area: list[int]) -> bool:
    x, y, w, h = rect
    ax, ay, aw, ah = area
    return ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah


@pytest.mark.parametrize(
    ("width", "height", "dpr"),
    [(1366, 768, 1.0), (1280, 720, 1.25), (1024, 600, 1.0)],
    ids=["1366x768", "1280x720 at 125%", "1024x600"],
)
def test_the_window_fits_the_screen(tmp_path: Path, width: int, height: int, dpr: float) -> None:
    screen = {
        "name": "virtual",
        "x": 0,
        "y": 0,
        "width": width,
        "height": height,
        "logicalDpi": 96,
        "logicalBaseDpi": 96,
        "dpr": dpr,
    }
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
        "ASSISTANT_DATA_DIR": str(tmp_path / "data"),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for moment in ("first", "all_shown", "restored"):
        seen = found[moment]
        available = seen["available"]
        assert inside(seen["frame"], available), (moment, seen)
        assert seen["status_bottom"] <= available[1] + available[3], (moment, seen)
        assert seen["input_bottom"] < seen["status_bottom"], (moment, seen)
        assert seen["minimum"][0] <= 640
    assert all(found["all_shown"]["panes"]), found["all_shown"]  # each pane has room
    first = found["first"]
    if first["frame"][2] >= MEMORY_PANE_FOLDS_BELOW:
        assert all(first["panes"]), first
    else:  # the memory pane folds away by itself; the other two stay
        assert first["panes"][0] and first["panes"][1] and not first["panes"][2], first
