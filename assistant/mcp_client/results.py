"""A tool's result from an MCP server, as text for the model, cut to a budget."""

from __future__ import annotations

import json
from dataclasses import dataclass

import mcp_types

# About 4,000 tokens: a result larger than this would crowd out the conversation.
RESULT_BUDGET_CHARS = 16_000


@dataclass(frozen=True)
class McpResult:
    """What a tool call returned: text for the model, whether it is an error, and its images."""

    text: str
    is_error: bool = False
    images: tuple[str, ...] = ()  # mime types of the images the result held (described in text)
    cut_from: int = 0  # the characters the result had before it was cut (0: not cut)


def to_result(result: mcp_types.CallToolResult, budget: int = RESULT_BUDGET_CHARS) -> McpResult:
    """The parts of `result` in order as text: images and audio described, links listed."""
    parts: list[str] = []
    images: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            images.append(block.mime_type)
            what = f"{block.mime_type}, {_size(block.data)}"
            parts.append(f"[image ({what}): not shown to the model]")
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


def _size(data: str) -> str:
    size = len(data) * 3 // 4  # base64
    return f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} bytes"
