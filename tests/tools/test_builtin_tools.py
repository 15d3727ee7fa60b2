from __future__ import annotations

import json
import subprocess
import sys

from agent_repl.tools import builtin_tools


def test_sorted_with_limits_and_flags() -> None:
    tools = builtin_tools()
    assert [t.name for t in tools] == [
        "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep", "KillShell", "Read", "Snip", "TodoWrite",
        "Write",
    ]
    limits = {t.name: (t.max_result_size_chars, t.is_read_only, t.microcompact_clearable) for t in tools}
    assert limits == {
        "Bash": (30_000, False, True),
        "BashOutput": (30_000, True, True),
        "Edit": (50_000, False, True),
        "ExitPlanMode": (50_000, False, False),
        "Glob": (100_000, True, True),
        "Grep": (20_000, True, True),
        "KillShell": (50_000, True, False),
        "Read": (None, True, True),
        "Snip": (50_000, True, False),
        "TodoWrite": (50_000, True, False),
        "Write": (50_000, False, True),
    }


def test_schemas_are_clean_and_byte_stable() -> None:
    first = json.dumps([t.api_schema() for t in builtin_tools()])
    second = json.dumps([t.api_schema() for t in builtin_tools()])
    assert first == second
    for tool in builtin_tools():
        schema = tool.api_schema()
        assert schema["description"] and not schema["description"].startswith(" ")
        input_schema = schema["input_schema"]
        assert "title" not in input_schema and input_schema["additionalProperties"] is False
        for name, prop in input_schema["properties"].items():
            assert "title" not in prop and "anyOf" not in prop and "default" not in prop, (tool.name, name)
            assert prop["description"], (tool.name, name)


def test_unknown_input_is_a_validation_error() -> None:
    read = next(t for t in builtin_tools() if t.name == "Read")
    out = read.parse_args({"file_path": "/x", "bogus": 1})
    assert getattr(out, "is_error", False)


def test_importing_tools_loads_no_ui_library() -> None:
    code = "import sys, tools; tools.builtin_tools(); print([m for m in ('textual', 'prompt_toolkit') if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
