"""Where MCP servers come from, what a broken entry says, and how variables are expanded."""

from __future__ import annotations

import json

import pytest

from agent_repl.core.config.settings import SettingsError, load_settings, trust_project
from agent_repl.core.config.trust import WorkspaceTrust
from agent_repl.core.model.mcp_config import McpHttpServer, McpStdioServer, mcp_tool_name, server_of_tool
from agent_repl.mcp.config import (
    McpConfigError,
    configured_servers,
    expand,
    expanded,
    held_back_servers,
    server_environment,
)


def settings(project, home, **overrides):
    return load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home)}, overrides=overrides)


def write(path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_servers_come_from_user_settings_mcp_json_and_project_settings_later_ones_winning(project, home):
    write(home / "settings.json", {"mcp_servers": {"mine": {"command": "a"}, "shared": {"command": "user"}}})
    write(project / ".mcp.json", {"mcpServers": {"shared": {"command": "json"}, "web": {"type": "http", "url": "http://h/mcp"}}})
    write(project / ".agent_repl" / "settings.json", {"mcp_servers": {"local": {"command": "b", "args": ["-x"]}}})
    specs, problems = configured_servers(load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home)}, trusted=True), project)
    assert problems == []
    assert [(s.name, s.scope, s.allowed) for s in specs] == [
        ("local", "project", True),
        ("mine", "user", True),
        ("shared", "project", True),
        ("web", "project", True),
    ]
    by_name = {s.name: s for s in specs}
    assert by_name["shared"].config == McpStdioServer(command="json")
    assert by_name["shared"].source == str(project / ".mcp.json")
    assert by_name["web"].config == McpHttpServer(type="http", url="http://h/mcp")
    assert by_name["local"].source == str(project / ".agent_repl" / "settings.json")


def test_project_servers_are_held_back_in_an_untrusted_folder(project, home):
    write(home / "settings.json", {"mcp_servers": {"mine": {"command": "a"}}})
    write(project / ".mcp.json", {"mcpServers": {"repo": {"command": "./run-me"}}})
    specs, problems = configured_servers(settings(project, home), project)
    assert [(s.name, s.allowed) for s in specs] == [("mine", True), ("repo", False)]
    assert problems == []  # not a problem: the trust question and print mode's warning name it
    assert held_back_servers(settings(project, home), project) == ["MCP server 'repo' (.mcp.json)"]
    WorkspaceTrust(home).trust(project)
    trusted = settings(project, home)
    assert trusted.project_trusted and held_back_servers(trusted, project) == []
    assert [(s.name, s.allowed) for s in configured_servers(trusted, project)[0]] == [("mine", True), ("repo", True)]
    once = load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home / "elsewhere")}, trusted=True)
    assert once.project_trusted


def test_trusting_the_folder_in_the_question_lets_its_servers_start(project, home):
    write(project / ".mcp.json", {"mcpServers": {"repo": {"command": "./run-me"}}})
    trusted, problem = trust_project(settings(project, home), project)
    assert problem is None and trusted.project_trusted
    assert WorkspaceTrust(home).is_trusted(project)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON (line 1, column 2"),
        ('["a list"]', 'expected {"mcpServers": {"name": {...}}}'),
        ('{"mcpServers": {"x": {"args": ["a"]}}}', "MCP server 'x' was not started: command: Field required"),
        ('{"mcpServers": {"x": {"type": "sse", "url": "u"}}}', 'MCP server \'x\' was not started: entry: type must be "stdio"'),
        ('{"mcpServers": {"x": {"command": "a", "cwd": "/"}}}', "cwd: Extra inputs are not permitted"),
    ],
)
def test_a_broken_mcp_json_is_reported_and_starts_nothing(project, home, text, problem):
    write(project / ".mcp.json", text)
    specs, problems = configured_servers(load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home)}, trusted=True), project)
    assert specs == []
    assert len(problems) == 1 and problems[0].startswith(f"{project / '.mcp.json'}: ")
    assert problem in problems[0]


def test_a_broken_server_in_a_settings_file_stops_with_the_file_and_the_field(project, home):
    write(home / "settings.json", {"mcp_servers": {"x": {"type": "http"}}})
    with pytest.raises(SettingsError, match=r"settings.json: mcp_servers.x.http.url: Field required"):
        settings(project, home)


def test_claude_codes_timeout_variables_are_milliseconds(project, home):
    loaded = load_settings(cwd=project, env={"AGENT_REPL_HOME": str(home), "MCP_TIMEOUT": "2500", "MCP_TOOL_TIMEOUT": "90000"})
    assert (loaded.mcp_startup_timeout, loaded.mcp_tool_timeout) == (2.5, 90.0)


def test_variables_expand_with_defaults_and_never_to_the_agents_credentials():
    environ = {"TOKEN": "t", "ANTHROPIC_API_KEY": "sk-ant-secret"}
    assert expand("Bearer ${TOKEN}", environ) == "Bearer t"
    assert expand("${MISSING:-fallback}/${TOKEN}", environ) == "fallback/t"
    assert expand("no $TOKEN braces", environ) == "no $TOKEN braces"
    with pytest.raises(McpConfigError, match="needs the environment variable MISSING"):
        expand("${MISSING}", environ)
    with pytest.raises(McpConfigError, match="own credential"):
        expand("${ANTHROPIC_API_KEY:-x}", environ)
    config = McpHttpServer(type="http", url="https://${TOKEN}.example/mcp", headers={"X-Key": "${TOKEN}"})
    assert expanded(config, environ) == McpHttpServer(type="http", url="https://t.example/mcp", headers={"X-Key": "t"})


def test_a_stdio_server_starts_from_the_agents_environment_without_its_credentials():
    environ = {"PATH": "/bin", "ANTHROPIC_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": "t", "GITHUB_TOKEN": "g", "DB_PASS": "p"}
    assert server_environment(environ, frozenset({"DB_PASS"})) == {"PATH": "/bin", "GITHUB_TOKEN": "g"}
    with pytest.raises(McpConfigError, match="own credential"):
        expand("${DB_PASS}", environ, frozenset({"DB_PASS"}))


def test_tool_names_follow_claude_codes_pattern():
    assert mcp_tool_name("my server", "get.file") == "mcp__my_server__get_file"
    assert server_of_tool("mcp__github__create_issue") == "github"
    assert server_of_tool("mcp__github") is None and server_of_tool("Bash") is None
