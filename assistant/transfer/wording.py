"""Import errors in words a user understands: which file, what is wrong, what to do.

The readers check fields and raise FieldError with a path and a problem
("conversations[1].messages[2].role: must be one of …"). `field_problem` says the same as a
sentence ("the “role” of message 3 in conversation 2 (“Trip”) is wrong: it must be one of …"),
keeping the path at the end for whoever corrects the file. `FileProblemError` is a file-level error
said of "the file" until the reader, which knows the file's name, names it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assistant import APP_NAME
from assistant.errors import InvalidImportError

# A list of the file and what one of its items is called.
_ITEMS = {
    "conversations": "conversation",
    "messages": "message",
    "chat_messages": "message",
    "memories": "memory",
    "projects": "project",
    "history": "history entry",
    "tool_calls": "tool call",
    "attachments": "attached file",
    "images": "image",
    "memory_ids": "memory id",
}
_PATH = re.compile(
    r"(?P<path>[A-Za-z_][\w-]*(?:\[\d+\])*(?:\.[^\s.:\[\]]+(?:\[\d+\])*)*): (?P<problem>.+)", re.S
)
_PART = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")
_UNSHOWABLE = re.compile("[\ud800-\udfff\x00-\x1f\x7f]")
# Words of the file format, as a user reads them.
_PLAIN = (
    ("an ISO 8601 timestamp", "a date and time such as 2025-03-01T09:30:00Z"),
    ("a string or null", "text or null"),
    ("must be a string", "must be text"),
    ("not a string", "not text"),
    ("expected a string", "expected text"),
    ("must be an object", "must be a group of named fields"),
    ("not an object", "not a group of named fields"),
    ("expected an object", "expected a group of named fields"),
)

Label = Callable[[str, int], str | None]  # ("conversations", 1) -> "Trip", if it has a name

REDO = (
    "The file may have been edited or damaged: export it again from the app that made it, "
    "or correct that entry."
)
DAMAGED = (
    "If it is an export, it may be damaged or only partly downloaded: download or export it again."
)
CHOOSE = (
    f"Choose a file made by File > Export in {APP_NAME}, or the export ChatGPT or Claude sent "
    "you (a .zip, or the conversations.json in it)."
)


class FileProblemError(InvalidImportError):
    """What is wrong with an import file, said of "The file" until `named` names it.

    `predicate` reads after the file's name: "is not valid JSON: it ends too early …".
    """

    def __init__(self, predicate: str) -> None:
        super().__init__(f"The file {predicate}")
        self.predicate = predicate

    def named(self, name: str) -> InvalidImportError:
        """The same error naming the file."""
        return InvalidImportError(f"{name} {self.predicate}")


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with "…", a character that cannot be
    shown or written (a lone surrogate, a control character) as "�"."""
    text = _UNSHOWABLE.sub("\ufffd", " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def plain(problem: str) -> str:
    """A field's problem with the format's words put plainly."""
    for words, said in _PLAIN:
        problem = problem.replace(words, said)
    unknown = re.fullmatch(r"unknown ([a-z ]+?) ('.*')", problem)
    if unknown:
        return f"{unknown.group(2)} is not a {unknown.group(1)} Assistant knows"
    if problem.startswith("expected "):
        return "it must be " + problem[len("expected ") :]
    if problem.startswith(("must ", "holds ", "differs ", "is ", "has ")):
        return "it " + problem
    if problem.startswith("not "):
        return "it is " + problem
    return problem


def field_problem(message: str, label: Label | None = None) -> str:
    """A FieldError's "path: problem" as a clause: "the “role” of message 3 in conversation 2
    (“Trip”) is wrong: it must be one of …"; `label` names a conversation or memory."""
    found = _PATH.fullmatch(message.strip())
    if found is None:
        return message.rstrip(".")
    path, problem = found.group("path"), found.group("problem").rstrip(".")
    owners: list[str] = []
    field: list[str] = []
    for name, indexes in _PART.findall(path):
        numbers = [int(i) for i in _INDEX.findall(indexes)]
        if field == ["mapping"]:  # ChatGPT's messages, by id
            owners.append(f"message “{name}”")
            field = []
            continue
        if not numbers:
            field.append(name)
            continue
        listed = ".".join([*field, name])
        field = []
        noun = _ITEMS.get(name)
        for depth, index in enumerate(numbers):
            if noun is None or depth:
                owners.append(f"item {index + 1} of “{listed}”")
                continue
            named = label(name, index) if label is not None else None
            owners.append(f"{noun} {index + 1}" + (f" (“{named}”)" if named else ""))
    owner = " in ".join(reversed(owners))
    where = f" (at {path})" if owners else ""  # else the field's name is its path
    if field:
        subject = f"the “{'.'.join(field)}” " + (f"of {owner}" if owner else "field")
    else:
        subject = owner or "it"
    if problem == "missing":
        return f"{subject} is missing{where}"
    return f"{subject} is wrong: {plain(problem)}{where}"
