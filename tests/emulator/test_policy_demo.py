"""The demo policy: plain requests become tool calls; results become short truthful answers."""

from __future__ import annotations

from typing import Any

import pytest

from agent_repl.emulator.models import default_model_table
from agent_repl.emulator.policies import PolicyRequest, Reply
from agent_repl.offline.demo import DemoPolicy
from agent_repl.offline.demo_intents import parse_intent
from agent_repl.offline.summary import AgentSummarizer

TOOLS = [
    {"name": n, "description": n, "input_schema": {"type": "object"}}
    for n in ("Read", "Bash", "Grep", "Glob")
]
SYSTEM = "You are agent-repl.\nWorking directory: /home/dev/project\nPlatform: linux"
SPEC = default_model_table()["claude-sonnet-5-5"]


def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]] = TOOLS) -> Reply:
    body = {"model": SPEC.id, "max_tokens": 1000, "system": SYSTEM, "tools": tools, "messages": messages}
    # The offline mode serves the demo with the agent's own summarizer.
    return DemoPolicy().reply(PolicyRequest(body, SPEC, 0, "key", AgentSummarizer()))


def call(text: str, tools: list[dict[str, Any]] = TOOLS) -> dict[str, Any]:
    reply = ask([{"role": "user", "content": text}], tools)
    assert reply.stop_reason == "tool_use"
    uses = [b for b in reply.content if b["type"] == "tool_use"]
    assert len(uses) == 1
    return {"name": uses[0]["name"], "input": uses[0]["input"]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("read README.md", {"name": "Read", "input": {"file_path": "/home/dev/project/README.md"}}),
        (
            "Please show me src/app.py",
            {"name": "Read", "input": {"file_path": "/home/dev/project/src/app.py"}},
        ),
        ("read /etc/hosts [id:a1b2c3]", {"name": "Read", "input": {"file_path": "/etc/hosts"}}),
        ("find *.py", {"name": "Glob", "input": {"pattern": "**/*.py"}}),
        (
            "find python files in src",
            {"name": "Glob", "input": {"pattern": "**/*.py", "path": "/home/dev/project/src"}},
        ),
        (
            "grep TODO in src",
            {
                "name": "Grep",
                "input": {"pattern": "TODO", "output_mode": "content", "path": "/home/dev/project/src"},
            },
        ),
        (
            "search for 'def main'",
            {"name": "Grep", "input": {"pattern": "def main", "output_mode": "content"}},
        ),
        ("run ls -la", {"name": "Bash", "input": {"command": "ls -la"}}),
        ("$ git status", {"name": "Bash", "input": {"command": "git status"}}),
        ("what's in this repo?", {"name": "Bash", "input": {"command": "ls -la"}}),
    ],
)
def test_plain_requests_become_tool_calls(text: str, expected: dict[str, Any]) -> None:
    assert call(text) == expected


def test_overview_falls_back_to_glob_without_bash() -> None:
    tools = [t for t in TOOLS if t["name"] != "Bash"]
    assert call("what's in this repo?", tools) == {"name": "Glob", "input": {"pattern": "*"}}


def test_it_only_calls_tools_the_request_offers() -> None:
    reply = ask([{"role": "user", "content": "run ls"}], [t for t in TOOLS if t["name"] != "Bash"])
    assert reply.stop_reason == "end_turn"
    assert [b["type"] for b in reply.content] == ["text"]
    assert "doesn't offer" in reply.content[0]["text"]


def test_relative_paths_stay_relative_without_a_working_directory() -> None:
    intent = parse_intent("read notes.txt", None)
    assert intent is not None and intent.input == {"file_path": "notes.txt"}


def test_unknown_requests_get_an_honest_capability_list() -> None:
    reply = ask([{"role": "user", "content": "Refactor the payment module for me"}])
    text = reply.content[0]["text"]
    assert reply.stop_reason == "end_turn"
    assert "offline demo model" in text
    assert "read README.md" in text and "grep TODO in src" in text


def test_greeting_says_what_it_is() -> None:
    text = ask([{"role": "user", "content": "hello"}]).content[0]["text"]
    assert "offline demo model" in text and "not Claude" in text


def _after_tool(name: str, tool_input: dict[str, Any], output: str, is_error: bool = False) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "do it"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": output, "is_error": is_error}
            ],
        },
    ]
    reply = ask(messages)
    assert reply.stop_reason == "end_turn"
    return str(reply.content[0]["text"])


