"""The visible text of one ChatGPT message: its parts, voice transcripts, placeholders for
images and files, canvas documents, and citation markers turned into links or removed."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from assistant.memory import MemoryKind
from assistant.transfer.plan import SuggestedMemory
from assistant.transfer.tally import Tally

ORIGIN = "Imported from ChatGPT"
# Citations and entities: "\ue200cite\ue202turn0search0\ue202turn0news3\ue201".
_MARKER = re.compile("([ \t]*)\ue200([^\ue200\ue201]*)\ue201")
_PRIVATE = re.compile("[\ue200-\ue203]")
_MARKS = re.compile("[\ue200-\ue203【]")
_OLD_CITATION = re.compile(r"【\d+(?::\d+)?†[^】]*】")  # "【11†source】", before 2024
_FENCED = re.compile(r"```\s*(.*?)\s*```", re.DOTALL)
# What carries no words of its own: the recording beside a transcript, thoughts, tool traffic.
_SILENT_PARTS = frozenset(
    {
        "audio_asset_pointer",
        "real_time_user_audio_video_asset_pointer",
        "video_container_asset_pointer",
    }
)
_SILENT_TYPES = frozenset(
    {
        "thoughts",
        "reasoning_recap",
        "model_editable_context",
        "tether_browsing_display",
        "tether_quote",
        "execution_output",
        "sonic_webpage",
    }
)
_LEFT_OUT_NAMES = {"system_error": "error notices", "app_pairing_content": "app pairings"}


def message_text(message: Mapping[str, Any], tally: Tally) -> str | None:
    """What the user saw of a message, or None if it shows nothing (or is not imported)."""
    content = message.get("content")
    if not isinstance(content, dict):
        return None
    kind = content.get("content_type")
    metadata = message.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    recipient = message.get("recipient", "all")
    if recipient not in ("all", None):
        return _canvas(content, recipient, tally)
    if kind == "user_editable_context":
        _custom_instructions(content, tally)
        return None
    if kind in _SILENT_TYPES:
        return None
    attachments = _attachments(metadata)
    if kind == "code":
        text = _code(content)
    elif isinstance(content.get("parts"), list):
        text = _parts(content["parts"], attachments, tally)
    elif isinstance(content.get("text"), str):
        text = content["text"]
    else:
        tally.leave_out(_LEFT_OUT_NAMES.get(str(kind), f"{kind} messages"))
        return None
    shown = {a["id"] for a in attachments if a.get("shown")}
    files = [_placeholder(a) for a in attachments if a["id"] not in shown]
    text = "\n".join(p for p in (text.strip("\n"), *files) if p.strip())
    text = clean_citations(text, metadata)
    return text if text.strip() else None


def clean_citations(text: str, metadata: Mapping[str, Any]) -> str:
    """Citation markers as Markdown links where the metadata lists the sources, else nothing."""
    if not _MARKS.search(text):
        return text
    references = metadata.get("content_references")
    if isinstance(references, list):
        for reference in references:
            if not isinstance(reference, dict):
                continue
            matched = reference.get("matched_text")
            if isinstance(matched, str) and matched and matched in text:
                pieces = text.split(matched)
                before = [p.rstrip(" \t") for p in pieces[:-1]]  # the link brings its space
                text = _links(reference).join([*before, pieces[-1]])
    text = _MARKER.sub(_entity, text)
    text = _OLD_CITATION.sub("", text)
    return _PRIVATE.sub("", text)


def _links(reference: Mapping[str, Any]) -> str:
    """ " ([title](url), [title](url))" for a reference's sources, else ""."""
    items = reference.get("items")
    sources = items if isinstance(items, list) else [reference]
    links = []
    for item in sources:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if isinstance(url, str) and url.startswith(("https://", "http://")):
            title = item.get("title") if isinstance(item.get("title"), str) else url
            links.append(f"[{' '.join(str(title).split())}]({url})")
    return f" ({', '.join(dict.fromkeys(links))})" if links else ""


