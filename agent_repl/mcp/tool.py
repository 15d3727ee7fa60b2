"""An MCP server's tool as a `Tool`: named `mcp__<server>__<tool>`, asked for like Bash.

Its definition is the server's, as listed once at start (a server that changes its list later
does not change the tool list the API sees). Results go through the same size limit, persisted
output and redaction as the built-in tools': text stays text, images the API reads become image
blocks, a PDF a document block, and what the model cannot read is named, not dropped silently.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from agent_repl.core.loop.tool_execution import INTERRUPTED_BY_USER
from agent_repl.core.model.mcp_config import mcp_tool_name
from agent_repl.core.model.messages import DocumentBlock, ImageBlock, TextBlock
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput
from agent_repl.mcp.connection import McpCallError, McpConnection, McpInterrupted

if TYPE_CHECKING:
    from mcp_types import CallToolResult
    from mcp_types import Tool as McpToolInfo

# Longer server descriptions are cut: one server must not fill the context with its prose.
MAX_DESCRIPTION_CHARS = 2_048
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


class McpArgs(BaseModel):
    """Whatever the model sent: the server validates its own input."""

    model_config = ConfigDict(extra="allow")

    @property
    def description(self) -> str:
        """What the permission prompt shows under the tool's name: the input, compactly."""
        text = json.dumps(self.model_extra or {}, separators=(",", ":"))
        return text if len(text) <= 300 else text[:299] + "…"


def _schema(value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and value.get("type") == "object":
        return value
    return dict(EMPTY_SCHEMA)


class McpTool(Tool[McpArgs]):
    args_model = McpArgs
    # Not read-only: it asks, and runs alone (a server's read-only hint is its own claim).
    is_read_only: ClassVar[bool] = False

    def __init__(self, connection: McpConnection, info: McpToolInfo) -> None:
        self.connection = connection
        self.server_tool = info.name
        self.name = mcp_tool_name(connection.name, info.name)
        description = (info.description or info.title or "").strip()
        if len(description) > MAX_DESCRIPTION_CHARS:
            description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
        self.description = description
        self.input_schema = _schema(info.input_schema)

    def api_schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolOutput:
        arguments = dict(args.model_extra or {})
        try:
            result = await self.connection.call(self.server_tool, arguments, ctx.cancelled)
        except McpInterrupted:
            return ToolOutput.error(INTERRUPTED_BY_USER)
        except McpCallError as exc:
            return ToolOutput.error(f"Error: {exc}", summary=str(exc))
        return tool_output(result)


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")


def _media(block: Any) -> str:
    return str(getattr(block, "mime_type", None) or getattr(block, "mimeType", None) or "")


def _content_block(block: Any) -> TextBlock | ImageBlock | DocumentBlock:
    kind = getattr(block, "type", "")
    if kind == "text":
        return TextBlock(text=block.text)
    if kind == "image":
        media = _media(block)
        if media in IMAGE_TYPES:
            return ImageBlock(source={"type": "base64", "media_type": media, "data": block.data})
        return TextBlock(text=f"[an image of type {media or 'unknown'} the model cannot read, {_decoded_size(block.data)} bytes]")
    if kind == "audio":
        return TextBlock(text=f"[audio of type {_media(block) or 'unknown'}, {_decoded_size(block.data)} bytes: not shown]")
    if kind == "resource":
        resource = block.resource
        uri, media = str(resource.uri), _media(resource)
        text = getattr(resource, "text", None)
        if text is not None:
            return TextBlock(text=f"[resource {uri}]\n{text}")
        blob = str(getattr(resource, "blob", ""))
        if media in IMAGE_TYPES:
            return ImageBlock(source={"type": "base64", "media_type": media, "data": blob})
        if media == "application/pdf":
            return DocumentBlock(source={"type": "base64", "media_type": media, "data": blob}, title=uri)
        return TextBlock(text=f"[resource {uri} of type {media or 'unknown'}, {_decoded_size(blob)} bytes: not shown]")
    if kind == "resource_link":
        return TextBlock(text=f"[resource link {getattr(block, 'name', '')}: {block.uri}]")
    return TextBlock(text=f"[{kind or 'unknown'} content: not shown]")


def tool_output(result: CallToolResult) -> ToolOutput:
    """The model's view of a call result: one string when it is all text, else a block list."""
    blocks = [_content_block(b) for b in result.content]
    if not blocks and result.structured_content is not None:
        blocks = [TextBlock(text=json.dumps(result.structured_content, ensure_ascii=False))]
    if all(isinstance(b, TextBlock) for b in blocks):
        text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        content: Any = text or "(no content)"
        first = text.strip().splitlines()[0][:200] if text.strip() else "(no content)"
    else:
        content = blocks
        first = f"{len(blocks)} content blocks"
    return ToolOutput(content=content, is_error=bool(result.is_error), summary=first)
