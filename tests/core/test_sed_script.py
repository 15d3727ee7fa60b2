"""The sed script reader: what runs a command, writes or reads a file, and what it cannot read."""

import pytest

from agent_repl.core.sed_script import sed_effects


def kinds(script: str) -> list[tuple[str, str | None]]:
    return [(e.kind, e.path) for e in sed_effects(script)]


@pytest.mark.parametrize("script", [
    "1,5p", "s/a/b/g", "s|a|b|2", "/x/d", "$!N;P;D", "1~2p", "0,/re/s//X/", "y/abc/xyz/", "/a/,+3p",
    "s/[/]/x/", "s/a\\/b/c/", "1{p;n}", ":a;N;ba", "a\\\ntext with e and w", "i hello w world", "=", "l 40",
    "s/x/y/I;s/p/q/M", "\\,x,p", "/[[:alpha:]]e/p", "# comment e id\np", "s/a/b/;q5",
])  # fmt: skip
def test_scripts_that_only_edit_the_stream(script):
    assert kinds(script) == []


@pytest.mark.parametrize("script, expected", [
    ("1e id", [("runs", None)]),
    ("e", [("runs", None)]),
    ("s/x/id/e", [("runs", None)]),
    ("s/[/]/x/e", [("runs", None)]),
    ("s/a/b/ge", [("runs", None)]),
    ("/x/{e id\n}", [("runs", None)]),
    ("1!G;h;$e id", [("runs", None)]),
    ("w /tmp/out", [("writes", "/tmp/out")]),
    ("1W out.txt", [("writes", "out.txt")]),
    ("s/a/b/w .git/hooks/pre-commit", [("writes", ".git/hooks/pre-commit")]),
    ("r /etc/shadow", [("reads", "/etc/shadow")]),
    ("$R ~/.ssh/id_ed25519", [("reads", "~/.ssh/id_ed25519")]),
])  # fmt: skip
def test_commands_that_run_write_or_read(script, expected):
    assert kinds(script) == expected


@pytest.mark.parametrize("script", ["s/a/b", "s/a/b/x", "k", "/unterminated", "1,", "y/ab/", "s/[a/b/"])
def test_what_the_reader_cannot_read_is_never_called_harmless(script):
    assert [k for k, _ in kinds(script)] == ["unknown"]
