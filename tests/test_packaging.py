"""Packaging without building the bundle: resources, desktop integration, install scripts, helpers.

`make package-test` builds the real bundle and runs it; these checks are the fast part.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

import assistant
from assistant.resources import APP_ICON_SIZES, app_icon_files, resource_path, resources_root

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
LINUX = ROOT / "resources" / "linux"
DESKTOP_FILE = LINUX / "assistant.desktop"
METAINFO = LINUX / "io.github.assistant.Assistant.metainfo.xml"

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux packaging")


def _load(name: str) -> ModuleType:
    """A module of packaging/ (not a package: its name would clash with PyPI's `packaging`)."""
    spec = importlib.util.spec_from_file_location(f"_packaging_{name}", PACKAGING / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


# --- resources ---------------------------------------------------------------------------------


def test_resources_are_found_from_source() -> None:
    assert resources_root() == ROOT / "resources"
    assert resource_path("icons", "assistant.svg").is_file()
    files = app_icon_files()
    assert [_png_size(path) for path in files] == [(size, size) for size in APP_ICON_SIZES]


def test_resources_are_found_in_a_frozen_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    icons = tmp_path / "resources" / "icons"
    icons.mkdir(parents=True)
    shutil.copy(ROOT / "resources" / "icons" / "assistant-16.png", icons)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)

    assert resources_root() == tmp_path / "resources"
    assert resource_path("icons", "assistant-16.png") == icons / "assistant-16.png"
    assert app_icon_files() == [icons / "assistant-16.png"]


@pytest.mark.gui
def test_the_window_icon_has_every_size(qapp: QApplication) -> None:
    from PySide6.QtCore import QSize

    from assistant.ui.app import app_icon

    icon = app_icon()

    assert not icon.isNull()
    assert icon.availableSizes() == [QSize(size, size) for size in APP_ICON_SIZES]


def test_windows_and_macos_icons_hold_every_size() -> None:
    ico = (ROOT / "resources" / "icons" / "assistant.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", ico)
    assert (reserved, kind, count) == (0, 1, 7)
    sides = [ico[6 + 16 * index] or 256 for index in range(count)]
    assert sides == [16, 24, 32, 48, 64, 128, 256]
    for index in range(count):
        size, offset = struct.unpack_from("<II", ico, 6 + 16 * index + 8)
        assert ico[offset : offset + 8] == b"\x89PNG\r\n\x1a\n"
        assert offset + size <= len(ico)

    icns = (ROOT / "resources" / "icons" / "assistant.icns").read_bytes()
    assert icns[:4] == b"icns"
    assert struct.unpack_from(">I", icns, 4)[0] == len(icns)
    codes, position = [], 8
    while position < len(icns):
        code = icns[position : position + 4]
        (length,) = struct.unpack_from(">I", icns, position + 4)
        assert icns[position + 8 : position + 16] == b"\x89PNG\r\n\x1a\n"
        codes.append(code.decode())
        position += length
    assert position == len(icns)
    assert {"icp4", "ic07", "ic08", "ic09", "ic10"} <= set(codes)


# --- desktop integration -----------------------------------------------------------------------


def test_desktop_entry_has_the_required_keys() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DESKTOP_FILE, encoding="utf-8")
    entry = parser["Desktop Entry"]

    assert entry["Type"] == "Application"
    assert entry["Name"] == assistant.APP_NAME
    assert entry["Exec"] == "Assistant"
    assert entry["Icon"] == "assistant"
    assert entry["Terminal"] == "false"
    assert entry["Categories"] == "Utility;Office;"
    # The window's app id / WM class is the desktop file name set by the app: "assistant".
    assert entry["StartupWMClass"] == DESKTOP_FILE.stem == "assistant"
    assert entry["Comment"]


def test_appstream_metainfo_has_the_required_elements() -> None:
    root = ET.parse(METAINFO).getroot()

    assert root.tag == "component"
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == "io.github.assistant.Assistant"
    assert METAINFO.name == f"{root.findtext('id')}.metainfo.xml"
    assert root.findtext("name") == assistant.APP_NAME
    assert root.findtext("summary")
    assert root.findtext("metadata_license") == "CC0-1.0"
    assert root.findtext("project_license") == "MIT"
    description = root.find("description")
    assert description is not None
    assert description.findall("p")
    launchable = root.find("launchable")
    assert launchable is not None
    assert launchable.get("type") == "desktop-id"
    assert launchable.text == DESKTOP_FILE.name
    rating = root.find("content_rating")
    assert rating is not None
    assert rating.get("type", "").startswith("oars-")
    releases = root.findall("releases/release")
    assert releases
    assert releases[0].get("version") == assistant.__version__
    assert releases[0].get("date")


# --- install.sh / uninstall.sh -----------------------------------------------------------------


