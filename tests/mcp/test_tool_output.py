"""What an MCP call result becomes for the model, and the size limit on block results."""

from __future__ import annotations

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from agent_repl.core.loop.tool_execution import apply_size_limit
from agent_repl.core.model.messages import DocumentBlock, ImageBlock, TextBlock
from agent_repl.core.tooling.tool import ToolOutput
from agent_repl.mcp.tool import McpTool, tool_output

PNG = "iVBORw0KGgo="


def test_text_only_results_are_one_string_and_errors_stay_errors():
    output = tool_output(CallToolResult(content=[TextContent(type="text", text="a"), TextContent(type="text", text="b")]))
    assert output.content == "a\nb" and not output.is_error and output.summary == "a"
    failed = tool_output(CallToolResult(content=[TextContent(type="text", text="no such file")], is_error=True))
    assert failed.is_error and failed.content == "no such file"


def test_structured_content_alone_is_sent_as_json_and_nothing_at_all_says_so():
    assert tool_output(CallToolResult(content=[], structured_content={"n": 1})).content == '{"n": 1}'
    assert tool_output(CallToolResult(content=[])).content == "(no content)"


def test_images_the_model_reads_are_image_blocks_and_the_rest_is_named():
    result = CallToolResult(
        content=[
            ImageContent(type="image", data=PNG, mime_type="image/png"),
            ImageContent(type="image", data=PNG, mime_type="image/svg+xml"),
            AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            EmbeddedResource(type="resource", resource=TextResourceContents(uri="file:///a.txt", text="hello")),
            EmbeddedResource(
                type="resource", resource=BlobResourceContents(uri="file:///r.pdf", blob="JVBERi0=", mime_type="application/pdf")
            ),
            EmbeddedResource(
                type="resource", resource=BlobResourceContents(uri="file:///x.bin", blob="AAAA", mime_type="application/zip")
            ),
            ResourceLink(type="resource_link", name="spec", uri="https://example.com/spec"),
        ]
    )
    blocks = tool_output(result).content
    assert blocks == [
        ImageBlock(source={"type": "base64", "media_type": "image/png", "data": PNG}),
        TextBlock(text="[an image of type image/svg+xml the model cannot read, 8 bytes]"),
        TextBlock(text="[audio of type audio/wav, 3 bytes: not shown]"),
        TextBlock(text="[resource file:///a.txt]\nhello"),
        DocumentBlock(source={"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="}, title="file:///r.pdf"),
        TextBlock(text="[resource file:///x.bin of type application/zip, 3 bytes: not shown]"),
        TextBlock(text="[resource link spec: https://example.com/spec]"),
    ]


def test_a_block_result_over_the_limit_keeps_its_images_and_gets_one_preview(tmp_path):
    image = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": PNG})
    output = ToolOutput(content=[TextBlock(text="x" * 40_000), image, TextBlock(text="y" * 20_000)])
    limited, path = apply_size_limit(McpTool.__new__(McpTool), "toolu_1", output, tmp_path)
    assert path == str(tmp_path / "toolu_1.txt")
    assert (tmp_path / "toolu_1.txt").read_text() == "x" * 40_000 + "\n" + "y" * 20_000
    preview, kept = limited.content
    assert preview.text.startswith("<persisted-output>") and kept == image
    small = ToolOutput(content=[TextBlock(text="short"), image])
    assert apply_size_limit(McpTool.__new__(McpTool), "toolu_2", small, tmp_path) == (small, None)