def test_answers_from_tool_results_with_counts_and_excerpts() -> None:
    read = _after_tool(
        "Read", {"file_path": "/p/README.md"}, "\n".join(f"{i}\tline {i}" for i in range(1, 31))
    )
    assert "`/p/README.md` has 30 lines" in read and "1\tline 1" in read and "20 more lines" in read
    glob = _after_tool("Glob", {"pattern": "**/*.py"}, "/p/a.py\n/p/b.py\n/p/c.py")
    assert "matches 3 files" in glob and "/p/b.py" in glob
    grep = _after_tool("Grep", {"pattern": "TODO"}, "a.py:3: # TODO one\nb.py:9: # TODO two")
    assert "2 matching lines" in grep and "TODO two" in grep
    listing = _after_tool(
        "Bash",
        {"command": "ls -la"},
        "total 8\ndrwxr-xr-x 2 u u 4096 . \n-rw-r--r-- 1 u u 10 README.md\n-rw-r--r-- 1 u u 10 setup.py",
    )
    assert "2 entries" in listing and "README.md" in listing
    nothing = _after_tool("Glob", {"pattern": "*.zig"}, "No files found")
    assert "No files match" in nothing
    error = _after_tool("Bash", {"command": "false"}, "Exit code 1", is_error=True)
    assert "reported an error" in error and "Exit code 1" in error
    assert "Offline demo model" in glob


def test_summary_requests_get_the_nine_sections() -> None:
    reply = ask(
        [
            {"role": "user", "content": "read README.md"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "<summary-request>go"},
        ]
    )
    text = reply.content[0]["text"]
    assert text.startswith("<analysis>") and "<summary>" in text
    assert "read README.md" in text


def test_the_clients_id_tag_is_neither_quoted_nor_counted() -> None:
    tagged = "a\nb\nc\n[id:doj812]"
    read = _after_tool("Read", {"file_path": "/p/f.txt"}, tagged)
    assert "has 3 lines" in read and "[id:" not in read
    listing = _after_tool("Bash", {"command": "ls"}, "README.md\nsetup.py\n[id:abc123]")
    assert "[id:" not in listing


FILE_TOOLS = TOOLS + [
    {"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Edit", "Write")
]


def test_the_demo_reads_then_edits_then_points_at_rewind() -> None:
    prompt = {"role": "user", "content": "edit README.md: replace `Demo` with `Sample` [id:a1b2c3]"}
    first = ask([prompt], FILE_TOOLS)
    [read] = [b for b in first.content if b["type"] == "tool_use"]
    assert read["name"] == "Read" and read["input"] == {"file_path": "/home/dev/project/README.md"}
    history = [
        prompt,
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": read["id"], "content": "     1→# Demo"}],
        },
    ]
    second = ask(history, FILE_TOOLS)
    [edit] = [b for b in second.content if b["type"] == "tool_use"]
    assert edit["name"] == "Edit"
    assert edit["input"] == {
        "file_path": "/home/dev/project/README.md",
        "old_string": "Demo",
        "new_string": "Sample",
    }
    history += [
        {"role": "assistant", "content": second.content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": edit["id"], "content": "updated"}],
        },
    ]
    third = ask(history, FILE_TOOLS)
    assert third.stop_reason == "end_turn" and "/rewind" in third.content[0]["text"]


def test_the_demo_writes_a_new_file_directly() -> None:
    reply = ask([{"role": "user", "content": "write notes.txt: buy milk"}], FILE_TOOLS)
    [write] = [b for b in reply.content if b["type"] == "tool_use"]
    assert write["name"] == "Write"
    assert write["input"] == {"file_path": "/home/dev/project/notes.txt", "content": "buy milk\n"}


@pytest.mark.parametrize(
    "result_text",
    [
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        "Interrupted by user",
    ],
)
def test_a_prompt_after_a_denied_or_interrupted_call_is_answered(result_text: str) -> None:
    history = [
        {"role": "user", "content": "run sleep 100"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 100"}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": result_text, "is_error": True},
                {"type": "text", "text": "[Request interrupted by user for tool use]"},
                {"type": "text", "text": "run echo hi"},
            ],
        },
    ]
    reply = ask(history)
    uses = [b for b in reply.content if b["type"] == "tool_use"]
    assert [(u["name"], u["input"]) for u in uses] == [("Bash", {"command": "echo hi"})]
    assert result_text not in "".join(b.get("text", "") for b in reply.content)


def test_an_interrupt_mark_alone_still_reports_the_result() -> None:
    history = [
        {"role": "user", "content": "run sleep 100"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 100"}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "Interrupted by user",
                    "is_error": True,
                },
                {"type": "text", "text": "[Request interrupted by user for tool use]"},
            ],
        },
    ]
    reply = ask(history)
    assert reply.stop_reason != "tool_use"


def test_a_turn_compacted_midway_still_knows_its_request() -> None:
    from agent_repl.contract import CONTINUATION_PREFIX

    summary = (
        f"{CONTINUATION_PREFIX} that ran out of context.\n\n1. Primary Request and Intent:\n   run echo hi\n\n"
        "6. All User Messages:\n   - run echo hi\n\n7. Pending Tasks:\n   none"
    )
    reply = ask([{"role": "user", "content": summary}])
    text = "".join(b.get("text", "") for b in reply.content)
    assert "don't understand" not in text
    assert "`run echo hi`" in text
    followed = ask(
        [
            {"role": "user", "content": summary},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "run echo hi"},
        ]
    )
    uses = [b for b in followed.content if b["type"] == "tool_use"]
    assert [(u["name"], u["input"]) for u in uses] == [("Bash", {"command": "echo hi"})]
