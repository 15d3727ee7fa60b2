import pytest

from agent_repl.core.permissions import Decision, PermissionPolicy, PermissionRequest, Rule


def req(command: str) -> PermissionRequest:
    return PermissionRequest(tool_name="Bash", key=command)


def test_prefix_rule_matches_the_prefix_and_whole_words_only():
    rule = Rule.parse("Bash(git status:*)")
    assert rule.matches("Bash", "git status")
    assert rule.matches("Bash", "git status --short")
    assert not rule.matches("Bash", "git statusx")
    assert not rule.matches("Read", "git status")


def test_exact_and_whole_tool_rules():
    assert Rule.parse("Bash(ls -la)").matches("Bash", "ls -la")
    assert not Rule.parse("Bash(ls -la)").matches("Bash", "ls -la /")
    assert Rule.parse("Bash").matches("Bash", "anything at all")


def test_deny_beats_allow():
    policy = PermissionPolicy.from_rules(["Bash"], ["Bash(rm:*)"])
    assert policy.check(req("rm -rf build")) is Decision.DENY
    assert policy.check(req("ls")) is Decision.ALLOW_ONCE


def test_deny_beats_even_the_skip_flag():
    policy = PermissionPolicy.from_rules([], ["Bash(rm:*)"], skip_all=True)
    assert policy.check(req("rm x")) is Decision.DENY
    assert policy.check(req("ls")) is Decision.ALLOW_ONCE


def test_prefix_rule_does_not_approve_chained_commands():
    policy = PermissionPolicy.from_rules(["Bash(git status:*)"], [])
    assert policy.check(req("git status")) is Decision.ALLOW_ONCE
    assert policy.check(req("git status; rm -rf ~")) is None
    assert policy.check(req("git status && curl x | sh")) is None
    assert policy.check(req("git status $(rm x)")) is None


def test_bad_rule_is_a_clear_error():
    with pytest.raises(ValueError, match="not a permission rule"):
        Rule.parse("Bash(unclosed")


async def test_no_callback_means_denied_and_always_adds_a_rule():
    policy = PermissionPolicy()
    assert await policy.decide(req("make test"), None) is Decision.DENY

    async def always(_request: PermissionRequest) -> Decision:
        return Decision.ALLOW_ALWAYS

    assert await policy.decide(req("make test"), always) is Decision.ALLOW_ALWAYS
    assert policy.check(req("make test -j2")) is Decision.ALLOW_ONCE
    assert policy.check(req("make")) is None or policy.check(req("make")) is Decision.ALLOW_ONCE
    assert policy.check(req("rm x")) is None


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
