"""Custom slash commands (agent_repl/commands/custom.py): Claude Code's files read as it reads
them, their text sent as the next prompt, their shell lines run under the Bash rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_repl.commands import CommandContext, SessionHolder, default_registry
from agent_repl.commands.custom import expand_arguments, load_custom_commands, parse_command_file, shell_lines
from agent_repl.commands.results import HelpReport, PromptRequest, TextOutput
from agent_repl.core.api.client import ModelClient
from agent_repl.core.config.front_matter import FrontMatterError
from agent_repl.core.config.settings import Settings
from agent_repl.core.model.transcript_sink import MemorySink
from agent_repl.core.permissions.rules import Decision, Rule
from agent_repl.session import Session

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code_project"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _session(tmp_path: Path, cwd: Path, *, trusted: bool = True, ask=None) -> Session:
    from agent_repl.bootstrap import build_pipeline
    from agent_repl.tools import builtin_tools

    settings = Settings(
        home=tmp_path / "home", api_key="x", base_url="http://127.0.0.1:9", project_trusted=trusted
    )
    tools = builtin_tools()
    return Session(
        session_id="s-1", cwd=cwd, settings=settings,
        client=ModelClient(api_key="x", base_url="http://127.0.0.1:9", max_retries=0),
        tools=tools, projector=build_pipeline(settings, cwd, tools, tmp_path / "r"), sink=MemorySink(),
        tool_results_dir=tmp_path / "r", ask=ask,
    )


async def _never(resume, previous):
    raise AssertionError("no switch")


def _ctx(session: Session, *, interactive: bool = True) -> CommandContext:
    registry = default_registry()
    return CommandContext(SessionHolder(session, _never), registry, interactive=interactive)


@pytest.fixture(autouse=True)
def _no_real_claude_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))


def test_front_matter_fields_are_read_as_claude_code_writes_them(tmp_path):
    text = (
        "---\ndescription: Review a PR\nargument-hint: [pr-number] [priority]\n"
        "allowed-tools: Bash(git diff:*), Bash(git log:*), Read\nmodel: haiku\n---\nReview $1.\n"
    )
    command = parse_command_file(text, name="review-pr", namespace="", scope="project", source=tmp_path / "r.md")
    # `[pr-number] [priority]` is not YAML; it is read as the line it is.
    assert command.argument_hint == "[pr-number] [priority]"
    assert command.allowed_tools == ("Bash(git diff:*)", "Bash(git log:*)", "Read")
    assert (command.description, command.model, command.body) == ("Review a PR", "haiku", "Review $1.")


def test_without_front_matter_the_first_line_describes_the_command(tmp_path):
    command = parse_command_file("# Pre-Review\n\nDeep review.\n", name="pre-review", namespace="", scope="user",
                                 source=tmp_path / "p.md")  # fmt: skip
    assert command.description == "Pre-Review"
    assert command.origin == "(user)"


@pytest.mark.parametrize(
    ("front", "field"),
    [
        ("allowed-tools: Bash(git diff:*\n", "allowed-tools"),
        ("description: x\n- stray item\n", "not valid YAML at line 3"),
        ("description:\n  nested: true\n", "description"),
    ],
)
def test_a_bad_front_matter_is_a_message_naming_file_and_field(tmp_path, front, field):
    _write(tmp_path / ".claude" / "commands" / "bad.md", f"---\n{front}---\nbody\n")
    _write(tmp_path / ".claude" / "commands" / "good.md", "---\ndescription: fine\n---\nbody\n")
    catalog = load_custom_commands(tmp_path / "home", tmp_path / "ch", tmp_path, project_trusted=True)
    assert list(catalog.commands) == ["good"]
    [problem] = catalog.problems
    assert str(tmp_path / ".claude" / "commands" / "bad.md") in problem and field in problem


def test_parse_errors_name_the_field(tmp_path):
    with pytest.raises(FrontMatterError, match="`description` must be text"):
        parse_command_file("---\ndescription: {a: 1}\n---\nx", name="x", namespace="", scope="user", source=tmp_path)


def test_arguments_and_positional_words_are_substituted():
    assert expand_arguments("Fix #$ARGUMENTS now", "123 high") == "Fix #123 high now"
    assert expand_arguments("PR $1, priority $2, $3.", '456 "very high"') == "PR 456, priority very high, ."
    # A body without placeholders still gets what the user typed.
    assert expand_arguments("Review it.", "src/app.py") == "Review it.\n\nARGUMENTS: src/app.py"
    assert expand_arguments("Review it.", "") == "Review it."
    # What the user typed is not substituted again.
    assert expand_arguments("$ARGUMENTS and $1", "$1 x") == "$1 x and $1"


def test_subfolders_are_namespaces_shown_in_the_description(tmp_path):
    _write(tmp_path / ".claude" / "commands" / "frontend" / "component.md", "---\ndescription: A component\n---\nx")
    _write(tmp_path / "claude-home" / "commands" / "backend" / "api.md", "An endpoint\n")
    _write(tmp_path / "home" / "commands" / "component.md", "user's own\n")
    catalog = load_custom_commands(tmp_path / "home", tmp_path / "claude-home", tmp_path, project_trusted=True)
    component = catalog.commands["component"]
    # The project's file wins the plain name; the namespaced name reaches it too.
    assert (component.origin, component.scope) == ("(project:frontend)", "project")
    assert catalog.commands["frontend:component"] is component
    assert catalog.commands["api"].origin == "(user:backend)"
    # Listed once each, by name: the user's plain /component is hidden by the project's.
    assert [c.qualified_name for c in catalog.listed()] == ["backend:api", "frontend:component"]


def test_project_commands_wait_for_trust(tmp_path):
    shutil.copytree(FIXTURE / ".claude", tmp_path / ".claude")
    catalog = load_custom_commands(tmp_path / "home", tmp_path / "ch", tmp_path, project_trusted=False)
    assert catalog.commands == {}
    assert sorted(Path(p).name for p in catalog.held_back) == ["review.md", "smoke.md"]


async def test_the_fixture_command_becomes_the_next_prompt_and_is_listed(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    session = _session(tmp_path, project)
    ctx = _ctx(session)
    result = await ctx.registry.run("/review src/app.py", ctx)
    assert isinstance(result, PromptRequest)
    assert result.shown == "/review src/app.py"
    assert "Review the current changes or this scope:\n\nsrc/app.py\n\nFocus on correctness" in result.prompt
    # A reference to something that is not a file stays as written.
    assert result.prompt.startswith("@[agent:code-reviewer] @[skill:agent-code-architecture]")
    help_report = await ctx.registry.run("/help", ctx)
    assert isinstance(help_report, HelpReport)
    listed = {c.name: c for c in help_report.commands}
    assert listed["/review"].usage == "[scope or changed files]"
    assert listed["/review"].summary.endswith("(project)")
    assert ctx.registry.complete("/sm", session) == ["/smoke"]
    # Untrusted, the same folder's commands are unknown.
    untrusted = _ctx(_session(tmp_path, project, trusted=False))
    assert (await untrusted.registry.run("/review x", untrusted)).level == "error"  # type: ignore[union-attr]


async def test_a_built_in_name_is_never_taken_by_a_file(tmp_path):
    _write(tmp_path / ".claude" / "commands" / "help.md", "not the help\n")
    ctx = _ctx(_session(tmp_path, tmp_path))
    assert isinstance(await ctx.registry.run("/help", ctx), HelpReport)


async def test_shell_lines_run_through_bash_when_allowed(tmp_path):
    _write(tmp_path / ".claude" / "commands" / "status.md",
           "---\nallowed-tools: Bash(echo:*)\n---\nThe word: !`echo hello-$1`\nEnd.\n")  # fmt: skip
    ctx = _ctx(_session(tmp_path, tmp_path), interactive=False)
    result = await ctx.registry.run("/status there", ctx)
    # /status is a built-in: the file is hidden by it, and reachable by no other name.
    assert not isinstance(result, PromptRequest)
    _write(tmp_path / ".claude" / "commands" / "word.md",
           "---\nallowed-tools: Bash(echo:*)\n---\nThe word: !`echo hello-$1`\nEnd.\n")  # fmt: skip
    result = await ctx.registry.run("/word there", ctx)
    assert result == PromptRequest("The word: hello-there\nEnd.", shown="/word there")


async def test_a_shell_line_the_rules_do_not_allow_sends_nothing(tmp_path):
    _write(tmp_path / ".claude" / "commands" / "leak.md", "Here: !`cat /etc/hostname`\n")
    assert shell_lines("Here: !`cat /etc/hostname`\n") == ["cat /etc/hostname"]
    ctx = _ctx(_session(tmp_path, tmp_path), interactive=False)
    result = await ctx.registry.run("/leak", ctx)
    assert isinstance(result, TextOutput) and result.level == "error"
    assert "/leak: `cat /etc/hostname` was not allowed" in result.text and "nothing was sent" in result.text
    assert ctx.session.messages == []

    asked = []

    async def no(request):
        asked.append(request.key)
        return Decision.DENY

    ctx = _ctx(_session(tmp_path, tmp_path, ask=no))
    result = await ctx.registry.run("/leak", ctx)
    assert asked == ["cat /etc/hostname"]
    assert isinstance(result, TextOutput) and result.level == "error" and "nothing was sent" in result.text


async def test_a_deny_rule_beats_the_commands_allowed_tools(tmp_path):
    _write(tmp_path / ".claude" / "commands" / "rm.md", "---\nallowed-tools: Bash\n---\n!`rm -rf build`\n")
    session = _session(tmp_path, tmp_path)
    session.permissions.deny.append(Rule.parse("Bash(rm:*)"))
    ctx = _ctx(session, interactive=False)
    result = await ctx.registry.run("/rm", ctx)
    assert isinstance(result, TextOutput) and "not allowed" in result.text


async def test_a_failing_shell_line_sends_nothing(tmp_path):
    _write(tmp_path / ".claude" / "commands" / "fail.md", "---\nallowed-tools: Bash(ls:*)\n---\n!`ls no-such-dir`\n")
    ctx = _ctx(_session(tmp_path, tmp_path), interactive=False)
    result = await ctx.registry.run("/fail", ctx)
    assert isinstance(result, TextOutput) and result.level == "error"
    assert "failed" in result.text and "nothing was sent" in result.text


async def test_a_skill_is_also_a_command_the_user_types(tmp_path):
    from agent_repl.tools.skill import Skill, load_skills

    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    session = _session(tmp_path, project)
    catalog = load_skills(tmp_path / "home", tmp_path / "ch", project, project_trusted=True)
    session.tools["Skill"] = Skill(catalog)
    ctx = _ctx(session)
    result = await ctx.registry.run("/local-smoke-test the login flow", ctx)
    folder = (project / ".claude" / "skills" / "local-smoke-test").resolve()
    assert isinstance(result, PromptRequest) and result.shown == "/local-smoke-test the login flow"
    assert result.prompt.startswith(f"Base directory for this skill: {folder}\n\nUse this skill when planning")
    assert result.prompt.endswith("\n\nARGUMENTS: the login flow")
    help_report = await ctx.registry.run("/help", ctx)
    assert isinstance(help_report, HelpReport)
    listed = {c.name: c.summary for c in help_report.commands}
    assert listed["/local-smoke-test"].endswith("(skill, project)")
    # A command file of the same name wins over the skill.
    _write(project / ".claude" / "commands" / "local-smoke-test.md", "The file's own text\n")
    result = await ctx.registry.run("/local-smoke-test", ctx)
    assert isinstance(result, PromptRequest) and result.prompt == "The file's own text"


def test_print_modes_init_line_names_the_custom_commands(tmp_path):
    from agent_repl.print_mode import init_line

    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    names = init_line(_session(tmp_path, project))["slash_commands"]
    assert {"review", "smoke", "help"} <= set(names)
    assert "review" not in init_line(_session(tmp_path, project, trusted=False))["slash_commands"]
