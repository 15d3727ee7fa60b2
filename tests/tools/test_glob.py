from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_repl.core.tooling.tool import ToolContext, ToolOutput
from agent_repl.tools._globpattern import compile_glob, expand_braces
from agent_repl.tools.glob import Glob, GlobArgs


def text_of(output: ToolOutput) -> str:
    assert isinstance(output.content, str), output.content
    return output.content


async def glob(ctx: ToolContext, tool: Glob | None = None, **raw: object) -> ToolOutput:
    tool = tool or Glob()
    args = tool.parse_args(raw)
    assert isinstance(args, GlobArgs), args
    return await tool.run(args, ctx)


def touch(path: Path, mtime: float, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


async def test_newest_first_and_relative_paths(ctx: ToolContext) -> None:
    now = time.time()
    touch(ctx.cwd / "a.py", now - 30)
    touch(ctx.cwd / "pkg" / "b.py", now - 10)
    touch(ctx.cwd / "pkg" / "deep" / "c.py", now - 20)
    touch(ctx.cwd / "pkg" / "notes.txt", now)
    out = await glob(ctx, pattern="**/*.py")
    assert text_of(out) == "pkg/b.py\npkg/deep/c.py\na.py"
    assert out.structured is not None
    assert out.structured["filenames"] == [str(ctx.cwd / p) for p in ("pkg/b.py", "pkg/deep/c.py", "a.py")]
    assert out.structured["numFiles"] == 3 and out.structured["truncated"] is False
    assert isinstance(out.structured["durationMs"], int)


async def test_pattern_forms(ctx: ToolContext) -> None:
    now = time.time()
    for name in ("top.ts", "src/x.ts", "src/y.tsx", "src/z.js", "src/sub/w.ts", "lib/v.ts"):
        touch(ctx.cwd / name, now)
    names = lambda out: sorted(text_of(out).split("\n"))  # noqa: E731
    assert names(await glob(ctx, pattern="*.ts")) == ["top.ts"]
    assert names(await glob(ctx, pattern="src/*.{ts,tsx}")) == ["src/x.ts", "src/y.tsx"]
    assert names(await glob(ctx, pattern="src/**/*.ts")) == ["src/sub/w.ts", "src/x.ts"]
    assert names(await glob(ctx, pattern="{src,lib}/?.ts")) == ["lib/v.ts", "src/x.ts"]
    assert names(await glob(ctx, pattern="src/[!x].ts*")) == ["src/y.tsx"]
    assert names(await glob(ctx, pattern="src/z.js")) == ["src/z.js"]
    assert names(await glob(ctx, pattern=str(ctx.cwd / "src" / "*.js"))) == ["src/z.js"]
    assert names(await glob(ctx, pattern="*.ts", path="lib")) == ["lib/v.ts"]


async def test_gitignore_and_dot_git_are_respected(ctx: ToolContext) -> None:
    now = time.time()
    (ctx.cwd / ".git" / "objects").mkdir(parents=True)
    touch(ctx.cwd / ".git" / "objects" / "x.py", now)
    touch(ctx.cwd / ".git" / "info" / "exclude", now, "secret.py\n")
    touch(ctx.cwd / ".gitignore", now, "build/\n*.pyc\n/only_top.py\n")
    touch(ctx.cwd / "keep.py", now)
    touch(ctx.cwd / "secret.py", now)
    touch(ctx.cwd / "only_top.py", now)
    touch(ctx.cwd / "sub" / "only_top.py", now)
    touch(ctx.cwd / "build" / "gen.py", now)
    touch(ctx.cwd / "mod.pyc", now)
    touch(ctx.cwd / "sub" / ".gitignore", now, "local.py\n!keep_me.pyc\n")
    touch(ctx.cwd / "sub" / "local.py", now)
    touch(ctx.cwd / "sub" / "keep_me.pyc", now)
    out = await glob(ctx, pattern="**/*.py*")
    assert sorted(text_of(out).split("\n")) == ["keep.py", "sub/keep_me.pyc", "sub/only_top.py"]
    # Searching inside a subdirectory still applies the rules of the directories above it.
    out = await glob(ctx, pattern="*.py", path="sub")
    assert text_of(out) == "sub/only_top.py"


async def test_symlink_loop_does_not_hang(ctx: ToolContext) -> None:
    now = time.time()
    touch(ctx.cwd / "d" / "f.txt", now)
    os.symlink(ctx.cwd, ctx.cwd / "d" / "loop")
    os.symlink("self", ctx.cwd / "self")
    os.symlink(ctx.cwd / "d" / "f.txt", ctx.cwd / "link.txt")
    out = await glob(ctx, pattern="**/*")
    assert sorted(text_of(out).split("\n")) == ["d/f.txt", "link.txt"]


async def test_truncation_to_100_newest(ctx: ToolContext) -> None:
    now = time.time()
    for i in range(150):
        touch(ctx.cwd / f"f{i:03}.txt", now - i)
    out = await glob(ctx, pattern="*.txt")
    lines = text_of(out).split("\n")
    assert lines[:100] == [f"f{i:03}.txt" for i in range(100)]
    assert "100 most recently modified of 150" in lines[100]
    assert out.structured is not None and out.structured["truncated"] is True
    assert out.structured["numFiles"] == 100


async def test_no_match_and_bad_path(ctx: ToolContext) -> None:
    out = await glob(ctx, pattern="*.nothing")
    assert not out.is_error and text_of(out) == "No files found"
    out = await glob(ctx, pattern="nope/*.py")
    assert text_of(out) == "No files found"
    assert (await glob(ctx, pattern="*", path="missing")).is_error
    (ctx.cwd / "file.txt").write_text("x")
    assert (await glob(ctx, pattern="*", path="file.txt")).is_error


async def test_uses_the_bash_working_directory(ctx: ToolContext) -> None:
    touch(ctx.cwd / "sub" / "x.md", time.time())
    ctx.state["cwd"] = str(ctx.cwd / "sub")
    out = await glob(ctx, pattern="*.md")
    assert text_of(out) == "x.md"


async def test_time_limit_reports_partial(ctx: ToolContext) -> None:
    touch(ctx.cwd / "a.txt", time.time())
    out = await glob(ctx, Glob(time_limit_seconds=0), pattern="**/*")
    assert out.structured is not None and out.structured["stoppedEarly"] == "time limit"
    assert "limit" in text_of(out)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("**/*.py", "a.pyc", False),
        ("*.py", "x/a.py", False),
        ("a/**", "a/b/c", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("[ab].txt", "c.txt", False),
        ("{x,y{1,2}}.c", "y2.c", True),
    ],
)
def test_compile_glob(pattern: str, path: str, matches: bool) -> None:
    compiled = compile_glob(pattern)
    rel = path[len(compiled.base) + 1 :] if compiled.base else path
    assert bool(compiled.regex.fullmatch(rel)) is matches


def test_brace_expansion() -> None:
    assert expand_braces("a.{py,pyi}") == ["a.py", "a.pyi"]
    assert expand_braces("{a,b{c,d}}") == ["a", "bc", "bd"]
    assert expand_braces("no{brace") == ["no{brace"]
