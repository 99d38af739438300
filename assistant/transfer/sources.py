"""Where an import's conversations are: a JSON file, an unpacked export folder or the export's zip.

A ChatGPT export arrives as a zip holding `conversations.json` or, since 2026, shards named
`conversations-000.json`, `conversations-001.json`, … beside a manifest, `chat.html` and media.
Shards are found by their names; the conversation files are read straight from the zip and
nothing is extracted. A member whose declared size or compression ratio could only be a
decompression bomb is refused before a byte of it is inflated.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from assistant.errors import InvalidImportError

# conversations.json, conversations-000.json, conversations_12.json (any case)
CONVERSATION_FILE = re.compile(r"conversations(?:[-_](\d+))?\.json", re.IGNORECASE)
# Files of an export folder that hold no conversations: picking one means "this export".
COMPANION_FILES = frozenset(
    {"export_manifest.json", "user.json", "users.json", "chat.html", "message_feedback.json"}
)
MAX_RATIO = 200  # JSON deflates 5-20x; a bomb 1,000x and more
RATIO_FROM_BYTES = 1 << 20  # tiny members may compress oddly well
MAX_MEMBER_BYTES = 16 << 30  # a heavy user's conversations are a few hundred MB per shard


@dataclass(frozen=True)
class Member:
    """One conversation file of a source."""

    name: str  # its path inside the zip or folder, or the file's name
    size: int  # bytes once decompressed


@dataclass(frozen=True)
class ImportSource:
    """The conversation files of what the user picked, in the order they are read."""

    path: Path  # the file, folder or zip the user picked
    members: tuple[Member, ...]
    kind: str  # "file", "folder", "zip" or "data"
    data: bytes = b""  # the content of a "data" source (tests, pasted text)

    @property
    def size(self) -> int:
        """Bytes to read in all members."""
        return sum(m.size for m in self.members)

    @contextmanager
    def open(self, member: Member) -> Iterator[IO[bytes]]:
        """The bytes of one member, read as a stream; InvalidImportError if they cannot be read."""
        try:
            if self.kind == "data":
                yield io.BytesIO(self.data)
            elif self.kind == "zip":
                with zipfile.ZipFile(self.path) as archive, archive.open(member.name) as stream:
                    yield stream
            else:
                folder = self.path if self.kind == "folder" else self.path.parent
                with (folder / member.name).open("rb") as stream:
                    yield stream
        except zipfile.BadZipFile as exc:
            raise InvalidImportError(
                f"{self.path.name} is a damaged zip file ({exc}). Download the export again."
            ) from None
        except OSError as exc:
            raise InvalidImportError(_unreadable(self.path, exc)) from None

    @classmethod
    def of_data(cls, data: bytes, name: str = "conversations.json") -> ImportSource:
        """A source holding `data` as its one file."""
        return cls(Path(name), (Member(name, len(data)),), "data", data)


def find_source(path: Path) -> ImportSource:
    """The conversation files of a file, an export folder or a zip; InvalidImportError if none."""
    try:
        if path.is_dir():
            return _folder(path, path)
        if zipfile.is_zipfile(path):
            return _zip(path)
        if path.name.lower() in COMPANION_FILES and _has_conversations(path.parent):
            return _folder(path.parent, path)
        return ImportSource(path, (Member(path.name, path.stat().st_size),), "file")
    except OSError as exc:
        raise InvalidImportError(_unreadable(path, exc)) from None


def _unreadable(path: Path, exc: OSError) -> str:
    """Why a file or folder could not be read, and what to do."""
    return (
        f"{path.name} could not be read ({exc.strerror or exc}; it is at {path}). Check that "
        "it is still there and that you may open it, then import it again."
    )


def _has_conversations(folder: Path) -> bool:
    return any(CONVERSATION_FILE.fullmatch(p.name) for p in folder.iterdir() if p.is_file())


def _folder(folder: Path, picked: Path) -> ImportSource:
    """The conversation files at the top of an unpacked export, or in one folder below it."""
    for level in (folder, *sorted(p for p in folder.iterdir() if p.is_dir())):
        files = [p for p in level.iterdir() if p.is_file() and CONVERSATION_FILE.fullmatch(p.name)]
        if files:
            members = tuple(
                Member(str(p.relative_to(folder)), p.stat().st_size)
                for p in sorted(files, key=lambda p: _order(p.name))
            )
            return ImportSource(folder, members, "folder")
    raise InvalidImportError(
        f"{picked.name} holds no conversations to import: an unpacked ChatGPT or Claude export "
        "has a conversations.json (or conversations-000.json, conversations-001.json, …). "
        "Choose the folder the export was unpacked into, or the export's zip itself."
    )


def _zip(path: Path) -> ImportSource:
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        raise InvalidImportError(
            f"{path.name} is a damaged zip file ({exc}). Download the export again."
        ) from None
    found: list[zipfile.ZipInfo] = []
    for info in infos:
        name = PurePosixPath(info.filename)
        if info.is_dir() or not CONVERSATION_FILE.fullmatch(name.name):
            continue
        if name.is_absolute() or ".." in name.parts or "\\" in info.filename:
            continue  # never read: a name that points outside the archive
        if len(name.parts) > 2:
            continue  # deeper than an export's top folder
        found.append(info)
    if not found:
        raise InvalidImportError(
            f"{path.name} holds no conversations to import: a ChatGPT or Claude export zip has "
            "a conversations.json (or conversations-000.json, conversations-001.json, …). "
            "Choose the zip that ChatGPT or Claude sent you, or an export made by Assistant."
        )
    top = min(len(PurePosixPath(i.filename).parts) for i in found)
    chosen = [i for i in found if len(PurePosixPath(i.filename).parts) == top]
    for info in chosen:
        _check_member(path, info)
    chosen.sort(key=lambda i: _order(PurePosixPath(i.filename).name))
    return ImportSource(path, tuple(Member(i.filename, i.file_size) for i in chosen), "zip")


def _check_member(path: Path, info: zipfile.ZipInfo) -> None:
    """Refuse what could only be a decompression bomb, by its declared sizes."""
    if info.flag_bits & 0x1:
        raise InvalidImportError(
            f"{path.name} is password-protected ({info.filename} is encrypted), so it cannot be "
            "read. Unpack it with your archive tool, then import the folder it was unpacked into."
        )
    if info.file_size > MAX_MEMBER_BYTES:
        raise InvalidImportError(
            f"{path.name} is not imported: its {info.filename} says it holds "
            f"{info.file_size:,} bytes, more than an export's conversations ever do "
            f"({MAX_MEMBER_BYTES >> 30} GB). Check that this is the export you meant."
        )
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > RATIO_FROM_BYTES and ratio > MAX_RATIO:
        raise InvalidImportError(
            f"{path.name} is not imported: its {info.filename} would grow {ratio:,.0f} times "
            "when unpacked, far more than any export does, so it looks like a zip bomb. Check "
            "where the file came from."
        )


def _order(name: str) -> tuple[int, str]:
    """conversations.json first, then the shards by number."""
    match = CONVERSATION_FILE.fullmatch(name)
    number = match.group(1) if match else None
    return (-1 if number is None else int(number), name)
