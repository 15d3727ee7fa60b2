"""Edit and Write: read-before-write, stale files, exact matches, encodings and line endings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_repl.core.tooling.diffs import structured_patch
from agent_repl.core.tooling.tool import ToolContext
from agent_repl.tools import Edit, EditArgs, Read, ReadArgs, Write, WriteArgs
from agent_repl.tools.edit import ambiguous_error, not_read_error, stale_error


async def read(ctx: ToolContext, path: Path) -> None:
    out = await Read().run(ReadArgs(file_path=str(path)), ctx)
    assert not out.is_error, out.content


async def edit(ctx: ToolContext, path: Path, old: str, new: str, replace_all: bool = False):
    return await Edit().run(EditArgs(file_path=str(path), old_string=old, new_string=new, replace_all=replace_all), ctx)


async def test_edit_needs_a_read_first(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.py"
    path.write_text("x = 1\n")
    out = await edit(ctx, path, "x = 1", "x = 2")
    assert out.is_error
    assert out.content == f"{path} has not been read in this session. Read it with the Read tool first, then edit it."
    assert out.content == not_read_error(path)
    assert path.read_text() == "x = 1\n"


async def test_edit_replaces_once_and_reports_claude_codes_structured_result(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.py"
    original = "".join(f"line {i}\n" for i in range(1, 11))
    path.write_text(original)
    await read(ctx, path)
    out = await edit(ctx, path, "line 5\n", "line five\nline 5b\n")
    assert not out.is_error, out.content
    assert path.read_text() == original.replace("line 5\n", "line five\nline 5b\n")
    assert out.content.startswith(f"The file {path} has been updated. The changed part now reads (cat -n):\n")
    assert "5\tline five" in out.content and "6\tline 5b" in out.content
    s = out.structured
    assert s is not None
    assert set(s) == {"filePath", "oldString", "newString", "originalFile", "structuredPatch", "userModified", "replaceAll"}
    assert s["originalFile"] == original and s["replaceAll"] is False and s["userModified"] is False
    assert s["structuredPatch"] == [
        {
            "oldStart": 2,
            "oldLines": 7,
            "newStart": 2,
            "newLines": 8,
            "lines": [" line 2", " line 3", " line 4", "-line 5", "+line five", "+line 5b", " line 6", " line 7", " line 8"],
        }
    ]
    assert out.summary == "Updated a.py: 2 lines added, 1 line removed"


async def test_an_ambiguous_match_says_how_many_and_changes_nothing(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("foo\nbar\nfoo\nfoo\n")
    await read(ctx, path)
    out = await edit(ctx, path, "foo", "baz")
    assert out.is_error
    assert out.content == (
        f"old_string occurs 3 times in {path}, but replace_all is false. Include more of the surrounding "
        "lines so it matches exactly one place, or set replace_all to true to change all 3."
    )
    assert out.content == ambiguous_error(path, 3)
    assert path.read_text() == "foo\nbar\nfoo\nfoo\n"
    done = await edit(ctx, path, "foo", "baz", replace_all=True)
    assert not done.is_error and "(3 occurrences replaced)" in done.content
    assert path.read_text() == "baz\nbar\nbaz\nbaz\n"


async def test_a_miss_and_a_no_op_are_errors(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("hello\n")
    await read(ctx, path)
    miss = await edit(ctx, path, "goodbye", "x")
    assert miss.is_error and miss.content.startswith(f"old_string was not found in {path}.")
    same = await edit(ctx, path, "hello", "hello")
    assert same.is_error and "the same" in same.content


async def test_an_external_change_makes_the_next_edit_stale(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("one\ntwo\n")
    await read(ctx, path)
    assert not (await edit(ctx, path, "one", "uno")).is_error
    # Our own write keeps the file fresh: a second edit needs no new read.
    assert not (await edit(ctx, path, "two", "dos")).is_error
    path.write_text("uno\ndos\ntres\n")
    os.utime(path, ns=(1, 1))
    out = await edit(ctx, path, "tres", "three")
    assert out.is_error and out.content == stale_error(path)
    assert path.read_text() == "uno\ndos\ntres\n"
    await read(ctx, path)
    assert not (await edit(ctx, path, "tres", "three")).is_error


async def test_touching_a_file_we_wrote_does_not_make_it_stale(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.txt"
    path.write_text("a\n")
    await read(ctx, path)
    assert not (await edit(ctx, path, "a", "b")).is_error
    os.utime(path, ns=(10**18, 10**18))
    assert not (await edit(ctx, path, "b", "c")).is_error


async def test_crlf_files_keep_their_line_endings(ctx: ToolContext) -> None:
    path = ctx.cwd / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    await read(ctx, path)
    out = await edit(ctx, path, "first\nsecond", "one\ntwo\nmore")
    assert not out.is_error, out.content
    assert path.read_bytes() == b"one\r\ntwo\r\nmore\r\nthird\r\n"


@pytest.mark.parametrize(
    "encoded, encoding",
    [
        (b"\xef\xbb\xbfcaf\xc3\xa9 ol\xc3\xa9\n", "utf-8 with BOM"),
        ("\ufeffcafé olé\n".encode("utf-16-le"), "utf-16-le with BOM"),
        ("\ufeffcafé olé\n".encode("utf-16-be"), "utf-16-be with BOM"),
        ("café olé\n".encode("latin-1"), "latin-1"),
    ],
)
async def test_encodings_are_kept(ctx: ToolContext, encoded: bytes, encoding: str) -> None:
    path = ctx.cwd / "enc.txt"
    path.write_bytes(encoded)
    await read(ctx, path)
    out = await edit(ctx, path, "olé", "ola")
    assert not out.is_error, (encoding, out.content)
    assert path.read_bytes() == encoded.replace("olé".encode(_codec(encoded)), "ola".encode(_codec(encoded)))


def _codec(data: bytes) -> str:
    if data.startswith(b"\xff\xfe"):
        return "utf-16-le"
    if data.startswith(b"\xfe\xff"):
        return "utf-16-be"
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        return "latin-1"


async def test_binary_files_are_refused(ctx: ToolContext) -> None:
    path = ctx.cwd / "blob.dat2"
    path.write_bytes(b"abc\x00def")
    ctx.files.record(path)
    out = await edit(ctx, path, "abc", "xyz")
    assert out.is_error and "binary" in out.content
    out = await Write().run(WriteArgs(file_path=str(path), content="text"), ctx)
    assert out.is_error and "binary" in out.content
    assert path.read_bytes() == b"abc\x00def"


async def test_write_creates_parents_and_needs_a_read_to_overwrite(ctx: ToolContext) -> None:
    path = ctx.cwd / "new" / "deep" / "f.txt"
    out = await Write().run(WriteArgs(file_path=str(path), content="hi\nthere\n"), ctx)
    assert not out.is_error, out.content
    assert path.read_text() == "hi\nthere\n"
    assert out.structured == {
        "type": "create",
        "filePath": str(path),
        "content": "hi\nthere\n",
        "structuredPatch": structured_patch("", "hi\nthere\n"),
        "originalFile": None,
    }
    # Written by us, so it may be overwritten without a read.
    again = await Write().run(WriteArgs(file_path=str(path), content="bye\n"), ctx)
    assert not again.is_error and again.structured["type"] == "update"
    assert again.structured["originalFile"] == "hi\nthere\n"
    other = ctx.cwd / "exists.txt"
    other.write_text("keep me\n")
    refused = await Write().run(WriteArgs(file_path=str(other), content="gone\n"), ctx)
    assert refused.is_error and refused.content == not_read_error(other)
    assert other.read_text() == "keep me\n"


async def test_write_keeps_crlf_and_the_mode_and_follows_symlinks(ctx: ToolContext) -> None:
    target = ctx.cwd / "real.sh"
    target.write_bytes(b"echo a\r\n")
    target.chmod(0o755)
    link = ctx.cwd / "link.sh"
    link.symlink_to(target)
    await read(ctx, link)
    out = await Write().run(WriteArgs(file_path=str(link), content="echo b\necho c\n"), ctx)
    assert not out.is_error, out.content
    assert link.is_symlink()
    assert target.read_bytes() == b"echo b\r\necho c\r\n"
    assert target.stat().st_mode & 0o777 == 0o755


async def test_relative_paths_and_directories_are_refused(ctx: ToolContext) -> None:
    out = await edit(ctx, Path("a.txt"), "a", "b")
    assert out.is_error and "must be an absolute path" in out.content
    out = await Edit().run(EditArgs(file_path=str(ctx.cwd), old_string="a", new_string="b"), ctx)
    assert out.is_error and "is a directory" in out.content


async def test_edit_with_an_empty_old_string_creates_a_file(ctx: ToolContext) -> None:
    path = ctx.cwd / "made.txt"
    out = await edit(ctx, path, "", "content\n")
    assert not out.is_error and path.read_text() == "content\n"
    assert out.content.startswith(f"The file {path} has been created.")


def test_structured_patch_of_a_new_file_and_of_a_deletion() -> None:
    assert structured_patch("", "a\nb\n") == [
        {"oldStart": 0, "oldLines": 0, "newStart": 1, "newLines": 2, "lines": ["+a", "+b"]}
    ]
    assert structured_patch("a\nb\n", "") == [
        {"oldStart": 1, "oldLines": 2, "newStart": 0, "newLines": 0, "lines": ["-a", "-b"]}
    ]
    assert structured_patch("same\n", "same\n") == []


async def test_todo_write_keeps_the_list_and_reports_old_and_new(ctx: ToolContext) -> None:
    from agent_repl.core.model.todos import parse_todos
    from agent_repl.tools import TodoWrite, TodoWriteArgs

    first = [{"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"}]
    out = await TodoWrite().run(TodoWriteArgs.model_validate({"todos": first}), ctx)
    assert out.structured == {"oldTodos": [], "newTodos": first}
    second = [{**first[0], "status": "completed"}, {"content": "Ship", "status": "pending", "activeForm": "Shipping"}]
    out = await TodoWrite().run(TodoWriteArgs.model_validate({"todos": second}), ctx)
    assert out.structured == {"oldTodos": first, "newTodos": second}
    assert out.summary == "1/2 done"
    assert [(t.content, t.status) for t in parse_todos(second) or []] == [("Write tests", "completed"), ("Ship", "pending")]
    bad = TodoWrite().parse_args({"todos": [{"content": "x", "status": "doing", "activeForm": "x"}]})
    assert getattr(bad, "is_error", False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("3\tline 3\n4\tline 4", "3\tline three\n4\tline 4"),
        ("     3\u2192line 3\n     4\u2192line 4", "     3\u2192line three\n     4\u2192line 4"),
        ("3\tline 3\n4\tline 4", "line three\nline 4"),
    ],
    ids=["compact", "padded-arrow", "numbered-old-only"],
)
async def test_edit_accepts_read_line_numbers_copied_into_its_strings(ctx: ToolContext, old: str, new: str) -> None:
    path = ctx.cwd / "a.py"
    path.write_text("".join(f"line {i}\n" for i in range(1, 6)))
    await read(ctx, path)
    out = await edit(ctx, path, old, new)
    assert not out.is_error, out.content
    assert path.read_text() == "line 1\nline 2\nline three\nline 4\nline 5\n"


async def test_edit_leaves_numbers_that_are_part_of_the_file(ctx: ToolContext) -> None:
    path = ctx.cwd / "data.tsv"
    path.write_text("1\tone\n2\ttwo\n")
    await read(ctx, path)
    out = await edit(ctx, path, "1\tone\n2\ttwo", "1\tuno\n2\ttwo")
    assert not out.is_error, out.content
    assert path.read_text() == "1\tuno\n2\ttwo\n"


async def test_edit_refuses_numbers_that_do_not_run_consecutively(ctx: ToolContext) -> None:
    path = ctx.cwd / "a.py"
    path.write_text("line 1\nline 2\nline 3\n")
    await read(ctx, path)
    out = await edit(ctx, path, "1\tline 1\n3\tline 3", "x")
    assert out.is_error and "was not found" in out.content
