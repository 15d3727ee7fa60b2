"""Read: a file's lines, numbered as Claude Code numbers them, or an image as an image block."""

from __future__ import annotations

import asyncio
import base64
import difflib
import io
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from pydantic import Field

from agent_repl.core.model.messages import ImageBlock
from agent_repl.core.model.tokens import DEFAULT_CLAUDE_RATIO, estimate_tokens
from agent_repl.core.permissions.read_access import opened_refusal
from agent_repl.core.permissions.rules import PermissionRequest
from agent_repl.core.tooling.display import ToolDisplay, plural, structured_dict
from agent_repl.core.tooling.numbering import numbered_line
from agent_repl.core.tooling.persisted_output import format_size
from agent_repl.core.tooling.tool import Tool, ToolContext, ToolOutput, load_description
from agent_repl.tools._common import ToolArgs, current_cwd

DEFAULT_LINE_LIMIT = 2_000
MAX_LINE_CHARS = 2_000
# Enough bytes for MAX_LINE_CHARS characters of any UTF-8 text, read per line at most.
_MAX_LINE_BYTES = MAX_LINE_CHARS * 4 + 4
MAX_TOKENS = 25_000
# After the requested range, newlines are counted for at most this many bytes (a 10 GB log stays cheap).
TOTAL_LINES_SCAN_BYTES = 64 * 1024 * 1024
# Base64 of an image must stay under the API's 5 MB per image.
MAX_IMAGE_BYTES = 3_750_000
_BINARY_SNIFF_BYTES = 8_192
_UTF16_BOMS = ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
MAX_UTF16_BYTES = 16 * 1024 * 1024

IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".gif", ".webp"}
_BINARY_EXTENSIONS = frozenset(
    (
        ".pdf .zip .gz .tgz .bz2 .xz .zst .7z .rar .tar .jar .whl .exe .dll .so .dylib .o .a .class .pyc .pyo "
        ".bin .dat .sqlite .db .ico .bmp .tiff .mp3 .mp4 .mov .avi .wav .flac .ogg .woff .woff2 .ttf .otf "
        ".parquet .npy .pkl"
    ).split()
)


class ReadArgs(ToolArgs):
    file_path: str = Field(description="The absolute path of the file to read")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from (1-based). Use it for large files",
    )
    limit: int | None = Field(
        default=None, ge=1, description="How many lines to read. Use it for large files"
    )


def _image_media_type(head: bytes) -> str | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


class _EndlessLine(Exception):
    """A line that runs on past the scan limit (a sparse file, a binary tail): reading stops in it."""

    def __init__(self, head: bytes) -> None:
        super().__init__()
        self.head = head


def _read_line(f: BinaryIO) -> tuple[bytes, bool] | None:
    """The next line (at most _MAX_LINE_BYTES of it) and whether it was longer; the rest is skipped,
    up to TOTAL_LINES_SCAN_BYTES (then `_EndlessLine`, so a 10 GB line is never read through)."""
    chunk = f.readline(_MAX_LINE_BYTES)
    if not chunk:
        return None
    if chunk.endswith(b"\n") or len(chunk) < _MAX_LINE_BYTES:
        return chunk, False
    skipped = 0
    while more := f.readline(1 << 20):
        if more.endswith(b"\n"):
            break
        skipped += len(more)
        if skipped >= TOTAL_LINES_SCAN_BYTES:
            raise _EndlessLine(chunk)
    return chunk, True


def _decode_line(raw: bytes, was_long: bool) -> tuple[str, bool]:
    text = raw.decode("utf-8", errors="replace").rstrip("\n").removesuffix("\r")
    if was_long or len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS], True
    return text, False


def _count_rest(f: BinaryIO) -> tuple[int, bool]:
    """Lines left in `f` (bounded scan) and whether the scan stopped before the end of the file."""
    lines, scanned, last = 0, 0, b""
    while chunk := f.read(1 << 20):
        lines += chunk.count(b"\n")
        scanned += len(chunk)
        last = chunk[-1:]
        if scanned >= TOTAL_LINES_SCAN_BYTES:
            return lines, f.read(1) != b""
    if scanned and last != b"\n":
        lines += 1
    return lines, False


