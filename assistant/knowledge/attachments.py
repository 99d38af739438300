"""Files attached to a message: checked before sending, copied into the data dir (they belong
to the conversation: they survive the original being moved and go when it is deleted), and
turned into what the model is sent.

A text file goes whole when it fits the prompt budget, else its passages most related to the
message (found by the file index) with a note that says so; an image goes as an `image_url`
part to a model that accepts images, and is refused with a clear line otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.agent.tool_images import EXTENSIONS, ToolImage
from assistant.errors import AssistantError
from assistant.fileio import atomic_write_bytes, atomic_write_with, reason
from assistant.knowledge.formats import IMAGE_TYPES, FileKind, kind_of
from assistant.knowledge.index import FileIndex
from assistant.knowledge.reading import NO_TEXT_LAYER, Chunk, UnreadableFileError, read_file
from assistant.memory.messages import AttachedFile, estimate_tokens
from assistant.sizes import MB, size_in_words

log = logging.getLogger(__name__)

ATTACHMENTS_DIR = "attachments"
TOOL_IMAGES_DIR = "tool-images"  # in a conversation's folder: images its tools returned
MAX_ATTACHMENT_MB = 20  # what OpenAI takes for an image; text this size is summarized anyway
PROBED_PAGES = 5  # a PDF with no text on its first pages is taken for a scan
NO_TEXT = "no text layer (a scanned or image-only PDF?): Assistant cannot read it"
KINDS_IN_WORDS = "text, Markdown, source code, PDF and images (PNG, JPEG, GIF, WebP)"


class AttachmentError(AssistantError):
    """A file that cannot be attached or sent; the message says why, naming the file."""


@dataclass(frozen=True)
class Attachment:
    """A file attached to a message, as copied into the data dir."""

    path: Path  # attachments/<conversation id>/<attachment id>/<name>
    size: int
    kind: FileKind
    pages: int | None = None

    @property
    def id(self) -> str:
        """The attachment's id (its folder's name)."""
        return self.path.parent.name

    @property
    def name(self) -> str:
        """The file's name, as it was attached."""
        return self.path.name

    def label(self) -> str:
        """For its chip: "report.pdf · 1.2 MB · 4 pages"."""
        return label(self.name, self.size, self.pages)

    def ref(self) -> AttachedFile:
        """The attachment as its message records it."""
        return AttachedFile(self.id, self.name, self.size, self.kind, self.pages)


def label(name: str, size: int, pages: int | None) -> str:
    """A file as its chip names it: "report.pdf · 1.2 MB · 4 pages"."""
    parts = [name, size_in_words(size)]
    if pages is not None:
        parts.append(f"{pages} page{'s' if pages != 1 else ''}")
    return " · ".join(parts)


def image_refused(name: str, model: str, *, attached: bool) -> str:
    """Why an image is not sent: `model` was found not to take images (`attached`: its chip
    is there already; else it was not attached)."""
    choose = "choose a model that sees images (the picker above the chat)"
    if attached:
        return f"{name}: {model} does not accept images. Remove the image, or {choose}."
    return f"{name} was not attached: {model} does not accept images. First {choose}."


def check(source: Path, max_mb: int = MAX_ATTACHMENT_MB) -> tuple[FileKind, int]:
    """The kind and size of a file that may be attached; AttachmentError (before anything is
    copied or sent) if it is not a kind Assistant reads, is over the limit, or cannot be read."""
    kind = kind_of(source)
    if kind is None:
        raise AttachmentError(
            f"{source.name}: Assistant cannot read this kind of file ({KINDS_IN_WORDS} can be "
            "attached)."
        )
    try:
        size = source.stat().st_size
    except OSError as exc:
        raise AttachmentError(f"{source.name} cannot be read: {reason(exc)}.") from exc
    if size > max_mb * MB:
        raise AttachmentError(
            f"{source.name} is {size_in_words(size)}: attachments can be at most {max_mb} MB."
        )
    return kind, size


