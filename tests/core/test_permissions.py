from pathlib import Path

import pytest

from agent_repl.core.permissions.rules import Decision, PermissionPolicy, PermissionRequest, Rule


def req(command: str) -> PermissionRequest:
    return PermissionRequest(tool_name="Bash", key=command)


def allows(rule: str, command: str) -> bool:
    return PermissionPolicy.from_rules([rule], []).check(req(command)) is Decision.ALLOW_ONCE


def test_prefix_rule_matches_the_prefix_and_whole_words_only():
    assert allows("Bash(git status:*)", "git status")
    assert allows("Bash(git status:*)", "git status --short")
    assert allows("Bash(git status *)", "git status --short")
    assert not allows("Bash(git status:*)", "git statusx")
    assert not allows("Bash(git status:*)", "./git status")
    policy = PermissionPolicy.from_rules(["Bash(git status:*)"], [])
    assert policy.check(PermissionRequest("Read", "git status")) is None


def test_exact_and_whole_tool_rules():
    assert allows("Bash(ls -la)", "ls -la")
    assert allows("Bash(ls -la)", "'ls' \"-la\"")
    assert not allows("Bash(ls -la)", "ls -la /")
    assert allows("Bash", "anything at all; $(even this)")
    assert allows("Bash(*)", "anything at all")


def test_wildcards_in_the_middle():
    assert allows("Bash(git * main)", "git push origin main")
    assert not allows("Bash(git * main)", "git push origin dev")


def test_deny_beats_allow():
    policy = PermissionPolicy.from_rules(["Bash"], ["Bash(rm:*)"])
    assert policy.check(req("rm -rf build")) is Decision.DENY
    assert policy.check(req("ls")) is Decision.ALLOW_ONCE


def test_deny_beats_even_the_skip_flag():
    policy = PermissionPolicy.from_rules([], ["Bash(rm:*)"], skip_all=True)
    assert policy.check(req("rm x")) is Decision.DENY
    assert policy.check(req("ls")) is Decision.ALLOW_ONCE


def test_a_deny_rule_cannot_vouch_for_a_command_known_only_at_run_time():
    policy = PermissionPolicy.from_rules(["Bash"], ["Bash(rm:*)"], skip_all=True)
    assert policy.check(req('"$CMD" -rf x')) is None
    assert policy.check(req("eval \"$x\"")) is None
    assert PermissionPolicy.from_rules(["Bash"], []).check(req('"$CMD" -rf x')) is Decision.ALLOW_ONCE


def test_prefix_rule_does_not_approve_chained_commands():
    policy = PermissionPolicy.from_rules(["Bash(git status:*)"], [])
    assert policy.check(req("git status")) is Decision.ALLOW_ONCE
    assert policy.check(req("git status; rm -rf ~")) is None
    assert policy.check(req("git status && curl x | sh")) is None
    assert policy.check(req("git status $(rm x)")) is None


def test_bad_rule_is_a_clear_error():
    with pytest.raises(ValueError, match="not a permission rule"):
        Rule.parse("Bash(unclosed")


async def test_no_callback_means_denied_and_always_adds_the_narrowest_rule():
    policy = PermissionPolicy()
    assert await policy.decide(req("make test"), None) is Decision.DENY
    seen: list[PermissionRequest] = []

    async def always(request: PermissionRequest) -> Decision:
        seen.append(request)
        return Decision.ALLOW_ALWAYS

    assert await policy.decide(req("make test"), always) is Decision.ALLOW_ALWAYS
    # make runs what its words and the Makefile say (`make test SHELL=...`): only this line is saved.
    assert seen[0].always_rules == ("Bash(make test)",)
    assert policy.check(req("make test")) is Decision.ALLOW_ONCE
    assert policy.check(req("make test -j2")) is None
    assert policy.check(req("make")) is None
    assert policy.check(req("rm x")) is None
    assert await policy.decide(req("git status"), always) is Decision.ALLOW_ALWAYS
    assert seen[1].always_rules == ("Bash(git status:*)",)
    assert policy.check(req("git status --short")) is Decision.ALLOW_ONCE


def mcp(tool: str) -> PermissionRequest:
    return PermissionRequest(tool_name=tool, key="")


def test_mcp_rules_name_one_tool_or_every_tool_of_a_server():
    one = PermissionPolicy.from_rules(["mcp__github__create_issue"], [])
    assert one.check(mcp("mcp__github__create_issue")) is Decision.ALLOW_ONCE
    assert one.check(mcp("mcp__github__delete_repo")) is None
    for rule in ("mcp__github", "mcp__github__*"):
        server = PermissionPolicy.from_rules([rule], [])
        assert server.check(mcp("mcp__github__delete_repo")) is Decision.ALLOW_ONCE
        assert server.check(mcp("mcp__githubx__anything")) is None
        assert server.check(mcp("Bash")) is None
    both = PermissionPolicy.from_rules(["mcp__github"], ["mcp__github__delete_repo"])
    assert both.check(mcp("mcp__github__delete_repo")) is Decision.DENY
    assert both.check(mcp("mcp__github__create_issue")) is Decision.ALLOW_ONCE


async def test_always_allowing_an_mcp_tool_adds_the_rule_for_that_tool_only():
    policy = PermissionPolicy.from_rules([], [])

    async def always(request: PermissionRequest) -> Decision:
        return Decision.ALLOW_ALWAYS

    assert await policy.decide(mcp("mcp__demo__echo"), always) is Decision.ALLOW_ALWAYS
    assert [(r.tool, r.spec) for r in policy.allow] == [("mcp__demo__echo", None)]
    assert policy.check(mcp("mcp__demo__echo")) is Decision.ALLOW_ONCE
    assert policy.check(mcp("mcp__demo__crash")) is None


@pytest.mark.parametrize("command", ["", " ", "   ", "\t", "\n", " \t\n "])
async def test_always_on_an_empty_or_blank_command_saves_no_rule(command):
    policy = PermissionPolicy()
    seen: list[PermissionRequest] = []

    async def always(request: PermissionRequest) -> Decision:
        seen.append(request)
        return Decision.ALLOW_ALWAYS

    assert await policy.decide(req(command), always) is Decision.ALLOW_ONCE
    assert seen[0].always_rules == () and seen[0].always_rule() is None
    assert policy.allow == []
    assert policy.check(req("rm -rf x")) is None


async def test_always_on_a_line_no_rule_can_approve_offers_nothing():
    policy = PermissionPolicy()
    seen: list[PermissionRequest] = []

    async def always(request: PermissionRequest) -> Decision:
        seen.append(request)
        return Decision.ALLOW_ALWAYS

    await policy.decide(req("echo $(whoami)"), always)
    assert seen[0].always_rules == () and policy.allow == []


async def test_always_on_a_chained_line_names_each_command(tmp_path: Path):
    policy = PermissionPolicy(roots=(tmp_path,))
    seen: list[PermissionRequest] = []

    async def always(request: PermissionRequest) -> Decision:
        seen.append(request)
        return Decision.ALLOW_ALWAYS

    await policy.decide(PermissionRequest("Bash", "git add -A && git commit -m 'x y'", cwd=tmp_path), always)
    assert seen[0].always_rules == ("Bash(git add:*)", "Bash(git commit:*)")
    assert policy.check(PermissionRequest("Bash", "git add . && git commit -m z", cwd=tmp_path)) is Decision.ALLOW_ONCE