def _missing_file_message(path: Path, cwd: Path) -> str:
    text = f"File does not exist: {path}"
    parent = path.parent
    try:
        names: list[str] = []
        with os.scandir(parent) as entries:
            for entry in entries:
                names.append(entry.name)
                if len(names) >= 5_000:
                    break
        similar = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
        if similar:
            text += "\nDid you mean: " + ", ".join(str(parent / name) for name in similar) + "?"
    except OSError:
        pass
    return text + f"\nCurrent working directory: {cwd}"


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class ReadDisplay(ToolDisplay):
    def summary(self, tool_input: Mapping[str, Any], structured: Any) -> str | None:
        file = structured_dict(structured).get("file")
        return f"Read {plural(file['numLines'], 'line')}" if isinstance(file, dict) and "numLines" in file else None


class Read(Tool[ReadArgs]):
    name = "Read"
    display: ClassVar[ToolDisplay] = ReadDisplay()
    args_model = ReadArgs
    max_result_size_chars: ClassVar[int | None] = None
    is_read_only: ClassVar[bool] = True
    microcompact_clearable: ClassVar[bool] = True
    description = load_description(__file__, "read")

    def permission_request(self, args: ReadArgs, ctx: ToolContext) -> PermissionRequest | None:
        if not os.path.isabs(args.file_path):
            return None  # refused as relative before anything is read
        return PermissionRequest(self.name, os.path.normpath(args.file_path), reads=True)

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        output = await asyncio.to_thread(self._read, args, current_cwd(ctx))
        if not output.is_error and isinstance(output.structured, dict) and output.structured.get("type") == "text":
            # Edit and Write may now change this file, as long as it stays as it is now.
            ctx.files.record(args.file_path)
        return output

    def _read(self, args: ReadArgs, cwd: Path) -> ToolOutput:
        if not os.path.isabs(args.file_path):
            guess = Path(os.path.normpath(cwd / args.file_path))
            hint = f" Did you mean {guess}?" if guess.exists() else ""
            return ToolOutput.error(f"file_path must be an absolute path, got {args.file_path!r}.{hint}")
        path = Path(args.file_path)
        try:
            st = path.stat()
        except FileNotFoundError:
            return ToolOutput.error(_missing_file_message(path, cwd), summary=f"File not found: {path}")
        except OSError as exc:
            return ToolOutput.error(f"Cannot read {path}: {exc.strerror or exc}")
        if stat.S_ISDIR(st.st_mode):
            return ToolOutput.error(
                f"{path} is a directory, not a file. List it with Bash (ls) or find files in it with Glob."
            )
        if not stat.S_ISREG(st.st_mode):
            return ToolOutput.error(f"{path} is {_kind(st.st_mode)}; Read only reads regular files.")
        try:
            # O_NONBLOCK: if the path was swapped for a FIFO since stat, opening it must not hang.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            return ToolOutput.error(f"Cannot read {path}: {exc.strerror or exc}")
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ToolOutput.error(f"{path} is not a regular file; Read only reads regular files.")
            refused = opened_refusal(fd)
            if refused:
                return ToolOutput.error(refused)
            try:
                return self._read_open(f, path, st.st_size, args)
            except OSError as exc:
                return ToolOutput.error(f"Cannot read {path}: {exc.strerror or exc}")

    def _read_open(self, f: BinaryIO, path: Path, size: int, args: ReadArgs) -> ToolOutput:
        head = f.read(_BINARY_SNIFF_BYTES)
        suffix = path.suffix.lower()
        if suffix in IMAGE_EXTENSIONS:
            return self._read_image(f, path, size, head)
        utf16 = next((codec for bom, codec in _UTF16_BOMS if head.startswith(bom)), None)
        if utf16 is not None and size <= MAX_UTF16_BYTES:
            # Text with a UTF-16 byte-order mark (Windows tools write it): read it as its UTF-8 copy.
            f.seek(0)
            text = f.read(MAX_UTF16_BYTES + 1)[2:].decode(utf16, errors="replace")
            return self._read_text(io.BytesIO(text.encode("utf-8")), path, args)
        if b"\x00" in head or suffix in _BINARY_EXTENSIONS:
            return ToolOutput.error(
                f"{path} looks like a binary file ({format_size(size)}); Read shows text files and images "
                "(png, jpg, gif, webp). Inspect it with Bash (file, xxd, or a suitable tool) instead."
            )
        f.seek(0)
        return self._read_text(f, path, args)

    def _read_image(self, f: BinaryIO, path: Path, size: int, head: bytes) -> ToolOutput:
        media_type = _image_media_type(head)
        if media_type is None:
            return ToolOutput.error(
                f"{path} has an image extension but is not a PNG, JPEG, GIF or WebP image."
            )
        if size > MAX_IMAGE_BYTES:
            return ToolOutput.error(
                f"Image {path} is {format_size(size)}, over the {format_size(MAX_IMAGE_BYTES)} an image may be. "
                "Make a smaller copy with Bash (e.g. ImageMagick) and read that."
            )
        data = head + f.read(MAX_IMAGE_BYTES + 1 - len(head))
        encoded = base64.b64encode(data).decode("ascii")
        block = ImageBlock(source={"type": "base64", "media_type": media_type, "data": encoded})
        structured = {
            "type": "image",
            "file": {"filePath": str(path), "type": media_type, "originalSize": len(data)},
        }
        return ToolOutput(
            content=[block],
            structured=structured,
            summary=f"Read image {path.name} ({format_size(len(data))})",
        )

    def _read_text(self, f: BinaryIO, path: Path, args: ReadArgs) -> ToolOutput:
        start = max(args.offset or 1, 1)
        limit = args.limit or DEFAULT_LINE_LIMIT
        number, cut_lines = 0, 0
        lines: list[str] = []
        numbered: list[str] = []
        endless = False
        while number < start - 1 + limit and not endless:
            try:
                item = _read_line(f)
            except _EndlessLine as exc:
                item, endless = (exc.head, True), True
            if item is None:
                break
            number += 1
            raw, was_long = item
            if number < start:
                continue
            text, cut = _decode_line(raw, was_long)
            cut_lines += cut
            lines.append(text)
            numbered.append(numbered_line(number, text) + (" [... line cut at 2000 chars]" if cut else ""))
        rest, capped = (0, True) if endless else _count_rest(f)
        total = number + rest
        file_info: dict[str, Any] = {
            "filePath": str(path),
            "content": "\n".join(lines),
            "numLines": len(lines),
            "startLine": start,
            "totalLines": total,
        }
        if capped:
            file_info["totalLinesIsLowerBound"] = True
        structured = {"type": "text", "file": file_info}
        if total == 0:
            text = f"<system-reminder>Note: {path} exists but is empty.</system-reminder>"
            return ToolOutput(content=text, structured=structured, summary=f"Read {path.name}: empty file")
        if not lines:
            text = (
                f"<system-reminder>Note: {path} has {total}{'+' if capped else ''} lines, "
                f"fewer than the offset {start}.</system-reminder>"
            )
            return ToolOutput(
                content=text, structured=structured, summary=f"Read {path.name}: offset past end"
            )
        text = "\n".join(numbered)
        end = start + len(lines) - 1
        if end < total or capped:
            text += (
                f"\n\n(Showing lines {start}-{end} of {total}{'+' if capped else ''}. "
                "Use offset and limit to read other parts.)"
            )
        if len(text.encode()) * DEFAULT_CLAUDE_RATIO > MAX_TOKENS and (tokens := estimate_tokens(text)) > MAX_TOKENS:
            return ToolOutput.error(
                f"File content ({tokens} tokens) exceeds maximum allowed tokens ({MAX_TOKENS}). "
                "Read a smaller part with offset and limit, or search for what you need with Grep.",
                summary=f"Read {path.name}: too large ({tokens} tokens)",
            )
        note = f", {cut_lines} long lines cut" if cut_lines else ""
        return ToolOutput(
            content=text, structured=structured, summary=f"Read {len(lines)} lines from {path.name}{note}"
        )
