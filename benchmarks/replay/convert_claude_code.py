"""Claude Code `.jsonl` -> `Trajectory`, through agent-repl's own transcript reader.

`load_session` rebuilds the main chain (sub-agent records stay out). A model step is one API
reply: the entries sharing a `message_id` (Claude Code stores one block per entry). Text and tool
calls are replayed, thinking is not. A tool's recorded output is the `tool_result` the model got;
when that is a `<persisted-output>` preview and the session folder kept the full text in
`tool-results/<tool_use_id>.txt`, the full text is used, so our own pipeline decides what to
persist. User messages the model never answered (local commands such as `/context`) join the
next turn; summaries of Claude Code's own compactions and locally made replies are left out,
since every strategy compacts on its own. Times come from the entries' timestamps: a reply's
latency from the message before it to its last entry, its tools' time from there to the last of
their results, the user's think time from the end of the previous turn to the turn's last message.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from agent_repl.core.model.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from agent_repl.core.tooling.persisted_output import is_persisted_preview
from agent_repl.transcript.loader import load_session
from benchmarks.replay.trajectory import Step, ToolCall, Trajectory, Turn, UserText, make_turn

# Notices the client writes into the conversation, not text the user typed.
_CLIENT_NOTICES = ("[Request interrupted by user",)


def _recorded_results(messages: list, results_dir: Path) -> dict[str, tuple[str, bool]]:
    results: dict[str, tuple[str, bool]] = {}
    for message in messages:
        if not isinstance(message, UserMessage):
            continue
        for block in message.tool_results():
            text = block.text()
            full = results_dir / f"{block.tool_use_id}.txt"
            if is_persisted_preview(text) and full.is_file():
                text = full.read_text(encoding="utf-8", errors="replace")
            results[block.tool_use_id] = (text, block.is_error)
    return results


def _seconds(timestamp: str) -> float | None:
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _gap(later: float | None, earlier: float | None) -> float | None:
    return None if later is None or earlier is None else max(0.0, later - earlier)


def convert_claude_code(path: Path, *, name: str, source: str) -> Trajectory:
    loaded = load_session(path)
    messages = loaded.messages
    results = _recorded_results(messages, path.parent / path.stem / "tool-results")
    turns: list[Turn] = []
    user: list[UserText] = []
    steps: list[Step] = []
    current_id: str | None = None
    # When the last user entry and the last reply entry were written, each reply's last entry,
    # each result, and the tool calls of each step.
    last_user_at: float | None = None
    last_reply_at: float | None = None
    started_at: float | None = None
    think: float | None = None
    reply_end: dict[int, float | None] = {}
    result_at: dict[str, float | None] = {}
    calls_of: dict[int, list[str]] = {}

    def close_turn() -> None:
        for step in steps:
            times = [result_at.get(call_id) for call_id in calls_of.get(id(step), [])]
            if times and None not in times:
                step.tool_seconds = _gap(max(t for t in times if t is not None), reply_end.get(id(step)))
        turns.append(make_turn(user, steps, think))

    for message in messages:
        at = _seconds(message.timestamp)
        if isinstance(message, UserMessage):
            if message.is_compact_summary:
                continue
            if message.is_tool_result():
                for block in message.tool_results():
                    result_at[block.tool_use_id] = at
                last_user_at = at
                continue
            text = message.text()
            if not text.strip():
                continue
            if steps:
                close_turn()
                user, steps, current_id = [], [], None
            meta = message.is_meta or text.lstrip().startswith(_CLIENT_NOTICES)
            user.append(UserText(text=text, is_meta=meta))
            think = _gap(at, last_reply_at) if turns else None
            last_user_at = at
        elif isinstance(message, AssistantMessage):
            if message.is_synthetic or message.model == "<synthetic>" or not user and not turns:
                continue
            if message.message_id != current_id:
                steps.append(Step())
                current_id = message.message_id
                started_at = last_user_at
            step = steps[-1]
            step.model_seconds = _gap(at, started_at)
            reply_end[id(step)] = last_reply_at = at
            for block in message.content:
                if isinstance(block, TextBlock) and block.text.strip():
                    step.text = f"{step.text}\n\n{block.text}" if step.text else block.text
                elif isinstance(block, ToolUseBlock):
                    output, is_error = results.get(block.id, (None, False))
                    call = ToolCall(name=block.name, input=dict(block.input), is_error=is_error)
                    if output is not None:
                        call.output = output or "(no output)"
                    step.tools.append(call)
                    calls_of.setdefault(id(step), []).append(block.id)
    if steps:
        close_turn()
    return Trajectory(name=name, source=source, turns=turns)
