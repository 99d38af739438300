"""A tool's result from an MCP server, as text for the model, cut to a budget, and its images."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

import mcp_types

from assistant.agent.tool_images import IMAGE_MIME_TYPES, ToolImage
from assistant.sizes import MB

# About 4,000 tokens: a result larger than this would crowd out the conversation.
RESULT_BUDGET_CHARS = 16_000
MAX_IMAGES = 4  # images of one result shown to the model; the others are described
MAX_IMAGE_BYTES = 8 * MB  # OpenAI takes 20 MB; a larger one is described


@dataclass(frozen=True)
class McpResult:
    """What a tool call returned: text for the model, whether it is an error, and the images
    the model can be shown (each also described in the text)."""

    text: str
    is_error: bool = False
    images: tuple[ToolImage, ...] = ()
    cut_from: int = 0  # the characters the result had before it was cut (0: not cut)


def to_result(result: mcp_types.CallToolResult, budget: int = RESULT_BUDGET_CHARS) -> McpResult:
    """The parts of `result` in order as text: images and audio described, links listed."""
    parts: list[str] = []
    images: list[ToolImage] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            what = f"{block.mime_type}, {_size(block.data)}"
            why = _unshowable(block, len(images))
            if why:
                parts.append(f"[image ({what}): not shown, {why}]")
            else:
                images.append(ToolImage(block.mime_type, block.data))
                parts.append(f"[image {len(images)} ({what}): shown after the tool results]")
        elif isinstance(block, mcp_types.AudioContent):
            what = f"{block.mime_type}, {_size(block.data)}"
            parts.append(f"[audio ({what}): not played to the model]")
        elif isinstance(block, mcp_types.ResourceLink):
            described = f" - {block.description}" if block.description else ""
            mime = f" ({block.mime_type})" if block.mime_type else ""
            parts.append(f"[resource link: {block.name} <{block.uri}>{mime}{described}]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(f"[resource <{resource.uri}>]\n{resource.text}")
            else:
                parts.append(f"[resource <{resource.uri}> ({resource.mime_type or 'binary'})]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(parts) if parts else "(the tool returned nothing)"
    return cut(McpResult(text, result.is_error, tuple(images)), budget)


def cut(result: McpResult, budget: int) -> McpResult:
    """The result cut to `budget` characters, with a note to the model saying so."""
    if len(result.text) <= budget:
        return result
    note = (
        f"\n[The result was cut: it had {len(result.text):,} characters and only the first "
        f"{budget:,} are shown. Ask for less (a narrower query, a page) if you need the rest.]"
    )
    return McpResult(result.text[:budget] + note, result.is_error, result.images, len(result.text))


def _unshowable(image: mcp_types.ImageContent, shown: int) -> str:
    """Why an image cannot be shown to the model ("" if it can)."""
    if image.mime_type not in IMAGE_MIME_TYPES:
        return "a type models are not sent"
    if shown >= MAX_IMAGES:
        return f"only the first {MAX_IMAGES} images of a result are"
    if len(image.data) * 3 // 4 > MAX_IMAGE_BYTES:
        return f"larger than {MAX_IMAGE_BYTES // MB} MB"
    try:
        base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        return "its data is not base64"
    return ""


def _size(data: str) -> str:
    size = len(data.rstrip("=")) * 3 // 4  # base64
    return f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} bytes"