def probe(source: Path, max_mb: int = MAX_ATTACHMENT_MB) -> Attachment:
    """`source` as it would be attached (not copied): AttachmentError, naming the file and why,
    for a file `check` refuses, a binary file with a text name, or a PDF that is
    password-protected, damaged or without text on its first pages (a scan)."""
    kind, size = check(source, max_mb)
    pages = None
    if kind != "image":
        try:
            reading = read_file(source, kind, max_bytes=max_mb * MB)
            pages = reading.pages
            try:
                first = next(reading.chunks)
                if first.place.page is not None and first.place.page > PROBED_PAGES:
                    raise UnreadableFileError(NO_TEXT_LAYER)
            except StopIteration:
                if kind == "pdf":
                    raise UnreadableFileError(NO_TEXT_LAYER) from None
            finally:
                close = getattr(reading.chunks, "close", None)
                if close is not None:  # a generator: ends the read, closes the file
                    close()
        except UnreadableFileError as exc:
            status = NO_TEXT if str(exc) == NO_TEXT_LAYER else str(exc)
            raise AttachmentError(f"{source.name}: {status}.") from exc
    return Attachment(source, size, kind, pages)


class AttachmentStore:
    """The attachments of every conversation, under `<data dir>/attachments/`."""

    def __init__(self, root: Path) -> None:
        self.directory = root / ATTACHMENTS_DIR

    def add(self, conversation_id: str, source: Path) -> Attachment:
        """Copy `source` into the conversation's attachments (checked first, see `probe`)."""
        probed = probe(source)
        target = self.directory / conversation_id / uuid.uuid4().hex / source.name
        try:
            with source.open("rb") as original:
                atomic_write_with(target, lambda f: shutil.copyfileobj(original, f))
        except OSError as exc:
            raise AttachmentError(f"{source.name} cannot be read: {reason(exc)}.") from exc
        return Attachment(target, probed.size, probed.kind, probed.pages)

    def path(self, conversation_id: str, attached: AttachedFile) -> Path:
        """Where the copy of a message's attachment is."""
        return self.directory / conversation_id / attached.id / attached.name

    def restore(self, conversation_id: str, attached: AttachedFile, data: bytes) -> None:
        """Write an imported attachment's bytes where its message finds them (atomically);
        OSError if the disk refuses."""
        atomic_write_bytes(self.path(conversation_id, attached), data)

    def resolve(self, conversation_id: str, attached: AttachedFile) -> Attachment:
        """A message's attachment as a file (AttachmentError if its copy is gone)."""
        found = self.attachment(conversation_id, attached)
        if not found.path.is_file():
            raise AttachmentError(f"{attached.name}: its copy is no longer in the data folder.")
        return found

    def attachment(self, conversation_id: str, attached: AttachedFile) -> Attachment:
        """A message's attachment as its copy would be (nothing read: for its chip)."""
        path = self.path(conversation_id, attached)
        return Attachment(path, attached.size, kind_of(path) or "text", attached.pages)

    def of(self, conversation_id: str) -> list[Attachment]:
        """The attachments of a conversation (in no particular order)."""
        found = []
        for folder in sorted((self.directory / conversation_id).glob("*")):
            if folder.name == TOOL_IMAGES_DIR:
                continue
            for path in folder.iterdir():
                kind = kind_of(path)
                if kind is not None and not path.name.startswith("."):
                    found.append(Attachment(path, path.stat().st_size, kind, _pages(path, kind)))
        return found

    def save_tool_image(self, conversation_id: str, image: ToolImage) -> str:
        """Keep an image a tool returned in the conversation (it goes with it); its file name,
        made of its content's hash (saved once however often returned). OSError if it cannot."""
        data = base64.b64decode(image.data)
        name = f"{hashlib.sha1(data).hexdigest()}.{EXTENSIONS[image.mime_type]}"
        path = self.directory / conversation_id / TOOL_IMAGES_DIR / name
        if not path.exists():
            atomic_write_bytes(path, data)
        return name

    def restore_tool_image(self, conversation_id: str, name: str, data: bytes) -> None:
        """Write an imported tool image's bytes (`name` as `save_tool_image` gave it) where its
        tool result finds them (atomically); OSError if the disk refuses."""
        path = self.directory / conversation_id / TOOL_IMAGES_DIR / Path(name).name
        atomic_write_bytes(path, data)

    def tool_image(self, conversation_id: str, name: str) -> Path | None:
        """The file of an image `save_tool_image` kept, if it is there."""
        path = self.directory / conversation_id / TOOL_IMAGES_DIR / Path(name).name
        return path if path.is_file() else None

    def remove(self, conversation_id: str, attachment_id: str) -> None:
        """Delete one attachment's copy (its message was never saved)."""
        if attachment_id and "/" not in attachment_id and attachment_id not in (".", ".."):
            shutil.rmtree(self.directory / conversation_id / attachment_id, ignore_errors=True)

    def drop(self, conversation_id: str) -> None:
        """Delete a conversation's attachments (it was deleted)."""
        shutil.rmtree(self.directory / conversation_id, ignore_errors=True)


