"""Trim the Linux bundle's libraries: strip symbols where that is safe, and leave out the system
libraries that every desktop has and that the Qt wheel itself expects from the system.

Stripping: PyInstaller's `strip` option strips every library blindly, and that breaks libraries
that auditwheel patched (numpy's OpenBLAS then fails with "ELF load command address/offset not
page-aligned"). `stripped_copy` strips a copy and keeps it only if every byte the loader maps is
unchanged, so only the symbol tables and debug info go (25 MB of debug info in a Python built from
source, a few MB of symbols in the wheels).

System libraries: PyInstaller copies every shared library it finds except glibc and the graphics
drivers. A few must rather come from the user's system, as they do for the PySide6 wheel:
libstdc++ and libgcc_s (a bundled, older libstdc++ breaks the system's Mesa drivers that Qt loads:
"GLIBCXX_3.4.30 not found"), fontconfig and freetype (a bundled fontconfig misreads a newer system
configuration), the core X11 and xcb libraries, GLib and libdbus. Dropping them also drops what
they alone pulled in (systemd, gcrypt, lz4, brotli, pcre2...), found by reading each library's
DT_NEEDED entries. The xcb-util libraries and libxkbcommon stay bundled: Qt needs them and
desktops often lack them.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections.abc import Iterable, Sequence
from fnmatch import fnmatch
from functools import cache
from pathlib import Path, PurePath

SYSTEM_LIBRARIES = (
    "libstdc++.so.*",
    "libgcc_s.so.*",
    "libfontconfig.so.*",
    "libfreetype.so.*",
    "libX11.so.*",
    "libX11-xcb.so.*",
    "libxcb.so.*",
    "libXau.so.*",
    "libXdmcp.so.*",
    "libdbus-1.so.*",
    "libglib-2.0.so.*",
    "libgthread-2.0.so.*",
    "libgobject-2.0.so.*",
    "libgio-2.0.so.*",
)
SHT_DYNAMIC = 6
DT_NEEDED = 1
PT_LOAD = 1

Entry = tuple[str, str, str]  # PyInstaller's (destination name, source path, type code)


@cache
def needed(path: str) -> frozenset[str]:
    """The DT_NEEDED names of a 64-bit little-endian ELF file; empty for anything else."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return frozenset()
    if not _is_elf64(data):
        return frozenset()
    section_offset = struct.unpack_from("<Q", data, 0x28)[0]
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, section_offset + index * entry_size)
        for index in range(count)
    ]
    names = set()
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind != SHT_DYNAMIC:
            continue
        strings = sections[link][4]
        for position in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, position)
            if tag == 0:
                break
            if tag == DT_NEEDED:
                end = data.index(b"\0", strings + value)
                names.add(data[strings + value : end].decode("ascii", "replace"))
    return frozenset(names)


def _is_elf64(data: bytes) -> bool:
    return data[:4] == b"\x7fELF" and len(data) > 64 and data[4] == 2 and data[5] == 1


def loaded_image(data: bytes) -> list[tuple[int, int, int, int, int, bytes]]:
    """What the dynamic loader sees of an ELF file: every program header, without its file
    offset, and the bytes of each loaded segment (the ELF header's section table fields aside:
    strip rewrites them and the loader never reads them)."""
    data = data[:0x28] + bytes(8) + data[0x30:0x3C] + bytes(4) + data[0x40:]
    header_offset = struct.unpack_from("<Q", data, 0x20)[0]
    entry_size, count = struct.unpack_from("<HH", data, 0x36)
    image = []
    for index in range(count):
        kind, flags, offset, address, _, file_size, memory_size, align = struct.unpack_from(
            "<IIQQQQQQ", data, header_offset + index * entry_size
        )
        content = b""
        if kind == PT_LOAD:
            if align > 1 and (address - offset) % align:
                raise ValueError("a loaded segment is not aligned")
            content = data[offset : offset + file_size]
        image.append((kind, flags, address, file_size, memory_size, content))
    return image


def stripped_copy(source: Path, out: Path) -> bool:
    """Write `source` without symbols to `out` if that leaves the loaded image byte for byte."""
    strip = shutil.which("strip")
    original = source.read_bytes()
    if strip is None or not _is_elf64(original):
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [strip, "--strip-unneeded", "-o", str(out), str(source)], capture_output=True, check=False
    )
    try:
        if done.returncode == 0:
            stripped = out.read_bytes()
            if len(stripped) < len(original) and loaded_image(stripped) == loaded_image(original):
                return True
    except (OSError, ValueError, struct.error):
        pass
    out.unlink(missing_ok=True)
    return False


def is_system_library(name: str, patterns: Sequence[str] = SYSTEM_LIBRARIES) -> bool:
    """Whether the library file name `name` should come from the user's system."""
    return any(fnmatch(name, pattern) for pattern in patterns)


def without_system_libraries(
    entries: Iterable[Entry], patterns: Sequence[str] = SYSTEM_LIBRARIES
) -> list[Entry]:
    """`entries` without the system libraries and the bundled libraries only they needed."""
    entries = list(entries)
    dropped = {
        PurePath(dest).name
        for dest, source, kind in entries
        if kind != "SYMLINK" and is_system_library(PurePath(dest).name, patterns)
    }
    top_level = {
        dest: source for dest, source, kind in entries if kind == "BINARY" and "/" not in dest
    }
    # Libraries that the dropped ones needed, directly or through one another.
    candidates: set[str] = set()
    pending = [name for name in dropped if name in top_level]
    while pending:
        for name in needed(top_level[pending.pop()]):
            if name in top_level and name not in dropped and name not in candidates:
                candidates.add(name)
                pending.append(name)
    changed = True
    while changed:
        kept = [
            (dest, source)
            for dest, source, kind in entries
            if kind != "SYMLINK" and PurePath(dest).name not in dropped
        ]
        still_needed = set().union(*(needed(source) for _, source in kept))
        orphans = {name for name in candidates - dropped if name not in still_needed}
        dropped |= orphans
        changed = bool(orphans)
    return [
        (dest, source, kind)
        for dest, source, kind in entries
        if PurePath(dest).name not in dropped
        and not (kind == "SYMLINK" and PurePath(source).name in dropped)
    ]
