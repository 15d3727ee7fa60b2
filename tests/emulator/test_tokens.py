"""The emulator's token counter: deterministic, memoized, cl100k x factor."""

from __future__ import annotations

import base64
import struct
import zlib

from agent_repl.emulator.image_size import IMAGE_TOKEN_CAP, image_tokens
from agent_repl.emulator.signatures import signature_tokens, thinking_signature
from agent_repl.emulator.tokens import TokenCounter, cl100k


def _png(width: int, height: int) -> str:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    return base64.b64encode(data).decode()


def test_text_count_is_cl100k_times_factor_rounded() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 50
    raw = len(cl100k().encode(text))
    assert TokenCounter(1.07).count_text(text) == round(raw * 1.07)
    assert TokenCounter(1.0).count_text(text) == raw
    assert TokenCounter().count_text("") == 0


def test_counts_are_deterministic_across_counters() -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls -la", "b": 1}}
    reordered = {"input": {"b": 1, "command": "ls -la"}, "name": "Bash", "id": "toolu_1", "type": "tool_use"}
    assert TokenCounter().count_block(block) == TokenCounter().count_block(reordered) > 0


def test_block_counts_are_memoized_by_content() -> None:
    counter = TokenCounter()
    block = {"type": "text", "text": "some words to count " * 100}
    first = counter.count_block(block)
    assert (counter.hits, counter.misses) == (0, 1)
    # An equal block (a new object, and with a cache marker) is a memo hit.
    again = counter.count_block(
        {"type": "text", "text": "some words to count " * 100, "cache_control": {"type": "ephemeral"}}
    )
    assert again == first
    assert (counter.hits, counter.misses) == (1, 1)


def test_tool_result_counts_nested_text_and_images() -> None:
    counter = TokenCounter()
    text = "line of output\n" * 20
    as_string = counter.count_block({"type": "tool_result", "tool_use_id": "t", "content": text})
    as_list = counter.count_block(
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": text}]}
    )
    assert as_string == as_list == counter.count_text(text)
    with_image = counter.count_block(
        {
            "type": "tool_result",
            "tool_use_id": "t",
            "content": [
                {"type": "text", "text": text},
                {"type": "image", "source": {"type": "url", "url": "http://x/y.png"}},
            ],
        }
    )
    assert with_image == as_string + IMAGE_TOKEN_CAP
    assert counter.count_block({"type": "tool_result", "tool_use_id": "t"}) == 0


def test_image_tokens_follow_pixel_size() -> None:
    counter = TokenCounter()
    small = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png(200, 150)}}
    assert counter.count_block(small) == image_tokens(200, 150) == 40  # ceil(200*150/750)
    huge = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": _png(8000, 8000)},
    }
    # Scaled down to about 1.15 megapixels first: 1072 x 1072 / 750.
    assert counter.count_block(huge) == 1_533


def test_tool_definition_counts_name_description_and_schema() -> None:
    counter = TokenCounter()
    tool = {
        "name": "Read",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {}},
    }
    assert counter.count_tool(tool) > counter.count_text("Read a file.")
    longer = {**tool, "description": "Read a file. " * 20}
    assert counter.count_tool(longer) > counter.count_tool(tool)


def test_omitted_thinking_is_billed_from_its_signature() -> None:
    counter = TokenCounter()
    signature = thinking_signature("claude-opus-5-5", "deep thoughts", 321)
    assert signature_tokens(signature) == 321
    assert counter.count_block({"type": "thinking", "thinking": "", "signature": signature}) == 321
    assert counter.count_block({"type": "thinking", "thinking": "", "signature": "foreign"}) == 0


def test_truncate_text_stays_within_budget() -> None:
    counter = TokenCounter()
    text = "alpha beta gamma delta " * 40
    cut = counter.truncate_text(text, 10)
    assert text.startswith(cut) and cut
    assert counter.count_text(cut) <= 10
    assert counter.truncate_text("short", 100) == "short"
