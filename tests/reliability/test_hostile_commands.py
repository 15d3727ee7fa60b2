"""The hostile command corpus (hostile_commands.py) decided under allow rules and under deny rules,
each line also wrapped in `bash -c` and `eval` (a body is judged as the line itself is), plus a
property test: a generated line holding a substitution is never approved by a prefix rule."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agent_repl.core.permissions.rules import Decision, PermissionPolicy, PermissionRequest

from .hostile_commands import ALLOW_RULES, ALWAYS_CASES, CASES, DENY_RULES

PROJECT = Path("/nonexistent/hostile-project")
NAMES = {Decision.ALLOW_ONCE: "allow", Decision.DENY: "deny", None: "ask"}


def decide(policy: PermissionPolicy, command: str) -> str:
    return NAMES[policy.check(PermissionRequest("Bash", command, cwd=PROJECT))]


@pytest.fixture(scope="module")
def allow_policy() -> PermissionPolicy:
    return PermissionPolicy.from_rules(ALLOW_RULES, [], roots=[PROJECT])


@pytest.fixture(scope="module")
def deny_policy() -> PermissionPolicy:
    return PermissionPolicy.from_rules(["Bash"], DENY_RULES, roots=[PROJECT])


def test_the_corpus_is_large_and_has_no_duplicates():
    commands = [c[0] for c in CASES]
    assert len(commands) >= 200
    assert len(set(commands)) == len(commands), [c for c in commands if commands.count(c) > 1]


@pytest.mark.parametrize("command, under_allow, under_deny, why", CASES, ids=[repr(c[0])[:60] for c in CASES])
def test_each_hostile_line_is_decided_by_the_rules(allow_policy, deny_policy, command, under_allow, under_deny, why):
    assert (decide(allow_policy, command), decide(deny_policy, command)) == (under_allow, under_deny), why


WRAPS = {"bash -c": lambda c: f"bash -c {shlex.quote(c)}", "eval": lambda c: f"eval {shlex.quote(c)}",
         "sudo sh -c": lambda c: f"sudo sh -c {shlex.quote(c)}"}  # fmt: skip


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_a_line_run_through_a_shell_body_is_decided_as_the_line(allow_policy, deny_policy, wrap):
    """Under deny rules the body decides; no allow rule names these shells, so they are always asked."""
    wrong = []
    for command, _under_allow, under_deny, why in CASES:
        wrapped = WRAPS[wrap](command)
        got = (decide(allow_policy, wrapped), decide(deny_policy, wrapped))
        expected = ("ask", under_deny)
        if command == "make test" and wrap == "bash -c":
            expected = ("allow", "allow")  # Bash(bash -c 'make test') names exactly this
        if got != expected:
            wrong.append((wrapped, got, expected, why))
    assert wrong == []


# --- generated lines with a substitution ----------------------------------------------------------

NAME = st.sampled_from(["git", "echo", "ls", "cat", "make", "grep", "find", "printf"])
WORD = st.sampled_from(["status", "-la", "x", "README.md", "src", "'a b'", '"q"', "--short", "$HOME", "*.py"])
INNER = st.sampled_from(["touch P", "id", "rm -rf ~", "curl x|sh", "echo hi", ":", "cat /etc/passwd"])
SUBSTITUTIONS = [
    "$({inner})", "`{inner}`", "<({inner})", ">({inner})", '"$({inner})"', "${{x:-$({inner})}}",
    "${{x:=$({inner})}}", "$(( a[$({inner})] ))", "a$({inner})b", "$(echo $({inner}))", "'q'$({inner})",
    "${{x:-`{inner}`}}", '"${{x:-`{inner}`}}"', "${{x/`{inner}`/y}}", "${{x:-${{y:-`{inner}`}}}}", "$(( `{inner}` ))",
]  # fmt: skip
HOSTS = [
    "{name} {args} {sub}", "{sub}", "{name} {sub} {args}", "X={sub} {name} {args}", "{name} {args} > {sub}",
    "{name} {args} <<< {sub}", "for f in {sub}; do {name} {args}; done", "{name} {args} && echo {sub}",
    "case {sub} in *) {name};; esac", "if [ -n {sub} ]; then {name}; fi", "{name} {args}\n{name} {sub}",
    "{name} {args} | {name} {sub}", "({name} {sub})", "{{ {name} {sub}; }}", "cat <<EOF\n{sub}\nEOF",
    "cat <<EOF\nline {sub} end\nEOF", 'echo "{sub}"', "{name} {args} 2>{sub}",
]  # fmt: skip


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    name=NAME,
    args=st.lists(WORD, max_size=3).map(" ".join),
    inner=INNER,
    substitution=st.sampled_from(SUBSTITUTIONS),
    host=st.sampled_from(HOSTS),
    extra_rules=st.lists(st.sampled_from(["Bash(echo:*)", "Bash(touch:*)", "Bash(id)", "Bash(cat:*)"]), max_size=4),
)
def test_a_line_holding_a_substitution_is_never_approved_by_a_prefix_rule(
    name, args, inner, substitution, host, extra_rules
):
    # Here-documents and double quotes expand $(..) and backticks but not <(..) or >(..): text there.
    assume(not (host.startswith(("cat <<EOF", 'echo "')) and substitution.startswith(("<(", ">("))))
    command = host.format(name=name, args=args, sub=substitution.format(inner=inner))
    # Even with rules for the substituted commands themselves, the substitution is never approved.
    policy = PermissionPolicy.from_rules([f"Bash({name}:*)", f"Bash({name} {args})", *extra_rules], [],
                                         roots=[PROJECT])  # fmt: skip
    assert policy.check(PermissionRequest("Bash", command, cwd=PROJECT)) is None, command


# --- what "always" saves ------------------------------------------------------------------------


def saved_policy(first: str) -> tuple[PermissionPolicy, tuple[str, ...]]:
    """A policy with no rules after the user answered "always" to `first`."""
    policy = PermissionPolicy.from_rules([], [], roots=[PROJECT])
    asked = policy.evaluate(PermissionRequest("Bash", first, cwd=PROJECT))
    assert asked.decision is None, first
    for rule in asked.always_rules:
        policy.add_allow(rule)
    return policy, asked.always_rules


def hostile_follow_ups_approved() -> list[tuple[str, str]]:
    approved = []
    for first, _saved, follow_ups in ALWAYS_CASES:
        policy, _ = saved_policy(first)
        approved.extend((first, f) for f in follow_ups if decide(policy, f) == "allow")
    return approved


def test_the_always_corpus_is_large_and_has_no_duplicates():
    firsts = [c[0] for c in ALWAYS_CASES]
    follow_ups = [f for c in ALWAYS_CASES for f in c[2]]
    assert len(firsts) >= 40 and len(follow_ups) >= 90
    assert len(set(firsts)) == len(firsts)


@pytest.mark.parametrize("first, saved, follow_ups", ALWAYS_CASES, ids=[c[0][:50] for c in ALWAYS_CASES])
def test_always_saves_the_narrowest_rule_and_it_refuses_every_hostile_follow_up(first, saved, follow_ups):
    policy, always = saved_policy(first)
    assert always == saved
    assert decide(policy, first) == "allow", "the saved rule approves the command it was saved for"
    approved = [f for f in follow_ups if decide(policy, f) == "allow"]
    assert approved == []
    for follow_up in follow_ups:  # every question says why, on one line
        reason = policy.evaluate(PermissionRequest("Bash", follow_up, cwd=PROJECT)).reason
        assert reason and "\n" not in reason, follow_up


def test_no_hostile_follow_up_passes_a_rule_that_always_saved():
    assert hostile_follow_ups_approved() == []


def test_a_link_inside_the_project_to_a_file_outside_is_a_read_outside(tmp_path):
    """A prepared repository links `notes` to a secret: reading the link reads outside the project."""
    project, secret = tmp_path / "project", tmp_path / "secret.key"
    project.mkdir()
    secret.write_text("key")
    (project / "README.md").write_text("hi")
    (project / "notes").symlink_to(secret)
    policy = PermissionPolicy.from_rules(["Bash(cat:*)", "Bash(head:*)", "Bash(wc:*)"], [], roots=[project])

    def evaluate(command: str):
        return policy.evaluate(PermissionRequest("Bash", command, cwd=project))

    assert evaluate("cat README.md").decision is Decision.ALLOW_ONCE
    for command in ("cat notes", "head -n 1 notes", "cat *", "wc -c ./no*"):
        asked = evaluate(command)
        assert asked.decision is None, command
        assert "outside the project" in asked.reason and "\n" not in asked.reason, asked.reason


def test_a_reading_command_follows_the_read_rules():
    """What Read may read outside the project, `cat` may too; what a Read rule denies is asked."""
    policy = PermissionPolicy.from_rules(["Bash(cat:*)", "Read(//etc/hosts)"], ["Read(*.env)"], roots=[PROJECT])
    assert decide(policy, "cat /etc/hosts") == "allow"
    assert decide(policy, "cat /etc/passwd") == "ask"
    assert decide(policy, "cat README.md") == "allow"
    asked = policy.evaluate(PermissionRequest("Bash", "cat config/.env", cwd=PROJECT))
    assert asked.decision is None and asked.reason == "cat reads config/.env, which Read(*.env) denies"


@pytest.mark.parametrize("command, expected, reason", [
    ("cd src && cat notes.txt", "allow", None),
    ("cd src && cat ../../secret", "ask", "cat reads ../../secret, outside the project"),
    ("cd src && cd ../.. && ls", "ask", "cd ../.. leaves the project"),
    ("cd && ls", "ask", "cd with no folder goes to the home folder, outside the project"),
    ("cd $D && cat x", "ask", "cd changes to a folder only known when it runs"),
    ("head -c 16 /dev/urandom", "allow", None),
])  # fmt: skip
def test_a_relative_read_is_placed_in_every_folder_the_line_changes_to(command, expected, reason):
    policy = PermissionPolicy.from_rules(["Bash(cd:*)", "Bash(cat:*)", "Bash(ls:*)", "Bash(head:*)"], [],
                                         roots=[PROJECT])  # fmt: skip
    evaluation = policy.evaluate(PermissionRequest("Bash", command, cwd=PROJECT))
    assert NAMES[evaluation.decision] == expected
    if reason:
        assert evaluation.reason == reason


@pytest.mark.parametrize("command", ["echo 'import os' | python3", "python3 < evil.py", "python3 -", "cat x.js | node"])
def test_an_interpreter_reading_its_program_from_input_is_never_approved_by_a_rule(command):
    """Even rules naming exactly `python3` and `node` cannot vouch for a program piped into them."""
    policy = PermissionPolicy.from_rules(["Bash(python3)", "Bash(python3 -)", "Bash(node)", "Bash(echo:*)",
                                          "Bash(cat:*)"], [], roots=[PROJECT])  # fmt: skip
    evaluation = policy.evaluate(PermissionRequest("Bash", command, cwd=PROJECT))
    assert evaluation.decision is None
    assert evaluation.reason.endswith("runs whatever program arrives on its input"), evaluation.reason
