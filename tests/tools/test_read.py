from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from agent_repl.core.model.messages import ImageBlock
from agent_repl.core.tooling.tool import ToolContext, ToolOutput
from agent_repl.tools.read import MAX_LINE_CHARS, Read, ReadArgs

# 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def text_of(output: ToolOutput) -> str:
    assert isinstance(output.content, str), output.content
    return output.content


async def read(ctx: ToolContext, **raw: object) -> ToolOutput:
    tool = Read()
    args = tool.parse_args(raw)
    assert isinstance(args, ReadArgs), args
    return await tool.run(args, ctx)


async def test_numbered_lines_and_structured(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.py"
    path.write_text("first\nsecond\r\nthird")
    out = await read(ctx, file_path=str(path))
    assert not out.is_error
    assert text_of(out) == "1\tfirst\n2\tsecond\n3\tthird"
    assert out.structured == {
        "type": "text",
        "file": {
            "filePath": str(path),
            "content": "first\nsecond\nthird",
            "numLines": 3,
            "startLine": 1,
            "totalLines": 3,
        },
    }
    assert "3 lines" in out.summary


async def test_offset_and_limit(ctx: ToolContext) -> None:
    path = ctx.cwd / "n.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 101)))
    out = await read(ctx, file_path=str(path), offset=10, limit=3)
    text = text_of(out)
    assert text.startswith("10\tline 10\n11\tline 11\n12\tline 12")
    assert "Showing lines 10-12 of 100" in text
    assert out.structured is not None
    assert out.structured["file"]["startLine"] == 10
    assert out.structured["file"]["totalLines"] == 100


async def test_default_limit_is_2000_lines(ctx: ToolContext) -> None:
    path = ctx.cwd / "big.txt"
    path.write_text("x\n" * 2500)
    out = await read(ctx, file_path=str(path))
    lines = text_of(out).split("\n")
    assert lines[1999] == "2000\tx"
    assert "Showing lines 1-2000 of 2500" in lines[-1]
    assert out.structured is not None and out.structured["file"]["numLines"] == 2000


async def test_long_lines_are_cut(ctx: ToolContext) -> None:
    path = ctx.cwd / "long.txt"
    path.write_text("a" * 10_000 + "\n" + "é" * 5_000 + "\nshort\n")
    out = await read(ctx, file_path=str(path))
    lines = text_of(out).split("\n")
    assert lines[0] == "1\t" + "a" * MAX_LINE_CHARS + " [... line cut at 2000 chars]"
    assert lines[1] == "2\t" + "é" * MAX_LINE_CHARS + " [... line cut at 2000 chars]"
    assert lines[2] == "3\tshort"


async def test_offset_past_end_and_empty_file(ctx: ToolContext) -> None:
    path = ctx.cwd / "short.txt"
    path.write_text("one\ntwo\n")
    out = await read(ctx, file_path=str(path), offset=5)
    assert not out.is_error and "fewer than the offset 5" in text_of(out)
    empty = ctx.cwd / "empty.txt"
    empty.write_text("")
    out = await read(ctx, file_path=str(empty))
    assert not out.is_error and "is empty" in text_of(out)


async def test_image_is_an_image_block(ctx: ToolContext) -> None:
    path = ctx.cwd / "pixel.png"
    path.write_bytes(PNG)
    out = await read(ctx, file_path=str(path))
    assert not out.is_error
    assert isinstance(out.content, list) and len(out.content) == 1
    block = out.content[0]
    assert isinstance(block, ImageBlock)
    assert block.source == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert out.structured == {
        "type": "image",
        "file": {"filePath": str(path), "type": "image/png", "originalSize": len(PNG)},
    }


async def test_image_type_comes_from_the_bytes(ctx: ToolContext) -> None:
    path = ctx.cwd / "really-a-png.jpg"
    path.write_bytes(PNG)
    out = await read(ctx, file_path=str(path))
    assert isinstance(out.content, list) and isinstance(out.content[0], ImageBlock)
    assert out.content[0].source["media_type"] == "image/png"
    fake = ctx.cwd / "fake.gif"
    fake.write_text("not an image")
    assert (await read(ctx, file_path=str(fake))).is_error


async def test_relative_path_is_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "rel.txt").write_text("x")
    out = await read(ctx, file_path="rel.txt")
    assert out.is_error
    assert "absolute" in text_of(out) and str(ctx.cwd / "rel.txt") in text_of(out)


async def test_missing_file_suggests_similar_names(ctx: ToolContext) -> None:
    (ctx.cwd / "config.yaml").write_text("x")
    out = await read(ctx, file_path=str(ctx.cwd / "config.yml"))
    assert out.is_error
    assert text_of(out).startswith("File does not exist")
    assert str(ctx.cwd / "config.yaml") in text_of(out)


async def test_directory_binary_and_devices_are_refused(ctx: ToolContext) -> None:
    out = await read(ctx, file_path=str(ctx.cwd))
    assert out.is_error and "directory" in text_of(out)
    binary = ctx.cwd / "blob.txt"
    binary.write_bytes(b"abc\x00\x01\x02" * 100)
    out = await read(ctx, file_path=str(binary))
    assert out.is_error and "binary" in text_of(out)
    out = await read(ctx, file_path="/dev/zero")
    assert out.is_error and "character device" in text_of(out)


@pytest.mark.timeout(10)
async def test_fifo_is_refused_without_blocking(ctx: ToolContext) -> None:
    fifo = ctx.cwd / "pipe"
    os.mkfifo(fifo)
    out = await read(ctx, file_path=str(fifo))
    assert out.is_error and "FIFO" in text_of(out)


async def test_too_many_tokens_is_refused_with_figures(ctx: ToolContext) -> None:
    path = ctx.cwd / "words.txt"
    path.write_text("".join(f"alpha beta gamma delta {i} epsilon zeta eta theta\n" for i in range(2000)))
    out = await read(ctx, file_path=str(path))
    assert out.is_error
    assert "exceeds maximum allowed tokens (25000)" in text_of(out)
    assert text_of(out).startswith("File content (")
    assert "offset" in text_of(out) and "Grep" in text_of(out)
    ranged = await read(ctx, file_path=str(path), offset=100, limit=50)
    assert not ranged.is_error


async def test_huge_file_total_line_scan_is_capped(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_repl.tools.read

    monkeypatch.setattr(agent_repl.tools.read, "TOTAL_LINES_SCAN_BYTES", 1 << 20)
    path = ctx.cwd / "huge.log"
    with path.open("wb") as f:
        f.write(b"0123456789abcdef\n" * 200_000)  # 3.4 MB, three times the scan cap
    out = await read(ctx, file_path=str(path), limit=5)
    assert out.structured is not None
    info = out.structured["file"]
    assert info["totalLinesIsLowerBound"] is True
    assert 5 < info["totalLines"] < 200_000
    assert "of " in text_of(out) and "+." in text_of(out)


async def test_non_utf8_text_is_replaced_not_crashing(ctx: ToolContext) -> None:
    path = ctx.cwd / "latin1.txt"
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    out = await read(ctx, file_path=str(path))
    assert text_of(out) == "1\tcaf\ufffd"


async def test_reads_a_persisted_tool_result(ctx: ToolContext, tmp_path: Path) -> None:
    from agent_repl.core.tooling.persisted_output import persist_text

    persisted = persist_text("\n".join(str(i) for i in range(10_000)), "toolu_x", ctx.tool_results_dir)
    out = await read(ctx, file_path=str(persisted.path), offset=9_999, limit=2)
    assert text_of(out) == "9999\t9998\n10000\t9999"
