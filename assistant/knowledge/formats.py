"""Which files Assistant reads, by their name: text, Markdown, source code, PDF, images."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

FileKind = Literal["text", "markdown", "code", "pdf", "image"]

TEXT_SUFFIXES = frozenset({".txt", ".text", ".log", ".rst", ".org", ".csv", ".tsv", ".tex"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd"})
CODE_SUFFIXES = frozenset(
    """
    .py .pyi .js .jsx .mjs .ts .tsx .c .h .cc .cpp .cxx .hpp .hh .java .kt .kts .scala .go .rs
    .rb .php .pl .pm .lua .r .jl .swift .m .mm .cs .fs .vb .sh .bash .zsh .fish .ps1 .bat .sql
    .html .htm .xml .css .scss .less .json .jsonl .yaml .yml .toml .ini .cfg .conf .env
    .gradle .cmake .mk .vue .svelte .dart .ex .exs .erl .hs .ml .clj .el .vim .proto .graphql
    """.split()
)
CODE_NAMES = frozenset({"Makefile", "Dockerfile", "CMakeLists.txt", "Rakefile", "Gemfile"})
PDF_SUFFIXES = frozenset({".pdf"})
# What a model that accepts images is sent (as `image_url` data URLs): the formats OpenAI takes.
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
               ".gif": "image/gif", ".webp": "image/webp"}  # fmt: skip


def kind_of(path: Path) -> FileKind | None:
    """The kind of file `path` names, or None if Assistant does not read such files."""
    suffix = path.suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in PDF_SUFFIXES:
        return "pdf"
    if suffix in IMAGE_TYPES:
        return "image"
    if suffix in CODE_SUFFIXES or path.name in CODE_NAMES:
        return "code"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return None


def is_indexed_kind(kind: FileKind | None) -> bool:
    """Whether files of this kind have text to index (images do not)."""
    return kind is not None and kind != "image"