def _entity(match: re.Match[str]) -> str:
    """An entity marker as its name ("entity", '["city", "Lisbon"]' -> "Lisbon"); others vanish."""
    kind, _, rest = match.group(2).partition("\ue202")
    if kind == "entity":
        try:
            value = json.loads(rest)
        except ValueError:
            return ""
        if isinstance(value, list) and len(value) > 1 and isinstance(value[1], str):
            return match.group(1) + value[1]
    return ""


def _parts(parts: list[Any], attachments: list[dict[str, Any]], tally: Tally) -> str:
    texts = []
    for part in parts:
        if isinstance(part, str):
            if part.strip():
                texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("content_type")
        if kind == "audio_transcription" or (kind not in _SILENT_PARTS and "text" in part):
            if isinstance(part.get("text"), str) and part["text"].strip():
                texts.append(part["text"])
        elif kind == "image_asset_pointer" or (kind is None and "asset_pointer" in part):
            texts.append(_image(part, attachments))
        elif kind not in _SILENT_PARTS:
            tally.leave_out(f"{kind} parts")
    return "\n".join(texts)


def _image(part: Mapping[str, Any], attachments: list[dict[str, Any]]) -> str:
    pointer = part.get("asset_pointer")
    file_id = pointer.split("://", 1)[-1] if isinstance(pointer, str) else ""
    for attachment in attachments:
        if attachment["id"] == file_id:
            attachment["shown"] = True
            return _placeholder(attachment)
    return "[image]"


def _attachments(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The message's files: id, name and type (copies: `_image` marks the ones it shows)."""
    raw = metadata.get("attachments")
    found = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            name = item.get("name")
            mime = item.get("mime_type") or item.get("mimeType")
            found.append(
                {
                    "id": item["id"],
                    "name": name if isinstance(name, str) and name.strip() else None,
                    "image": isinstance(mime, str) and mime.startswith("image/"),
                }
            )
    return found


def _placeholder(attachment: Mapping[str, Any]) -> str:
    label = "image" if attachment["image"] else "attachment"
    return f"[{label}: {attachment['name']}]" if attachment["name"] else f"[{label}]"


def _code(content: Mapping[str, Any]) -> str:
    text = content.get("text")
    if not isinstance(text, str) or not text.strip():
        return ""
    language = content.get("language")
    tag = language if isinstance(language, str) and language != "unknown" else ""
    return f"```{tag}\n{text.strip(chr(10))}\n```"


def _canvas(content: Mapping[str, Any], recipient: object, tally: Tally) -> str | None:
    """A canvas document the assistant wrote, as text; edits are counted, other calls skipped."""
    if not isinstance(recipient, str) or not recipient.startswith("canmore."):
        return None  # a tool call: its result shows in the next answer
    if recipient != "canmore.create_textdoc":
        tally.leave_out("canvas edits")
        return None
    try:
        document = json.loads(content.get("text") or "")
    except (TypeError, ValueError):
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("content"), str):
        tally.leave_out("canvas documents")
        return None
    name = document.get("name")
    title = f"[canvas: {name}]" if isinstance(name, str) and name.strip() else "[canvas]"
    return f"{title}\n\n{document['content']}"


def _custom_instructions(content: Mapping[str, Any], tally: Tally) -> None:
    """Keep "What should ChatGPT know about you?" and "How should ChatGPT respond?"."""
    fields: tuple[tuple[str, MemoryKind], ...] = (
        ("user_profile", "fact"),
        ("user_instructions", "preference"),
    )
    for key, kind in fields:
        text = content.get(key)
        if not isinstance(text, str) or not text.strip():
            continue
        fenced = _FENCED.findall(text)
        said = (fenced[-1] if fenced else text).strip()
        if said:
            tally.suggestions[SuggestedMemory(said, kind, ORIGIN)] = None
