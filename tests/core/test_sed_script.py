"""The sed script reader: what runs a command, writes or reads a file, and what it cannot read."""

import pytest

from agent_repl.core.permissions.sed_script import sed_effects


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


# --- against GNU sed itself ------------------------------------------------------------------------
# `sed --sandbox` refuses, while reading the script, every command that runs a program or opens a
# file (e, s///e, w, W, s///w, r, R). A script the reader calls harmless must never be one of them.

import shutil  # noqa: E402
import subprocess  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SED = shutil.which("sed")
GNU = SED is not None and "GNU" in subprocess.run([SED, "--version"], capture_output=True, text=True).stdout
TOKENS = ["1", "$", ",", "/a/", "/[/]/", "\\,x,", "!", "{", "}", ";", "\n", "p", "d", "e", " id", "s/a/b/", "s/[/]/x/",
          "s|a|b|", "g", "w x", "w", "r x", "R", "W y", "y/a/b/", "a foo", "a\\", "i\\\n", "c bar", ":l", "b l", "t",
          "#c", " ", "\\", "/", "x", "N", "q", "l 2", "=", "I", "M", "~2", "+1", "0", "[", "]", "[:alpha:]", "s",
          "s/x/y/e", "s/x/y/ge", "s/x/y/gw z", "s/[/]/y/e", "e", "1e", "$!e", "a\\\ne", "/e/p", "y/e/w/"]  # fmt: skip


@pytest.mark.skipif(not GNU, reason="needs GNU sed")
@pytest.mark.slow
@settings(max_examples=1500, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=8).map("".join))
def test_a_script_the_reader_calls_harmless_passes_gnu_seds_sandbox(script):
    if sed_effects(script):
        return
    run = subprocess.run([SED, "--sandbox", "-n", "-e", script], input="a\nb\n", capture_output=True, text=True,
                         timeout=10)  # fmt: skip
    assert "disabled in sandbox mode" not in run.stderr, script
