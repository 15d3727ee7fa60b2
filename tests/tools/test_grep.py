from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_repl.core.tooling.tool import ToolContext, ToolOutput
from agent_repl.tools.grep import Grep, GrepArgs, find_rg


def text_of(output: ToolOutput) -> str:
    assert isinstance(output.content, str), output.content
    return output.content


async def grep(
    ctx: ToolContext, dashed: dict[str, object] | None = None, tool: Grep | None = None, **raw: object
) -> ToolOutput:
    """Run Grep; `dashed` carries the inputs whose names are not identifiers (`-i`, `-C`)."""
    tool = tool or Grep()
    args = tool.parse_args({**raw, **(dashed or {})})
    assert isinstance(args, GrepArgs), args
    return await tool.run(args, ctx)


def touch(path: Path, text: str, mtime: float | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


@pytest.fixture
def tree(ctx: ToolContext) -> Path:
    root = ctx.cwd
    now = time.time()
    touch(root / "src" / "old.py", "def alpha():\n    return 'Needle'\n", now - 300)
    touch(root / "src" / "new.py", "x = 1\nneedle = 2\ny = 3\nz = 4\nneedle_again = 5\n", now - 100)
    touch(root / "docs" / "readme.md", "A needle in docs\n", now - 200)
    touch(root / "build" / "gen.py", "needle = 'generated'\n", now)
    touch(root / ".gitignore", "build/\n*.log\n")
    touch(root / "debug.log", "needle in a log\n", now)
    touch(root / ".hidden" / "conf.py", "needle = 'hidden'\n", now - 400)
    return root


def test_rg_is_found() -> None:
    assert find_rg() is not None


async def test_files_with_matches_newest_first_and_gitignore(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="needle")
    # Newest first; build/ and *.log are ignored; case-sensitive, so old.py ("Needle") is out.
    assert text_of(out) == "Found 3 files\nsrc/new.py\ndocs/readme.md\n.hidden/conf.py"
    assert out.structured is not None
    assert out.structured["mode"] == "files_with_matches"
    assert out.structured["numFiles"] == 3
    assert out.structured["filenames"][0] == str(tree / "src" / "new.py")


async def test_case_insensitive_alias(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, {"-i": True}, pattern="needle")
    assert "src/old.py" in text_of(out)
    assert text_of(out).startswith("Found 4 files")


async def test_content_mode_with_line_numbers_and_context(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="needle", path="src", output_mode="content")
    assert text_of(out) == "src/new.py:2:needle = 2\nsrc/new.py:5:needle_again = 5"
    out = await grep(
        ctx, {"-B": 1, "-n": False}, pattern="needle_again", path="src/new.py", output_mode="content"
    )
    assert text_of(out) == "src/new.py-z = 4\nsrc/new.py:needle_again = 5"
    out = await grep(ctx, {"-C": 1}, pattern="^y", path="src", output_mode="content")
    assert text_of(out) == "src/new.py-2-needle = 2\nsrc/new.py:3:y = 3\nsrc/new.py-4-z = 4"
    assert out.structured is not None and out.structured["numLines"] == 3


async def test_count_mode(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="needle", output_mode="count")
    lines = text_of(out).split("\n")
    assert lines[:3] == [".hidden/conf.py:1", "docs/readme.md:1", "src/new.py:2"]
    assert lines[-1] == "Found 4 matching lines across 3 files."
    assert out.structured is not None and out.structured["numMatches"] == 4


@pytest.mark.timeout(30)
async def test_head_limit(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="needle", head_limit=1)
    assert text_of(out).startswith("Found 1 file\nsrc/new.py\n")
    assert out.structured is not None and out.structured["appliedLimit"] == 1
    out = await grep(ctx, pattern="=", path="src/new.py", output_mode="content", head_limit=2)
    assert text_of(out).split("\n")[:2] == ["src/new.py:1:x = 1", "src/new.py:2:needle = 2"]
    assert "head_limit" in text_of(out)


async def test_glob_and_type_filters(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="needle", glob="*.md")
    assert text_of(out) == "Found 1 file\ndocs/readme.md"
    out = await grep(ctx, pattern="needle", type="py")
    assert "docs/readme.md" not in text_of(out) and "src/new.py" in text_of(out)


async def test_no_matches_and_bad_input(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, pattern="zzz_nothing")
    assert not out.is_error and text_of(out) == "No files found"
    out = await grep(ctx, pattern="zzz_nothing", output_mode="content")
    assert text_of(out) == "No matches found"
    out = await grep(ctx, pattern="(unclosed")
    assert out.is_error and "regex" in text_of(out).lower()
    out = await grep(ctx, pattern="x", path="nope")
    assert out.is_error and "does not exist" in text_of(out)


async def test_paths_outside_cwd_are_absolute(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    touch(outside / "f.txt", "needle\n")
    out = await grep(ctx, pattern="needle", path=str(outside))
    assert text_of(out) == f"Found 1 file\n{outside / 'f.txt'}"


async def test_multiline(ctx: ToolContext) -> None:
    touch(ctx.cwd / "m.go", "type T struct {\n    field int\n}\n")
    out = await grep(ctx, pattern=r"struct \{[\s\S]*?field", output_mode="content")
    assert text_of(out) == "No matches found"
    out = await grep(ctx, pattern=r"struct \{.*?field", output_mode="content", multiline=True)
    assert "m.go:1:type T struct {" in text_of(out)


async def test_catastrophic_regex_is_bounded(ctx: ToolContext) -> None:
    # ripgrep's regex engine has no backtracking: this classic blow-up pattern stays linear.
    touch(ctx.cwd / "a.txt", "a" * 50_000 + "!\n")
    out = await grep(ctx, pattern="(a+)+$", output_mode="count")
    assert not out.is_error
    # A pattern that compiles to a huge automaton is refused by ripgrep instead of eating memory.
    out = await grep(ctx, pattern="(((a{100}){100}){100}){100}")
    assert out.is_error


@pytest.mark.timeout(20)
async def test_time_limit_stops_ripgrep(ctx: ToolContext) -> None:
    fifo = ctx.cwd / "pipe"
    os.mkfifo(fifo)  # ripgrep blocks opening a FIFO nobody writes to
    started = time.monotonic()
    out = await grep(ctx, tool=Grep(time_limit_seconds=0.5), pattern="x", path=str(fifo))
    assert time.monotonic() - started < 10
    assert out.is_error and "took over 0.5s" in text_of(out)


@pytest.mark.timeout(30)
async def test_output_is_capped(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_repl.tools.grep

    monkeypatch.setattr(agent_repl.tools.grep, "OUTPUT_CAP_BYTES", 10_000)
    # Far more output than the cap: ripgrep is stopped with its pipe full, which must not hang.
    touch(ctx.cwd / "many.txt", "match line\n" * 500_000)
    out = await grep(ctx, pattern="match", output_mode="content")
    assert out.structured is not None and out.structured["stoppedEarly"] == "output cap"
    body = text_of(out).split("\n")
    assert all(line == f"many.txt:{i + 1}:match line" for i, line in enumerate(body[:-1]))
    assert "results are incomplete" in body[-1]


def test_schema_uses_dash_names() -> None:
    schema = Grep().api_schema()["input_schema"]
    assert {"-i", "-n", "-A", "-B", "-C"} <= set(schema["properties"])
    assert "case_insensitive" not in schema["properties"]
