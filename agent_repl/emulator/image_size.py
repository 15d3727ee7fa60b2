"""Image token cost from the pixel size in the image header (no image library needed).

The API bills about width*height/750 tokens after scaling the image to fit 1568 px on its long
edge and about 1.15 megapixels. When the size cannot be read (URL or file sources, an unknown
format) the cost is the cap.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

IMAGE_TOKEN_CAP = 1_600
_MAX_EDGE = 1_568
_MAX_PIXELS = 1_150_000


def image_tokens(width: int, height: int) -> int:
    if width <= 0 or height <= 0:
        return IMAGE_TOKEN_CAP
    scale = min(1.0, _MAX_EDGE / max(width, height), math.sqrt(_MAX_PIXELS / (width * height)))
    scaled_w, scaled_h = max(1, int(width * scale)), max(1, int(height * scale))
    return min(IMAGE_TOKEN_CAP, max(1, math.ceil(scaled_w * scaled_h / 750)))


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        index += 2 + length
    return None


def pixel_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            width = int.from_bytes(data[24:27], "little") + 1
            height = int.from_bytes(data[27:30], "little") + 1
            return width, height
        if chunk == b"VP8 " and len(data) >= 30:
            width, height = struct.unpack("<HH", data[26:30])
            return width & 0x3FFF, height & 0x3FFF
        if chunk == b"VP8L" and len(data) >= 25:
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


# The header is near the start; decoding a bounded prefix keeps a 10 MB image cheap.
_HEADER_CHARS = 262_144


def base64_image_tokens(data: str) -> int:
    try:
        raw = base64.b64decode(data[:_HEADER_CHARS], validate=False)
    except (binascii.Error, ValueError):
        return IMAGE_TOKEN_CAP
    size = pixel_size(raw)
    return image_tokens(*size) if size else IMAGE_TOKEN_CAP
