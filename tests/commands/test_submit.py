"""One classification of a typed line for every front end (agent_repl.commands.submit)."""

from __future__ import annotations

import pytest

from agent_repl.commands import default_registry
from agent_repl.commands.submit import CommandLine, MemoryNoteLine, PromptLine, ShellLine, Submission, submit

REGISTRY = default_registry()
HELP = REGISTRY.get("help")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/help", CommandLine("/help", "help", "", HELP)),
        ("  /HELP  me ", CommandLine("  /HELP  me ", "help", "me", HELP)),
        ("/nosuchcommand x", CommandLine("/nosuchcommand x", "nosuchcommand", "x", None)),
        ("/etc/passwd is a file", PromptLine("/etc/passwd is a file")),
        ("/", PromptLine("/")),
        ("!ls -la", ShellLine("!ls -la", "ls -la")),
        ("  ! git status ", ShellLine("  ! git status ", "git status")),
        ("!", PromptLine("!")),
        (
            "# run the tests with make test",
            MemoryNoteLine("# run the tests with make test", "run the tests with make test"),
        ),
        ("## Plan", PromptLine("## Plan")),
        ("#!/bin/sh", PromptLine("#!/bin/sh")),
        ("# title\nand a body", PromptLine("# title\nand a body")),
        ("#", PromptLine("#")),
        ("explain @src/main.py", PromptLine("explain @src/main.py")),
        ("what does !x mean", PromptLine("what does !x mean")),
    ],
)
def test_a_typed_line_is_one_of_four_things(line: str, expected: Submission) -> None:
    assert submit(line, REGISTRY) == expected


def test_a_memory_note_runs_remember() -> None:
    note = submit("# use tabs", REGISTRY)
    assert isinstance(note, MemoryNoteLine) and note.remember == "/remember use tabs"
