"""An image path in a prompt (a file dropped on the terminal, or `@shot.png`) reaches the model as
an image block, checked on the request the emulator recorded."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

from tests.e2e.conftest import agent_env, run_agent


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _images(body: dict) -> list[dict]:
    found = []
    for message in body["messages"]:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "image":
                found.append(block)
    return found


def test_a_dropped_image_path_and_an_at_mention_are_sent_as_image_blocks(emulator, project: Path, home: Path, tmp_path: Path):
    shots = tmp_path / "My Screenshots"
    shots.mkdir()
    dropped = shots / "error dialog.png"
    dropped.write_bytes(_png(4, 3))
    (project / "logo.png").write_bytes(_png(2, 2))
    emulated = emulator([{"text": "I see a red dialog and a red logo."}])
    prompt = f"what does this show? {str(dropped).replace(' ', chr(92) + ' ')} and compare @logo.png; ignore logo.png"
    done = run_agent(["-p", prompt], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    [body] = emulated.bodies()
    images = _images(body)
    assert [base64.b64decode(i["source"]["data"]) for i in images] == [_png(2, 2), _png(4, 3)]
    assert all(i["source"]["media_type"] == "image/png" for i in images)
    # The prompt itself is sent as typed, and each image comes under a line naming its file.
    last = body["messages"][-1]["content"]
    texts = [b["text"] for b in last if b.get("type") == "text"]
    assert any(t.startswith(prompt) for t in texts)  # snip adds an [id:...] tag at the end
    assert any(f"attached the image {dropped}" in t for t in texts)


def test_a_path_that_only_looks_like_an_image_is_refused_with_a_notice_and_the_turn_goes_on(emulator, project, home, tmp_path):
    fake = tmp_path / "fake.png"
    fake.write_text("not an image at all")
    emulated = emulator([{"text": "ok"}])
    done = run_agent(["-p", f"look at {fake}", "--output-format", "text"], cwd=project, env=agent_env(emulated, home))
    assert done.returncode == 0, done.stderr
    [body] = emulated.bodies()
    assert _images(body) == []
    assert "not a PNG, JPEG, GIF or WebP image" in str(body["messages"])