def _pages(path: Path, kind: FileKind) -> int | None:
    if kind != "pdf":
        return None
    try:
        return probe(path).pages
    except AttachmentError:
        return None


@dataclass
class Attached:
    """What attachments add to a user message: text (fenced by the caller), image parts, and
    notes for the chat ("report.pdf is long: the 6 passages closest to your message were sent")."""

    text: str = ""
    images: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def prepare(
    attachments: Sequence[Attachment],
    message: str,
    *,
    budget_tokens: int,
    accepts_images: bool,
) -> Attached:
    """What to send the model for these attachments with `message`, within `budget_tokens`
    for their text (shared evenly). AttachmentError for an image the model cannot take; a file
    that gives no text is named in the text and in a note."""
    out = Attached()
    texts = [a for a in attachments if a.kind != "image"]
    share = budget_tokens // max(1, len(texts))
    blocks = []
    for attachment in attachments:
        if attachment.kind == "image":
            if not accepts_images:
                raise AttachmentError(
                    f"{attachment.name}: this model does not accept images. Remove the image, "
                    "or choose a model that sees images in Settings."
                )
            out.images.append(_image_part(attachment))
            continue
        try:
            block, note = _text_of(attachment, message, share)
        except AttachmentError as exc:
            block, note = f"File {attachment.name}: not sent ({exc}).", str(exc)
        blocks.append(block)
        if note:
            out.notes.append(note)
    out.text = "\n\n".join(blocks)
    return out


def _image_part(attachment: Attachment) -> dict[str, Any]:
    data = base64.b64encode(attachment.path.read_bytes()).decode("ascii")
    mime = IMAGE_TYPES[attachment.path.suffix.lower()]
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}


def _text_of(attachment: Attachment, message: str, tokens: int) -> tuple[str, str]:
    """The attachment's text for the prompt (whole, or its passages closest to `message`) and
    a note if it was cut."""
    try:
        reading = read_file(attachment.path, attachment.kind, max_bytes=MAX_ATTACHMENT_MB * MB)
        chunks = list(reading.chunks)
    except UnreadableFileError as exc:
        raise AttachmentError(f"{attachment.name}: {exc}") from exc
    whole = "\n\n".join(_with_place(c) for c in chunks)
    header = f"File {attachment.name}"
    if estimate_tokens(whole) <= tokens:
        return f"{header}:\n{whole}", ""
    index = FileIndex(None, None)
    index.put(attachment.name, chunks)
    position = {chunk.text: i for i, chunk in enumerate(chunks)}
    ranked = [position[hit.text] for hit in index.search(message, len(chunks))]
    chosen: list[int] = []
    used = 0
    for i in ranked + [i for i in range(len(chunks)) if i not in ranked]:
        cost = estimate_tokens(chunks[i].text) + 8
        if used + cost > tokens:
            continue
        chosen.append(i)
        used += cost
    chosen.sort()
    note = (
        f"{attachment.name} is too long for the prompt: the {len(chosen)} of its "
        f"{len(chunks)} passages closest to your message were sent."
    )
    text = "\n\n".join(_with_place(chunks[i]) for i in chosen)
    return f"{header} ({note}):\n{text}", note


def _with_place(chunk: Chunk) -> str:
    label = chunk.place.label()
    return f"[{label}]\n{chunk.text}" if label else chunk.text
