"""PyInstaller hook for PySide6.QtGui: the stock one, minus the Qt plugins Assistant never loads.

It replaces the stock hook (hooks in the spec's `hookspath` take precedence), so the libraries
those plugins link (the EGLFS integration, GTK with cairo and pango) are not collected.
"""

from pathlib import PurePath

from PyInstaller.utils.hooks.qt import add_qt6_dependencies

# Plugin file stems without the "lib" prefix; each is kept out on every platform.
UNUSED_PLUGINS = {
    # platforms for embedded devices, VNC and Vulkan displays; Direct2D (the default is qwindows)
    "qeglfs",
    "qlinuxfb",
    "qminimalegl",
    "qvnc",
    "qvkkhrdisplay",
    "qdirect2d",
    # the GTK 3 theme loads the system GTK into the process, next to older bundled libraries
    "qgtk3",
    # image formats the app never reads (PNG is built in; SVG and ICO stay for icons and themes)
    "qjpeg",
    "qgif",
    "qtiff",
    "qwebp",
    "qtga",
    "qwbmp",
    "qpdf",
    "qicns",
    # Wayland: compositor-side buffer integrations and shells other than xdg-shell
    "dmabuf-server",
    "drm-egl-server",
    "shm-emulation-server",
    "vulkan-server",
    "ivi-shell",
    "fullscreen-shell-v1",
    "wl-shell-plugin",
    "qt-shell",
}
# Whole plugin directories for embedded input (evdev, TUIO) and EGLFS device integration.
UNUSED_PLUGIN_TYPES = {"generic", "egldeviceintegrations"}


def _wanted(source: str, dest: str) -> bool:
    path = PurePath(source)
    stem = path.name.split(".")[0].removeprefix("lib")
    if PurePath(dest).name in UNUSED_PLUGIN_TYPES and "plugins" in PurePath(dest).parts:
        return False
    return stem not in UNUSED_PLUGINS


hiddenimports, binaries, datas = add_qt6_dependencies(__file__)
binaries = [(source, dest) for source, dest in binaries if _wanted(source, dest)]
