"""Before Qt opens a window on X11: the system libraries its xcb plugin needs, by name.

Without one, Qt aborts with a generic "could not load the Qt platform plugin" error; this
names the missing libraries and the Debian/Ubuntu packages that bring them.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Mapping, Sequence

# What PySide6's libqxcb.so and libQt6XcbQpa.so need beyond a base system, and the Debian
# package of each (Ubuntu's names are the same).
XCB_LIBRARIES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}


def _loads(name: str) -> bool:
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def uses_xcb(environ: Mapping[str, str], qt_arguments: Sequence[str]) -> bool:
    """Whether Qt will open its window through X11 (xcb) on this system."""
    if not sys.platform.startswith("linux"):
        return False
    arguments = list(qt_arguments)
    if "-platform" in arguments[:-1]:
        chosen = arguments[arguments.index("-platform") + 1]
    else:
        chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":")[0].split(";")[0] == "xcb"
    return environ.get("XDG_SESSION_TYPE") != "wayland" or not environ.get("WAYLAND_DISPLAY")


def missing_libraries(load: Callable[[str], bool] = _loads) -> dict[str, str]:
    """The libraries of `XCB_LIBRARIES` that cannot be loaded, with their packages."""
    return {name: package for name, package in XCB_LIBRARIES.items() if not load(name)}


def explain(missing: Mapping[str, str]) -> str:
    """What to tell the user about `missing` libraries."""
    return (
        "Assistant cannot open its window: Qt needs system libraries for X11 that are "
        f"missing ({', '.join(missing)}).\nOn Debian or Ubuntu, install them with:\n"
        f"    sudo apt install {' '.join(dict.fromkeys(missing.values()))}"
    )
