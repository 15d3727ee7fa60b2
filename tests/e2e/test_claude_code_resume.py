"""Resuming a session the real Claude Code CLI wrote sends the messages Claude Code itself sends.

The fixture (tests/transcript/fixtures/cc_2.1.332_compact/, see PROVENANCE.md there) holds an
automatic compaction that carried the last tool call and its result over, and
`control_request.json` is the request Claude Code 2.1.332 made when it resumed the same file
with the prompt "next". agent-repl resumes the file with the same prompt against the emulator;
the two message lists must be equal after these differences, and only these, are taken out:

- Claude Code's renderings of its own context: its mid-conversation `role: "system"` messages and
  the user text blocks that were a `<system-reminder>` (both replaced by a placeholder in the
  control). They describe Claude Code's harness (its tools, agents, skills, environment, date and
  mode) and come from its `attachment` records, which agent-repl does not send: it sends its own
  system prompt instead.
- The queued task notification: Claude Code sends its own wrapping of it (a placeholder in the
  control); agent-repl sends the record's text. The message must sit at the same place with the
  same role, and ours must carry the notification.
- Thinking blocks: agent-repl leaves a foreign transcript's thinking out of the view, because
  each block is bound to the exact prefix Claude Code sent before it, which agent-repl's request
  does not repeat (the system prompt differs).
- The ` [id:xxxxxx]` tag agent-repl appends to user messages, and `cache_control` markers.

Everything else is compared exactly: roles, order, text, tool_use ids, names and inputs,
tool_result ids, contents and error flags.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agent_repl.emulator.policies.base import strip_id_tag

from .conftest import agent_env, read_records, run_agent, transcript_files

FIXTURE = Path(__file__).resolve().parents[1] / "transcript" / "fixtures" / "cc_2.1.332_compact"
SESSION_ID = "ac7462df-3819-4b68-9505-686fb6944771"
PLACEHOLDER = "[Claude Code text replaced]"


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _result_text(content: Any) -> str:
    return "".join(b["text"] for b in _blocks(content) if b.get("type") == "text")


def _comparable(block: dict[str, Any]) -> dict[str, Any] | None:
    kind = block["type"]
    if kind == "text":
        text = strip_id_tag(block["text"])
        return None if text == PLACEHOLDER or text.lstrip().startswith("<system-reminder>") else {"text": text}
    if kind == "tool_use":
        return {"tool_use": block["id"], "name": block["name"], "input": block["input"]}
    if kind == "tool_result":
        text = strip_id_tag(_result_text(block.get("content", "")))
        return {"tool_result": block["tool_use_id"], "content": text, "is_error": bool(block.get("is_error"))}
    if kind in ("thinking", "redacted_thinking"):
        return None
    raise AssertionError(f"unexpected block {kind}")


def comparable_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        blocks = [b for b in (_comparable(block) for block in _blocks(message["content"])) if b is not None]
        if out and out[-1]["role"] == message["role"]:
            out[-1]["blocks"].extend(blocks)  # the API merges consecutive turns of one role
        else:
            out.append({"role": message["role"], "blocks": blocks})
    return out


def test_resuming_a_claude_code_2_1_332_session_sends_what_claude_code_sends(emulator, project, home, tmp_path):
    source = tmp_path / "cc"
    shutil.copytree(FIXTURE, source)
    control = json.loads((source / "control_request.json").read_text())
    emulated = emulator([{"text": "ok"}])
    done = run_agent(
        ["--resume", str(source / f"{SESSION_ID}.jsonl"), "-p", "next", "--model", control["model"],
         "--output-format", "json"],
        cwd=project,
        env=agent_env(emulated, home),
    )
    assert done.returncode == 0, done.stderr
    [sent] = emulated.bodies()
    ours, theirs = comparable_messages(sent["messages"]), comparable_messages(control["messages"])

    # The task notification: Claude Code's own wrapping in the control, the record's text in ours.
    [at] = [i for i, m in enumerate(theirs) if m["role"] == "user" and not m["blocks"]]
    assert ours[at]["role"] == "user"
    [note] = ours[at]["blocks"]
    assert note["text"].startswith("<task-notification>") and "<task-id>b81mqumhx</task-id>" in note["text"]
    ours[at]["blocks"] = []

    # The fork's copy of tool-results/ holds the outputs its <persisted-output> paths name.
    [forked] = transcript_files(home)
    original_folder = f"/tmp/cc-fixture/home/.claude/projects/-tmp-cc-fixture-proj/{SESSION_ID}/"
    for message in ours:
        for block in message["blocks"]:
            if "tool_result" in block and "<persisted-output>" in block["content"]:
                assert str(forked.with_suffix("")) + "/tool-results/" in block["content"]
                block["content"] = block["content"].replace(str(forked.with_suffix("")) + "/", original_folder)

    # The copies are the originals, and the original folder is untouched.
    for name in ("b48kvp0gm.txt", "b2iskks8t.txt"):
        copy = forked.with_suffix("") / "tool-results" / name
        assert copy.read_bytes() == (FIXTURE / SESSION_ID / "tool-results" / name).read_bytes()
    assert sorted(p.name for p in (source / SESSION_ID / "tool-results").iterdir()) == ["b2iskks8t.txt", "b48kvp0gm.txt"]

    assert ours == theirs
    # 15 messages, the carried-over tool call and its result right after the summary.
    assert len(ours) == 15
    assert ours[1]["blocks"][0]["tool_use"] == ours[2]["blocks"][0]["tool_result"] == "toolu_017rQacSVzKpS1hNIHDjOR1W"


def test_a_fork_of_our_own_session_points_its_previews_at_its_own_copies(emulator, project, home, tmp_path):
    emulated = emulator([
        {"tools": [{"name": "Bash", "input": {"command": "seq 1 40000"}}]},
        {"text": "Printed."},
        {"text": "Still here."},
    ])
    env = agent_env(emulated, home)
    first = run_agent(["-p", "count", "--output-format", "json", "--allowed-tools", "Bash"], cwd=project, env=env)
    assert first.returncode == 0, first.stderr
    [original] = transcript_files(home)
    [saved] = (original.with_suffix("") / "tool-results").iterdir()
    # The file moves out of the session store: resuming it by path forks it.
    moved = tmp_path / "elsewhere" / original.name
    shutil.copytree(original.with_suffix(""), moved.with_suffix(""))
    moved.write_bytes(original.read_bytes())
    done = run_agent(["--resume", str(moved), "-p", "go on", "--output-format", "json"], cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    fork = next(p for p in transcript_files(home) if p != original)
    copy = fork.with_suffix("") / "tool-results" / saved.name
    assert copy.read_bytes() == saved.read_bytes()
    [preview] = [
        b["content"] if isinstance(b["content"], str) else b["content"][0]["text"]
        for m in emulated.bodies()[-1]["messages"] if isinstance(m["content"], list)
        for b in m["content"] if b["type"] == "tool_result"
    ]
    assert "<persisted-output>\nOutput too large" in preview and str(copy) in preview
    assert str(original.with_suffix("")) not in preview and str(moved.with_suffix("")) not in preview
    # The fork's transcript sends the same bytes when it is resumed; the structured copy of the
    # result (`toolUseResult`, never sent) is kept as it was written.
    [record] = [r for r in read_records(fork) if r["type"] == "user" and "toolUseResult" in r]
    assert record["message"]["content"][0]["content"] == strip_id_tag(preview)
    assert str(original.with_suffix("")) in record["toolUseResult"]["persistedOutputPath"]