def _fake_bundle(parent: Path) -> Path:
    """A small stand-in for dist/Assistant: an executable and the resources install.sh reads."""
    bundle = parent / "Assistant"
    internal = bundle / "_internal"
    internal.mkdir(parents=True)
    executable = bundle / "Assistant"
    executable.write_text("#!/bin/sh\necho SELF-TEST OK\n", encoding="utf-8")
    executable.chmod(0o755)
    (internal / "libfake.so").write_bytes(b"\x7fELF")
    shutil.copytree(ROOT / "resources" / "icons", internal / "resources" / "icons")
    shutil.copytree(LINUX, internal / "resources" / "linux")
    return bundle


def _files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*") if not path.is_dir()}


def _run(script: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSISTANT_INSTALL_HOME": str(home)}
    return subprocess.run(
        ["bash", str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@linux_only
def test_install_then_uninstall_touches_exactly_its_files(tmp_path: Path) -> None:
    bundle = _fake_bundle(tmp_path / "dist")
    home = tmp_path / "home"
    unrelated = {
        ".local/share/applications/other.desktop",
        ".local/share/icons/hicolor/48x48/apps/other.png",
        ".local/opt/Other/Other",
    }
    for name in unrelated:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("keep me", encoding="utf-8")

    for _ in range(2):  # installing again replaces the installed copy
        result = _run(PACKAGING / "linux" / "install.sh", home, str(bundle))
        assert result.returncode == 0, result.stderr

    opt = ".local/opt/Assistant"
    expected = (
        unrelated
        | {f"{opt}/{name}" for name in _files(bundle)}
        | {f"{opt}/uninstall.sh", ".local/share/applications/assistant.desktop"}
        | {
            f".local/share/icons/hicolor/{size}x{size}/apps/assistant.png"
            for size in APP_ICON_SIZES
        }
    )
    assert _files(home) == expected
    installed = home / opt / "Assistant"
    assert os.access(installed, os.X_OK)
    assert (home / ".local/share/icons/hicolor/256x256/apps/assistant.png").read_bytes() == (
        ROOT / "resources" / "icons" / "assistant-256.png"
    ).read_bytes()
    desktop = (home / ".local/share/applications/assistant.desktop").read_text(encoding="utf-8")
    assert f'Exec="{installed}"' in desktop.splitlines()
    assert f"TryExec={installed}" in desktop.splitlines()
    assert "Icon=assistant" in desktop.splitlines()

    # The installed copy removes itself; removing again (with the repository's script) is fine.
    for script in (home / opt / "uninstall.sh", PACKAGING / "linux" / "uninstall.sh"):
        result = _run(script, home)
        assert result.returncode == 0, result.stderr
    assert _files(home) == unrelated
    assert not (home / opt).exists()


@linux_only
def test_install_from_inside_the_bundle_needs_no_argument(tmp_path: Path) -> None:
    bundle = _fake_bundle(tmp_path / "unpacked")
    for script in ("install.sh", "uninstall.sh"):
        shutil.copy(PACKAGING / "linux" / script, bundle / script)
    home = tmp_path / "home"

    result = _run(bundle / "install.sh", home)

    assert result.returncode == 0, result.stderr
    installed = home / ".local/opt/Assistant"
    assert (installed / "Assistant").is_file()
    assert (installed / "install.sh").is_file()
    assert _run(PACKAGING / "linux" / "uninstall.sh", home).returncode == 0
    assert not installed.exists()


@linux_only
def test_install_refuses_a_folder_that_is_not_a_bundle(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    home = tmp_path / "home"

    result = _run(PACKAGING / "linux" / "install.sh", home, str(tmp_path / "empty"))

    assert result.returncode == 1
    assert "no Assistant bundle" in result.stderr
    assert not home.exists()


# --- build helpers -----------------------------------------------------------------------------


def _package(names: list[str]) -> tuple[bytes, list[tuple[str, bytes]]]:
    """An ICU common data package (header as ICU writes it) holding one small item per name."""
    icu_trim = _load("icu_trim")
    info = struct.pack("<HHBBBB", 20, 0, 0, 0, 2, 0) + b"CmnD" + bytes([1, 0, 0, 0]) + bytes(4)
    header = struct.pack("<HBB", 32, 0xDA, 0x27) + info
    header += b"\0" * (32 - len(header))
    items = [(name, f"data of {name}".encode()) for name in names]
    return icu_trim.build_package(header, items), items


def test_icu_trim_keeps_only_what_qt_core_uses() -> None:
    icu_trim = _load("icu_trim")
    names = [
        "icudt73l/coll/de.res",
        "icudt73l/coll/root.res",
        "icudt73l/de.res",
        "icudt73l/ibm-943_P15A-2003.cnv",
        "icudt73l/lang/de.res",
        "icudt73l/likelySubtags.res",
        "icudt73l/root.res",
        "icudt73l/uprops.icu",
        "icudt73l/zone/de.res",
        "icudt73l/zoneinfo64.res",
    ]
    package, items = _package(names)

    _, parsed = icu_trim.parse_package(package)
    trimmed = icu_trim.parse_package(icu_trim.trim_package(package))[1]

    assert [(name, blob.rstrip(b"\0")) for name, blob in parsed] == items
    assert [name for name, _ in trimmed] == [
        "icudt73l/coll/de.res",
        "icudt73l/coll/root.res",
        "icudt73l/likelySubtags.res",
        "icudt73l/root.res",
        "icudt73l/uprops.icu",
        "icudt73l/zoneinfo64.res",
    ]
    assert icu_trim.qt_needs("icudt73l/ibm-943_P15A-2003.cnv", keep_converters=True)
    with pytest.raises(icu_trim.PackageError):
        icu_trim.parse_package(b"\0" * 64)


@linux_only
@pytest.mark.skipif(not (shutil.which("as") and shutil.which("ld")), reason="needs binutils")
def test_icu_trim_links_a_library_exporting_the_package(tmp_path: Path) -> None:
    icu_trim = _load("icu_trim")
    package, _ = _package(["icudt73l/root.res", "icudt73l/uprops.icu"])
    library = tmp_path / "libicudata.so.73"

    icu_trim.link_data_library(package, "icudt73_dat", library.name, library)

    symbol, exported = icu_trim.extract_package(library.read_bytes())
    assert symbol == "icudt73_dat"
    assert exported == package


def test_system_libraries_go_with_what_only_they_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    linux_libs = _load("linux_libs")
    needs = {
        "/w/PySide6/Qt/lib/libQt6Core.so.6": {"libstdc++.so.6", "libzstd.so.1", "libglib-2.0.so.0"},
        "/usr/lib/libdbus-1.so.3": {"libsystemd.so.0"},
        "/usr/lib/libsystemd.so.0": {"libzstd.so.1", "libgcrypt.so.20"},
        "/usr/lib/libgcrypt.so.20": {"libgpg-error.so.0"},
        "/usr/lib/libglib-2.0.so.0": {"libpcre2-8.so.0"},
    }
    monkeypatch.setattr(linux_libs, "needed", lambda path: frozenset(needs.get(path, ())))
    entries = [
        ("PySide6/Qt/lib/libQt6Core.so.6", "/w/PySide6/Qt/lib/libQt6Core.so.6", "BINARY"),
        ("libQt6Core.so.6", "PySide6/Qt/lib/libQt6Core.so.6", "SYMLINK"),
        ("libstdc++.so.6", "/usr/lib/libstdc++.so.6", "BINARY"),
        ("libdbus-1.so.3", "/usr/lib/libdbus-1.so.3", "BINARY"),
        ("libsystemd.so.0", "/usr/lib/libsystemd.so.0", "BINARY"),
        ("libgcrypt.so.20", "/usr/lib/libgcrypt.so.20", "BINARY"),
        ("libgpg-error.so.0", "/usr/lib/libgpg-error.so.0", "BINARY"),
        ("libzstd.so.1", "/usr/lib/libzstd.so.1", "BINARY"),
        ("libglib-2.0.so.0", "/usr/lib/libglib-2.0.so.0", "BINARY"),
        ("libpcre2-8.so.0", "/usr/lib/libpcre2-8.so.0", "BINARY"),
        ("libxcb-cursor.so.0", "/usr/lib/libxcb-cursor.so.0", "BINARY"),
    ]

    kept = [dest for dest, _, _ in linux_libs.without_system_libraries(entries)]

    assert kept == [
        "PySide6/Qt/lib/libQt6Core.so.6",
        "libQt6Core.so.6",
        "libzstd.so.1",  # Qt needs it too
        "libxcb-cursor.so.0",  # not a system library: often missing, so it stays bundled
    ]


@linux_only
def test_needed_reads_the_dynamic_section() -> None:
    linux_libs = _load("linux_libs")
    assert any(name.startswith("libc.so") for name in linux_libs.needed(sys.executable))
    assert linux_libs.needed(str(DESKTOP_FILE)) == frozenset()


@linux_only
@pytest.mark.skipif(shutil.which("strip") is None, reason="needs binutils")
def test_stripping_keeps_every_byte_the_loader_maps(tmp_path: Path) -> None:
    import _ctypes

    linux_libs = _load("linux_libs")
    source = Path(_ctypes.__file__)
    out = tmp_path / source.name

    if linux_libs.stripped_copy(source, out):
        assert out.stat().st_size < source.stat().st_size
        assert linux_libs.loaded_image(out.read_bytes()) == linux_libs.loaded_image(
            source.read_bytes()
        )
    else:  # already stripped: nothing to gain, no copy left behind
        assert not out.exists()

    # Any change to a mapped byte counts: flip the last byte of the first loaded segment.
    data = source.read_bytes()
    header_offset = struct.unpack_from("<Q", data, 0x20)[0]
    entry_size, count = struct.unpack_from("<HH", data, 0x36)
    headers = [
        struct.unpack_from("<IIQQQQ", data, header_offset + index * entry_size)
        for index in range(count)
    ]
    _, _, offset, _, _, file_size = next(header for header in headers if header[0] == 1)
    changed = bytearray(data)
    changed[offset + file_size - 1] ^= 0xFF
    assert linux_libs.loaded_image(bytes(changed)) != linux_libs.loaded_image(data)
