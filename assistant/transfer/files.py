"""The files attached to messages, and the images tools returned, in an export that includes
them (`data`: their bytes in base64): checked when the export is read, before anything is
written, and written back under the conversation's attachments when it is imported (a copy
under a new id gets its own)."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assistant.agent.tool_images import is_saved_name
from assistant.json_fields import as_list, as_object, fail, kind
from assistant.memory import AttachedFile, Message
from assistant.sizes import MB

# The largest file an export may carry: the 20 MB attachment limit, and the 20 MiB (20.97 MB)
# that versions counting in MiB attached, so that their exports still import.
MAX_FILE_MB = 21


@dataclass(frozen=True)
class ImportedFile:
    """The bytes of an attached file, as the export holds them (base64, checked)."""

    attachment: AttachedFile
    data: str

    def content(self) -> bytes:
        """The file's bytes."""
        return base64.b64decode(self.data, validate=True)


@dataclass(frozen=True)
class ImportedImage:
    """An image a tool returned, as the export holds it: its saved name and base64 bytes."""

    name: str  # <SHA-1 of the bytes>.<type>, as the tool result's last line names it
    data: str

    def content(self) -> bytes:
        """The image's bytes."""
        return base64.b64decode(self.data, validate=True)


def read_files(
    raw_messages: Sequence[Any], messages: Sequence[Message], path: str
) -> tuple[ImportedFile, ...]:
    """The files whose bytes a conversation's messages carry (`raw_messages` as in the file,
    `messages` as parsed from them), each once; FieldError names the bad field: `data` that is
    not base64, is over the attachment size limit, or does not hold `size` bytes, or that
    differs between two messages carrying the same file (an edited message carries its files)."""
    limit = MAX_FILE_MB * MB
    found: dict[tuple[str, str], tuple[ImportedFile, str]] = {}
    for j, (raw, message) in enumerate(zip(raw_messages, messages, strict=True)):
        entries = raw.get("attachments") or []
        for k, (entry, ref) in enumerate(zip(entries, message.attachments, strict=True)):
            if entry.get("data") is None:
                continue  # an export without the files: the message names them
            where = f"{path}.messages[{j}].attachments[{k}]"
            data = _checked_data(entry["data"], ref, limit, where)
            key = (ref.id, ref.name)
            if key in found and found[key][0].data != data:
                raise fail(f"{where}.data", f"differs from the same file's in {found[key][1]}")
            found.setdefault(key, (ImportedFile(ref, data), where))
    return tuple(file for file, _ in found.values())


def read_images(
    raw_messages: Sequence[Any], messages: Sequence[Message], path: str
) -> tuple[ImportedImage, ...]:
    """The images tool results returned, in the `images` of the messages (`[{name, data}]`,
    in an export with the files), each once; FieldError names the bad field: `images` on a
    message that is no tool result, a name that is not a saved image's, `data` that is not
    base64, is over the size limit of a file, or does not hold the bytes its name says."""
    limit = MAX_FILE_MB * MB
    found: dict[str, ImportedImage] = {}
    for j, (raw, message) in enumerate(zip(raw_messages, messages, strict=True)):
        if raw.get("images") is None:
            continue
        where = f"{path}.messages[{j}].images"
        if message.role != "tool":
            raise fail(where, "is only for a tool's result (the images it returned)")
        for k, listed in enumerate(as_list(raw["images"], where)):
            entry = as_object(listed, f"{where}[{k}]")
            name, data = entry.get("name"), entry.get("data")
            if not isinstance(name, str) or not is_saved_name(name):
                raise fail(f"{where}[{k}].name", "must be a kept image's name (its SHA-1.type)")
            content = _decoded(data, limit, f"{where}[{k}]")
            if hashlib.sha1(content).hexdigest() != name.partition(".")[0]:
                raise fail(f"{where}[{k}].data", "holds other bytes than its name says")
            found.setdefault(name, ImportedImage(name, str(data)))
    return tuple(found.values())


def _checked_data(data: object, ref: AttachedFile, limit: int, where: str) -> str:
    if ref.size > limit and isinstance(data, str):
        raise fail(
            f"{where}.size",
            f"{ref.size} bytes is over the limit of {MAX_FILE_MB} MB for a file in an export",
        )
    size = len(_decoded(data, limit, where))
    if size != ref.size:
        raise fail(f"{where}.data", f"holds {size} bytes, but its size says {ref.size}")
    return str(data)


def _decoded(data: object, limit: int, where: str) -> bytes:
    """The bytes of `data` (base64, at most `limit` bytes); FieldError for `where.data`."""
    if not isinstance(data, str):
        raise fail(f"{where}.data", f"must be the file's bytes in base64, not {kind(data)}")
    if len(data) > 4 * (limit // 3 + 1):  # larger than any file within the limit
        raise fail(f"{where}.data", f"holds more than the limit of {MAX_FILE_MB} MB for a file")
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise fail(f"{where}.data", "is not valid base64") from None
    if len(decoded) > limit:
        raise fail(f"{where}.data", f"holds more than the limit of {MAX_FILE_MB} MB for a file")
    return decoded
