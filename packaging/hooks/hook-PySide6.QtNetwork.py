"""PyInstaller hook for PySide6.QtNetwork: the library without its plugins.

Assistant uses only QLocalServer / QLocalSocket (a second start hands over to the running
window), which need neither the TLS backends nor the network-information plugins.
"""

from pathlib import PurePath

from PyInstaller.utils.hooks.qt import add_qt6_dependencies

UNUSED_PLUGIN_TYPES = {"tls", "networkinformation"}

hiddenimports, binaries, datas = add_qt6_dependencies(__file__)
binaries = [
    (source, dest)
    for source, dest in binaries
    if not ("plugins" in PurePath(dest).parts and PurePath(dest).name in UNUSED_PLUGIN_TYPES)
]
