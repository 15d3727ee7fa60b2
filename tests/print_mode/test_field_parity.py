"""Print mode's json and stream-json hold every field of Claude Code's output that has a meaning
here: one scripted run of ours per format, its field paths against those recorded from the real
CLI (fixtures/cc_<version>_fields.json, see record_cc_fields.py), less the omissions that
agent_repl/print_mode.schema.json lists with their reasons (`x-omitted`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_repl.emulator.policies import ScriptPolicy
from agent_repl.emulator.server import EmulatorServer

sys.path.insert(0, str(Path(__file__).resolve().parent))

from field_paths import FORMATS, STEPS, field_paths  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "cc_2.1.332_fields.json"
SCHEMA = ROOT / "agent_repl" / "print_mode.schema.json"


def _omitted() -> list[dict[str, Any]]:
    return json.loads(SCHEMA.read_text())["x-omitted"]["omitted"]


def _is_omitted(kind: str, path: str | None, omitted: list[dict[str, Any]]) -> bool:
    """Whether the schema leaves out this kind of line (path None) or this path of it."""
    def names(entry_kind: str) -> bool:
        return kind == entry_kind or kind.startswith(f"{entry_kind}/")

    for entry in omitted:
        if any(names(k) for k in entry.get("kinds", [])):
            return True
        if path is not None and names(entry.get("kind", "")) and path in entry.get("paths", []):
            return True
    return False


def _our_paths(flags: list[str], tmp_path: Path) -> dict[str, list[str]]:
    server = EmulatorServer(policy=ScriptPolicy({"steps": STEPS}))
    server.start()
    try:
        home, work = tmp_path / "home", tmp_path / "work"
        work.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-test-fields", AGENT_REPL_HOME=str(home))
        done = subprocess.run(
            [sys.executable, "-m", "agent_repl", "-p", "run it", "--dangerously-skip-permissions", *flags],
            cwd=work, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    return field_paths(json.loads(line) for line in done.stdout.splitlines() if line.strip())


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_field_claude_code_prints_is_printed_or_listed_as_omitted(name: str, tmp_path: Path):
    recorded = json.loads(FIXTURE.read_text())["formats"][name]
    assert recorded["flags"] == FORMATS[name]  # the fixture was recorded with these flags
    ours = _our_paths(FORMATS[name], tmp_path)
    omitted = _omitted()
    missing = {
        kind: [p for p in paths if p not in ours.get(kind, []) and not _is_omitted(kind, p, omitted)]
        for kind, paths in recorded["kinds"].items()
        if not _is_omitted(kind, None, omitted)
    }
    assert {kind: paths for kind, paths in missing.items() if paths} == {}


def test_the_omission_list_names_only_what_claude_code_prints():
    """An omission for a field Claude Code does not print (or one agent-repl now prints) would hide nothing."""
    recorded = json.loads(FIXTURE.read_text())["formats"]
    seen = {(kind, path) for output in recorded.values() for kind, paths in output["kinds"].items() for path in paths}
    for entry in _omitted():
        for kind in entry.get("kinds", []):
            assert any(k == kind for k, _ in seen), kind
        for path in entry.get("paths", []):
            assert any((k == entry["kind"] or k.startswith(entry["kind"] + "/")) and p == path for k, p in seen), path


def test_field_paths_keep_structure_and_no_values():
    line = {"type": "result", "subtype": "success", "result": "secret text", "modelUsage": {"some-model": {"a": 1}},
            "message": {"content": [{"type": "tool_use", "input": {"command": "rm -rf /"}}]}}  # fmt: skip
    paths = field_paths([line])["result/success"]
    assert "modelUsage.*" in paths and "message.content[tool_use].input.*" in paths
    assert not any("secret" in p or "some-model" in p or "command" in p for p in paths)
