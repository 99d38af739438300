"""Shrink the ICU data library that the Linux PySide6 wheel ships (31 MB) to what Qt Core uses.

Qt Core calls ICU for case mapping, collation (`ucol_*`), time zone IDs and names (`ucal_*`) and
legacy text codecs (`ucnv_*`); nothing else (see `objdump -T libQt6Core.so.6 | grep _73`). The
data library holds one "common data" package (format `CmnD`): a table of named items such as
`icudt73l/coll/de.res`. This module copies the package without the items Qt never asks for: the
trees of locale display names (languages, regions, currencies, units, zones), transliteration,
spell-out rules and break iterators, the per-locale formatting bundles (`icudt73l/de.res`; collation
has its own in `coll/`) and, unless `keep_converters`, the codec tables (`.cnv`). It then links the
result into a data-only shared library with the same soname and symbol, using `as` and `ld` from
binutils. A missing item makes ICU report an error that Qt handles: a time zone has no localized
name, a codec other than UTF-8/16/32 and Latin-1 is unknown. Collation and case mapping give the
same results as with the full data (checked over 25 locales when this was written).

Run it by hand to see what it keeps: `python packaging/icu_trim.py path/to/libicudata.so.73`.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

MAGIC = b"\xda\x27"
ALIGN = 16
# Subdirectories of the package whose items Qt Core never loads.
UNUSED_TREES = frozenset({"brkitr", "curr", "lang", "rbnf", "region", "translit", "unit", "zone"})
# Per-locale formatting bundles at the top of the package (`icudt73l/de_AT.res`), not `root.res`.
LOCALE_BUNDLE = re.compile(r"icudt\d+[lb]/[a-z]{2,3}(_[A-Za-z0-9]+)*\.res")
DATA_SYMBOL = re.compile(r"icudt\d+_dat")
SHT_DYNSYM = 11


class PackageError(ValueError):
    """The bytes are not an ICU common data package this module understands."""


def parse_package(data: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """Split a common data package into its header and its (name, item bytes) in table order."""
    if len(data) < 32 or data[2:4] != MAGIC:
        raise PackageError("no ICU data header")
    header_size = struct.unpack_from("<H", data, 0)[0]
    big_endian = data[8]
    if big_endian or data[12:16] != b"CmnD":
        raise PackageError("not a little-endian common data package (CmnD)")
    toc = data[header_size:]
    (count,) = struct.unpack_from("<I", toc, 0)
    entries = [struct.unpack_from("<II", toc, 4 + 8 * index) for index in range(count)]
    items = []
    for index, (name_offset, data_offset) in enumerate(entries):
        name_end = toc.index(b"\0", name_offset)
        end = entries[index + 1][1] if index + 1 < count else len(toc)
        items.append((toc[name_offset:name_end].decode("ascii"), toc[data_offset:end]))
    return data[:header_size], items


def build_package(header: bytes, items: Iterable[tuple[str, bytes]]) -> bytes:
    """A common data package with `header` and `items` (names must stay sorted, as ICU bisects)."""
    items = list(items)
    names = b"".join(name.encode("ascii") + b"\0" for name, _ in items)
    table_size = 4 + 8 * len(items)
    offset = _aligned(table_size + len(names))
    entries, blobs, name_offset = [], [], table_size
    for name, blob in items:
        entries.append(struct.pack("<II", name_offset, offset))
        name_offset += len(name) + 1
        padded = blob + b"\0" * (_aligned(len(blob)) - len(blob))
        blobs.append(padded)
        offset += len(padded)
    toc = struct.pack("<I", len(items)) + b"".join(entries) + names
    toc += b"\0" * (_aligned(len(toc)) - len(toc))
    return header + toc + b"".join(blobs)


def _aligned(size: int) -> int:
    return (size + ALIGN - 1) // ALIGN * ALIGN


def qt_needs(name: str, *, keep_converters: bool = False) -> bool:
    """Whether Qt Core may load the package item `name` (such as `icudt73l/coll/de.res`)."""
    parts = name.split("/")
    if len(parts) > 2 and parts[1] in UNUSED_TREES:
        return False
    if LOCALE_BUNDLE.fullmatch(name) and parts[-1] != "root.res":
        return False
    return keep_converters or not name.endswith(".cnv")


def trim_package(data: bytes, keep: Callable[[str], bool] = qt_needs) -> bytes:
    """The package `data` with only the items for which `keep(name)` is true."""
    header, items = parse_package(data)
    return build_package(header, [(name, blob) for name, blob in items if keep(name)])


def extract_package(library: bytes) -> tuple[str, bytes]:
    """The (symbol name, package bytes) exported by an ICU data library (ELF64, little-endian)."""
    if library[:4] != b"\x7fELF" or library[4] != 2 or library[5] != 1:
        raise PackageError("not a 64-bit little-endian ELF library")
    section_offset = struct.unpack_from("<Q", library, 0x28)[0]
    entry_size, count = struct.unpack_from("<HH", library, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", library, section_offset + index * entry_size)
        for index in range(count)
    ]
    for _, kind, _, _, offset, size, link, _, _, sym_size in sections:
        if kind != SHT_DYNSYM:
            continue
        strings_offset = sections[link][4]
        for position in range(offset, offset + size, sym_size):
            name_at, _, _, index, value, length = struct.unpack_from("<IBBHQQ", library, position)
            name_end = library.index(b"\0", strings_offset + name_at)
            name = library[strings_offset + name_at : name_end].decode("ascii", "replace")
            if DATA_SYMBOL.fullmatch(name) and 0 < index < count:
                address, file_offset = sections[index][3], sections[index][4]
                start = value - address + file_offset
                return name, library[start : start + length]
    raise PackageError("no icudtNN_dat symbol in the library")


def link_data_library(package: bytes, symbol: str, soname: str, out: Path) -> None:
    """Write a shared library named `soname` that exports `package` as the data symbol `symbol`."""
    assembler, linker = shutil.which("as"), shutil.which("ld")
    if assembler is None or linker is None:
        raise FileNotFoundError("`as` and `ld` (binutils) are needed to relink the ICU data")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "icudata.dat").write_bytes(package)
        (work / "icudata.s").write_text(
            "\t.section .rodata\n"
            f"\t.globl {symbol}\n"
            f"\t.type {symbol}, @object\n"
            "\t.balign 16\n"
            f"{symbol}:\n"
            '\t.incbin "icudata.dat"\n'
            f"\t.size {symbol}, . - {symbol}\n"
            '\t.section .note.GNU-stack,"",@progbits\n',
            encoding="ascii",
        )
        subprocess.run([assembler, "-o", "icudata.o", "icudata.s"], cwd=work, check=True)
        subprocess.run(
            [linker, "-shared", "-soname", soname, "-o", str(out.resolve()), "icudata.o"],
            cwd=work,
            check=True,
        )


def trimmed_library(source: Path, out_dir: Path, *, keep_converters: bool = False) -> Path:
    """Write the trimmed copy of the ICU data library `source` into `out_dir`; return its path."""
    symbol, package = extract_package(source.read_bytes())
    trimmed = trim_package(package, lambda name: qt_needs(name, keep_converters=keep_converters))
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / source.name
    link_data_library(trimmed, symbol, source.name, out)
    return out


def main(argv: list[str]) -> int:
    """Print what trimming keeps and drops of the library given on the command line."""
    if len(argv) != 2:
        print("usage: icu_trim.py LIBICUDATA", file=sys.stderr)
        return 2
    _, package = extract_package(Path(argv[1]).read_bytes())
    _, items = parse_package(package)
    kept = sum(len(blob) for name, blob in items if qt_needs(name))
    total = sum(len(blob) for _, blob in items)
    print(f"{len(items)} items, {total / 1e6:.1f} MB; Qt needs {kept / 1e6:.1f} MB of them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
