"""On X11 without Qt's system libraries, the app names what to install instead of aborting."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assistant.ui import app
from assistant.ui.system_libraries import XCB_LIBRARIES, explain, missing_libraries, uses_xcb

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 is Linux's here")


@linux
@pytest.mark.parametrize(
    ("environ", "arguments", "expected"),
    [
        ({"DISPLAY": ":0"}, [], True),
        ({"QT_QPA_PLATFORM": "offscreen"}, [], False),
        ({"QT_QPA_PLATFORM": "xcb"}, [], True),
        ({"QT_QPA_PLATFORM": "offscreen"}, ["-platform", "xcb"], True),
        ({}, ["-platform", "wayland"], False),
        ({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}, [], False),
        ({"XDG_SESSION_TYPE": "x11", "WAYLAND_DISPLAY": "wayland-0"}, [], True),
    ],
)
def test_the_check_runs_only_where_qt_uses_x11(
    environ: dict[str, str], arguments: list[str], expected: bool
) -> None:
    assert uses_xcb(environ, arguments) is expected


def test_missing_libraries_are_named_with_their_packages() -> None:
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    missing = missing_libraries(lambda name: name not in absent)
    assert missing == {
        "libxcb-icccm.so.4": "libxcb-icccm4",
        "libxcb-keysyms.so.1": "libxcb-keysyms1",
    }
    message = explain(missing)
    assert "libxcb-icccm.so.4" in message
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1" in message
    assert missing_libraries(lambda _name: True) == {}
    assert set(missing_libraries(lambda _name: False)) == set(XCB_LIBRARIES)


@linux
def test_the_app_says_what_to_install_and_opens_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = missing_libraries(lambda name: name != "libxcb-cursor.so.0")
    monkeypatch.setattr(app, "missing_libraries", lambda: missing)
    monkeypatch.setattr(app, "_application", lambda *_a: pytest.fail("Qt was started"))
    assert app.run_app(tmp_path, ["-platform", "xcb"]) == 1
    assert "sudo apt install libxcb-cursor0" in capsys.readouterr().err
