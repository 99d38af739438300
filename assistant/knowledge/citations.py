"""File passages as the model reads them, and the citations read back from them for the chat.

`passages` writes search hits as numbered passages, each under a header line that holds its
source as JSON; `citations_in` finds those headers again in a tool result, so the chat can
show which files a reply read ("report.pdf p. 4") and open each at its place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.knowledge.index import FileHit, cite
from assistant.knowledge.reading import Place

_HEADER = re.compile(r"^\[(\d+)\] (\{.*\})$", re.MULTILINE)


@dataclass(frozen=True)
class Citation:
    """A place in a file that a reply read."""

    path: str
    place: Place

    def label(self) -> str:
        """As a chip says it: "report.pdf p. 4"."""
        return cite(self.path, self.place)


def passages(hits: Sequence[FileHit]) -> str:
    """Hits as numbered passages: a header line with the source, then the text."""
    blocks = []
    for n, hit in enumerate(hits, 1):
        header: dict[str, object] = {"source": hit.source(), "path": hit.path}
        if hit.place.page is not None:
            header["page"] = hit.place.page
        if hit.place.first_line is not None:
            header["lines"] = [hit.place.first_line, hit.place.last_line]
        if hit.place.heading:
            header["heading"] = list(hit.place.heading)
        blocks.append(f"[{n}] {json.dumps(header, ensure_ascii=False)}\n{hit.text}")
    return "\n\n".join(blocks)


def citations_in(text: str) -> list[Citation]:
    """The sources of the passages in a tool result (unescaped from its fence), in order."""
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    found: list[Citation] = []
    for match in _HEADER.finditer(text):
        try:
            raw = json.loads(match.group(2))
            lines = raw.get("lines") or [None, None]
            place = Place(raw.get("page"), lines[0], lines[1], tuple(raw.get("heading", ())))
            citation = Citation(str(raw["path"]), place)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            continue  # a passage's own text that looks like a header
        if citation not in found:
            found.append(citation)
    return found
