"""A conversation as a Markdown document to read or share: the branch on screen, its tool
calls as one line each (and the images a tool returned, given their bytes), the files a user
message carries by name, a user message left without a reply marked (with why, if known), no
ids. The user's words (and the title, and the tool lines) read as the chat shows them, as plain
text: their `*`, `#` and `<` are escaped, their lines and spaces kept; the replies are Markdown."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from datetime import datetime

from assistant.agent.tool_images import EXTENSIONS, saved_names
from assistant.memory import Conversation, Message

ImageBytes = Callable[[str], bytes | None]  # a kept tool image's name -> its bytes, if there

SPEAKERS = {"user": "You", "assistant": "Assistant", "system": "Note"}
ARGUMENT_CHARS = 80
# What Markdown (GitHub's, as Qt reads it) would take for markup anywhere in a line: escaped;
# links it would make of addresses (`http://`, `www.`, `a@b`) are broken by an escape too.
_INLINE = re.compile(r"[\\`*_\[\]<>&~|@]|://|(?<![\w.])www\.")
# ... and at the start of a line: a heading, quote, list item, rule or heading underline.
_LINE_START = re.compile(r"[#>+=-]|\d+(?=[.)])")
_MIME_TYPES = {extension: mime for mime, extension in EXTENSIONS.items()}


def conversation_markdown(conversation: Conversation, images: ImageBytes | None = None) -> str:
    """The conversation's chosen branch as Markdown, headed by its title and date; with
    `images`, the images its tools returned are in it too (as `data:` URLs)."""
    parts = [f"# {plain(_one_line(conversation.title)) or 'Conversation'}"]
    if day := _day(conversation.created_at):
        parts.append(f"*{day}*")
    branch = conversation.branch()
    for index, message in enumerate(branch):
        if message.role == "tool":
            parts.append(_tool_result(message))
            parts.extend(_images(message, images))
            continue
        if message.content.strip() or message.attachments:
            words = message.content.strip("\n")
            words = plain(words) if message.role == "user" else words.strip()
            parts.append(f"**{SPEAKERS[message.role]}**\n\n{words}".rstrip())
        if message.attachments:
            names = ", ".join(plain(_one_line(a.name)) for a in message.attachments)
            parts.append(f"*Attached: {names}*")
        if message.role == "user" and (
            index + 1 == len(branch) or branch[index + 1].role == "user"
        ):
            why = conversation.failures.get(message.id)
            parts.append(f"*(no reply: {plain(_one_line(why))})*" if why else "*(no reply)*")
        parts.extend(_tool_call(call) for call in message.tool_calls)
        if message.stop_reason == "stopped":
            parts.append("*(stopped)*")
        elif message.stop_reason is not None:
            parts.append("*(the reply broke off)*")
        elif message.cut_off:
            parts.append("*(cut off at the length limit)*")
    return "\n\n".join(parts) + "\n"


def _tool_call(call: dict[str, object]) -> str:
    function = call.get("function")
    name = str(function.get("name", "tool")) if isinstance(function, dict) else "tool"
    raw = str(function.get("arguments", "")) if isinstance(function, dict) else ""
    try:
        arguments = json.dumps(json.loads(raw), ensure_ascii=False) if raw else ""
    except ValueError:
        arguments = raw
    shown = arguments if len(arguments) <= ARGUMENT_CHARS else arguments[:ARGUMENT_CHARS] + "…"
    return f"> ▸ `{name}` {plain(shown)}".rstrip()


def _tool_result(message: Message) -> str:
    first = _one_line(message.content)
    shown = first if len(first) <= ARGUMENT_CHARS else first[:ARGUMENT_CHARS] + "…"
    return f"> {'→' if message.ok else '⚠'} {plain(shown)}"


def _images(message: Message, images: ImageBytes | None) -> list[str]:
    """The images a tool result kept, each as a Markdown image of its bytes."""
    if images is None:
        return []
    found = []
    for name in saved_names(message.content):
        data = images(name)
        if data is not None:
            mime = _MIME_TYPES[name.rpartition(".")[2]]
            url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            found.append(f"![An image the tool returned]({url})")
    return found


def plain(text: str) -> str:
    """Markdown that reads as `text` itself: its markup characters escaped, each line break a
    hard break, leading spaces and runs of spaces kept (as no-break spaces)."""
    return "\\\n".join(_plain_line(line) for line in text.split("\n"))


def _plain_line(line: str) -> str:
    body = line.lstrip(" \t")
    lead = line[: len(line) - len(body)].replace("\t", "    ")
    body = _INLINE.sub(_escaped, body)
    if start := _LINE_START.match(body):
        at = start.end() if start.group()[0].isdigit() else 0  # "1\." is no list item
        body = f"{body[:at]}\\{body[at:]}"
    body = re.sub(r"(?<= ) ", "&nbsp;", body)  # Markdown would fold a run of spaces into one
    return "&nbsp;" * len(lead) + body


def _escaped(found: re.Match[str]) -> str:
    mark = found.group()
    if mark == "://":
        return "\\://"
    return "www\\." if mark.startswith("www") else f"\\{mark}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _day(timestamp: str) -> str:
    try:
        moment = datetime.fromisoformat(timestamp).astimezone()
    except ValueError:
        return ""
    return f"{moment.day} {moment:%B %Y}"
