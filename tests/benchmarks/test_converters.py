"""Converters from other agents' trajectories to replay trajectories: on committed heads of real
files (always), on the full shared samples (when `../shared` is there), and on edge cases."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.replay.catalogue import SAMPLES, load_samples
from benchmarks.replay.convert_claude_code import convert_claude_code
from benchmarks.replay.convert_mini_swe import bash_output, convert_mini_swe, load_mini_swe
from benchmarks.replay.convert_swe_agent import load_swe_agent
from benchmarks.replay.trajectory import END_OF_TURN_TEXT, NO_OUTPUT_RECORDED, Step, ToolCall, normalize_steps

from .conftest import FIXTURES


def test_mini_swe_head_becomes_bash_calls_with_the_raw_output():
    t = load_mini_swe(FIXTURES / "mini_swe_django-11099_head.traj.json", name="django", source="fixture")
    [turn] = t.turns
    assert [u.is_meta for u in turn.user] == [False]
    assert turn.user[0].text.startswith("<pr_description>")
    calls = [c for s in turn.steps for c in s.tools]
    assert len(calls) == 3 and {c.name for c in calls} == {"Bash"}
    assert calls[0].input == {"command": 'find . -type f -name "*.py" | grep -i validator | head -20'}
    # The raw output, not mini-swe-agent's <returncode>/<output> wrapping.
    assert calls[0].output.startswith("./django/contrib/postgres/validators.py")
    assert "<returncode>" not in calls[0].output
    # Every step but the last calls a tool; the turn ends with a text-only step.
    assert all(s.tools for s in turn.steps[:-1]) and turn.steps[-1].tools == []
    assert turn.steps[-1].text == END_OF_TURN_TEXT


def test_mini_swe_text_format_takes_the_bash_block_and_the_next_user_message():
    data = {
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Fix the bug."},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls src\n```"},
            {"role": "user", "content": "<returncode>2</returncode>\n<output>\nls: cannot access\n</output>"},
            {"role": "assistant", "content": "Done, nothing to do."},
        ]
    }
    t = convert_mini_swe(data, name="x", source="y")
    [turn] = t.turns
    [call] = turn.steps[0].tools
    assert call.input == {"command": "ls src"}
    assert call.output == "Exit code 2\nls: cannot access" and call.is_error
    assert turn.steps[-1].text == "Done, nothing to do."
    assert t.typed_user_messages() == ["Fix the bug."]


def test_bash_output_matches_our_bash_tool():
    assert bash_output("", 0) == ("(no output)", False)
    assert bash_output("a\n", 0) == ("a", False)
    assert bash_output("boom\n", 1) == ("Exit code 1\nboom", True)
    assert bash_output("", -9) == ("Killed by signal 9", True)


def test_swe_agent_head_keeps_the_demonstration_as_injected_text():
    t = load_swe_agent(FIXTURES / "swe_agent_pydicom-1458_head.traj", name="pydicom", source="fixture")
    [turn] = t.turns
    assert [u.is_meta for u in turn.user] == [True, False]
    assert turn.user[1].text.startswith("We're currently solving the following issue")
    calls = [c for s in turn.steps for c in s.tools]
    assert [c.input["command"].split()[0] for c in calls] == ["create", "edit", "python"]
    assert calls[0].output.startswith("[File: /pydicom__pydicom/reproduce_bug.py (1 lines total)]")
    assert t.typed_user_messages() == [turn.user[1].text]


def test_claude_code_head_groups_local_commands_with_the_next_prompt():
    t = convert_claude_code(FIXTURES / "claude_code_barebones_head.jsonl", name="cc", source="fixture")
    [turn] = t.turns
    texts = [u.text for u in turn.user]
    assert texts[0].startswith("<local-command-caveat>") and turn.user[0].is_meta
    assert texts[1].startswith("<command-name>/context</command-name>")
    assert turn.user[-1].is_meta  # the skill's expanded body, sent after its slash command
    [bash] = [c for s in turn.steps for c in s.tools]
    assert bash.name == "Bash" and bash.input["command"].startswith("date ")
    assert bash.output != NO_OUTPUT_RECORDED
    assert turn.steps[-1].tools == [] and turn.steps[-1].text
    # Slash commands and local command output are injected by the client, not typed.
    assert t.typed_user_messages() == []


def test_claude_code_uses_the_full_text_of_a_persisted_result(tmp_path: Path):
    base = {"isSidechain": False, "userType": "external", "cwd": "/p", "sessionId": "s", "version": "2.1.6"}
    preview = "<persisted-output>\nOutput too large (1KB). Full output saved to: x\n\nPreview (first 2KB):\nab\n</persisted-output>"
    records = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "read it"}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {
            "id": "m1", "role": "assistant", "model": "claude", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat big"}}]}},
        {**base, "type": "user", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": preview}]}},
        {**base, "type": "assistant", "uuid": "a2", "parentUuid": "u2", "message": {
            "id": "m2", "role": "assistant", "model": "claude", "content": [{"type": "text", "text": "done"}]}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (tmp_path / "s" / "tool-results").mkdir(parents=True)
    (tmp_path / "s" / "tool-results" / "toolu_1.txt").write_text("the whole output")
    t = convert_claude_code(path, name="x", source="y")
    [turn] = t.turns
    assert turn.steps[0].tools[0].output == "the whole output"
    assert turn.steps[-1].text == "done"
    assert t.typed_user_messages() == ["read it"]


def test_normalize_steps_folds_mid_turn_text_and_ends_with_text():
    call = ToolCall(name="Bash", input={"command": "ls"})
    steps = normalize_steps([Step(text="a"), Step(tools=[call]), Step(text="b"), Step(text="c", tools=[call])])
    assert [(s.text, len(s.tools)) for s in steps] == [("a", 1), ("b\n\nc", 1), (END_OF_TURN_TEXT, 0)]
    assert [(s.text, len(s.tools)) for s in normalize_steps([Step(tools=[call]), Step(text="end")])] == [
        (None, 1),
        ("end", 0),
    ]


def test_touched_files_come_from_path_arguments_and_shell_commands():
    from benchmarks.replay.trajectory import Trajectory, Turn, UserText

    calls = [
        ToolCall(name="Read", input={"file_path": "/src/app/main.py"}),
        ToolCall(name="Bash", input={"command": "cd /testbed && grep -n foo ./astropy/modeling/core.py setup.cfg | head"}),
        ToolCall(name="Bash", input={"command": "python -c 'print(1.5)' && ls"}),
    ]
    t = Trajectory(name="t", source="s", turns=[Turn(user=[UserText(text="hi")], steps=[Step(tools=calls), Step(text="ok")])])
    assert t.touched_files() == ["/src/app/main.py", "astropy/modeling/core.py", "setup.cfg"]


def test_every_shared_sample_converts(shared_data: Path):
    trajectories = load_samples(shared_data)
    assert [t.name for t in trajectories] == [s.name for s in SAMPLES]
    by_name = {t.name: t for t in trajectories}
    sqlfluff = by_name["sqlfluff-1733"]
    assert sqlfluff.request_count == 158  # 157 bash calls, then the closing text step
    assert len(sqlfluff.typed_user_messages()) == 1
    for t in trajectories:
        calls = [c for turn in t.turns for s in turn.steps for c in s.tools]
        assert calls and all(c.output for c in calls), t.name
        for turn in t.turns:
            assert all(s.tools for s in turn.steps[:-1]) and not turn.steps[-1].tools, t.name
    cc = by_name["cc-wsd-dev"]
    assert {"Read", "Bash", "Grep"} <= cc.tool_names()
    assert sum(len(c.output) for turn in cc.turns for s in turn.steps for c in s.tools) > 400_000
