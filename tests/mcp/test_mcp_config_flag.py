"""`--mcp-config` (Claude Code's flag, which the Agent SDKs pass): servers for one run, given as
JSON or a file; `--strict-mcp-config` starts those alone; an SDK host's own servers are set apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_repl.core.config.settings import load_settings
from agent_repl.mcp.config import McpConfigError, configured_servers, read_mcp_config_flag

from .conftest import stdio_server, write_mcp_json
from .test_mcp_print_mode import run_cli


def test_servers_from_the_flag_start_and_strict_leaves_the_rest_out(project: Path, home: Path):
    from agent_repl.emulator.policies import ScriptPolicy
    from agent_repl.emulator.server import EmulatorServer

    write_mcp_json(project, {"other": stdio_server()})
    config = json.dumps({"mcpServers": {"flagged": stdio_server(), "host": {"type": "sdk", "name": "host"}}})
    steps = [{"tools": [{"name": "mcp__flagged__add", "input": {"a": 1, "b": 2}}]}, {"text": "3."}]
    server = EmulatorServer(policy=ScriptPolicy({"steps": steps}))
    server.start()
    try:
        done = run_cli(["-p", "add", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
                        "--mcp-config", config, "--strict-mcp-config"], project, home, server)  # fmt: skip
        assert done.returncode == 0, done.stderr
        init = json.loads(done.stdout.splitlines()[0])
        assert init["mcp_servers"] == [{"name": "flagged", "status": "connected"}]
        assert "mcp__flagged__add" in init["tools"]
        assert json.loads(done.stdout.splitlines()[-1])["result"] == "3."
    finally:
        server.stop()


def test_the_flag_reads_files_and_names_what_is_wrong(project: Path, tmp_path: Path):
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"a": stdio_server()}}))
    servers, sdk = read_mcp_config_flag([str(path), '{"mcpServers": {"b": {"type": "sdk"}}}'], project)
    assert list(servers) == ["a"] and sdk == ["b"]
    settings = load_settings(cwd=project, env={"AGENT_REPL_HOME": str(tmp_path / "h")},
                             overrides={"flag_mcp_servers": servers}, trusted=True)  # fmt: skip
    assert [(s.name, s.source) for s in configured_servers(settings, project)[0]] == [("a", "--mcp-config")]
    for bad, said in (('{"servers": {}}', "mcpServers"), ('{"mcpServers": {"x": {"type": "ftp"}}}', "'x'"),
                      (str(tmp_path / "missing.json"), "missing.json")):  # fmt: skip
        with pytest.raises(McpConfigError, match=re.escape(said)):
            read_mcp_config_flag([bad], project)
