"""Files the assistant reads: attachments and knowledge folders, their text in chunks that
know their place, indexed by the memory's hybrid engine (no Qt here).

The names below are the package's face; each loads its module on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assistant.lazy import lazy_getattr

if TYPE_CHECKING:
    from assistant.knowledge.attachments import (
        Attached,
        Attachment,
        AttachmentError,
        AttachmentStore,
        prepare,
    )
    from assistant.knowledge.citations import Citation, citations_in, passages
    from assistant.knowledge.formats import FileKind, kind_of
    from assistant.knowledge.index import FileHit, FileIndex, cite
    from assistant.knowledge.library import FolderState, Knowledge
    from assistant.knowledge.reading import Chunk, Place, UnreadableFileError, read_file
    from assistant.knowledge.records import FileRecord
    from assistant.knowledge.service import KnowledgeEvent, KnowledgeService
    from assistant.knowledge.sources import Sources

_MODULES = {
    "attachments": ("Attached", "Attachment", "AttachmentError", "AttachmentStore", "prepare"),
    "citations": ("Citation", "citations_in", "passages"),
    "formats": ("FileKind", "kind_of"),
    "index": ("FileHit", "FileIndex", "cite"),
    "library": ("FolderState", "Knowledge"),
    "reading": ("Chunk", "Place", "UnreadableFileError", "read_file"),
    "records": ("FileRecord",),
    "service": ("KnowledgeEvent", "KnowledgeService"),
    "sources": ("Sources",),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "Attached",
    "Attachment",
    "AttachmentError",
    "AttachmentStore",
    "Chunk",
    "Citation",
    "FileHit",
    "FileIndex",
    "FileKind",
    "FileRecord",
    "FolderState",
    "Knowledge",
    "KnowledgeEvent",
    "KnowledgeService",
    "Place",
    "Sources",
    "UnreadableFileError",
    "citations_in",
    "cite",
    "kind_of",
    "passages",
    "prepare",
    "read_file",
]

__getattr__ = lazy_getattr(__name__, _HOME)
