"""A recorded agent session in the shape the replay needs: turns of user messages and model steps.

Every converter produces a `Trajectory`; the harness turns it into the emulator's script
scenario (one step per model reply) and a table of recorded tool output. Our query loop ends a
turn at the first reply without tool calls, so `Turn.steps` keeps that invariant: every step but
the last has tool calls, and the last has none (`normalize_steps`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

# Text the client injects rather than the user types (the emulator's summary policy uses the
# same list to decide what to quote as a user message).
CLIENT_INJECTED_PREFIXES = (
    "<summary-request>",
    "<session-memory-request>",
    "<system-reminder>",
    "<command-",
    "<local-command-",
)
END_OF_TURN_TEXT = "(End of the recorded turn.)"
NO_OUTPUT_RECORDED = "(No output was recorded for this call.)"
PATH_KEYS = ("file_path", "path", "notebook_path")
_EXTENSIONS = (
    "py|pyi|pyx|md|rst|txt|cfg|toml|ini|json|yaml|yml|sql|js|ts|tsx|jsx|html|css|c|h|cc|cpp|rs|go|sh|lock|tcss"
)
# A file path named in a shell command: an optional directory part and a known extension.
_PATH_IN_COMMAND = re.compile(rf"(?<![\w/.-])((?:\.{{0,2}}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXTENSIONS}))(?![\w/-])")


class ToolCall(BaseModel):
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    output: str = NO_OUTPUT_RECORDED
    is_error: bool = False


class Step(BaseModel):
    """One model reply: optional text, then tool calls (run in order, outputs recorded)."""

    text: str | None = None
    tools: list[ToolCall] = Field(default_factory=list)
    # Seconds from the request to the reply, and from the reply to all of its tools' results
    # (None: not recorded, drawn by `timeline.with_times`).
    model_seconds: float | None = None
    tool_seconds: float | None = None


class UserText(BaseModel):
    text: str
    # Injected by the client (a skill body, a reminder): sent to the model, not typed by the user.
    is_meta: bool = False


class Turn(BaseModel):
    """What the user sent (one or more messages before the model answered) and the model's replies."""

    user: list[UserText]
    steps: list[Step]
    # Seconds from the end of the previous turn to the user's message (None: not recorded).
    think_seconds: float | None = None


class Trajectory(BaseModel):
    name: str
    source: str  # where it came from (repository @ commit, path, or how it was recorded)
    turns: list[Turn]
    # Facts planted in the user's early messages and asked about in the last turn (`needles.py`).
    needles: list[str] = Field(default_factory=list)

    def scenario(self) -> dict[str, Any]:
        """The emulator's script: every step of every turn, in order."""
        steps = []
        for turn in self.turns:
            for step in turn.steps:
                entry: dict[str, Any] = {}
                if step.text:
                    entry["text"] = step.text
                if step.tools:
                    entry["tools"] = [{"name": t.name, "input": t.input} for t in step.tools]
                steps.append(entry)
        return {"steps": steps}

    @property
    def request_count(self) -> int:
        return sum(len(turn.steps) for turn in self.turns)

    def typed_user_messages(self) -> list[str]:
        """The messages the user typed: what user-message retention is measured on."""
        return [
            u.text
            for turn in self.turns
            for u in turn.user
            if not u.is_meta and u.text.strip() and not u.text.lstrip().startswith(CLIENT_INJECTED_PREFIXES)
        ]

    def tool_names(self) -> set[str]:
        return {t.name for turn in self.turns for step in turn.steps for t in step.tools}

    def touched_files(self) -> list[str]:
        """Paths the tool calls named (path arguments, and file paths in shell commands), first use order."""
        seen: dict[str, None] = {}
        for turn in self.turns:
            for step in turn.steps:
                for call in step.tools:
                    for path in paths_in_call(call):
                        seen.setdefault(path, None)
        return list(seen)

    def steps_before(self, count: int) -> list[Step]:
        """The first `count` steps, across turns."""
        return [step for turn in self.turns for step in turn.steps][:count]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Trajectory:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def clean_path(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def paths_in_call(call: ToolCall) -> list[str]:
    found = [clean_path(str(call.input[k])) for k in PATH_KEYS if isinstance(call.input.get(k), str) and call.input[k]]
    command = call.input.get("command")
    if isinstance(command, str):
        found += [clean_path(m) for m in _PATH_IN_COMMAND.findall(command)]
    return [p for p in found if p not in (".", "/")]


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None and b is None else (a or 0.0) + (b or 0.0)


def normalize_steps(steps: list[Step]) -> list[Step]:
    """Fold text-only replies in the middle of a turn into the next step, and end the turn with a
    text-only step (the loop ends a turn at the first reply without tool calls). A folded reply's
    time goes to the step it joins."""
    folded: list[Step] = []
    pending: list[str] = []
    waited: float | None = None
    for step in steps:
        if step.text:
            pending.append(step.text)
        if step.tools:
            model = _plus(waited, step.model_seconds)
            text = "\n\n".join(pending) or None
            folded.append(Step(text=text, tools=step.tools, model_seconds=model, tool_seconds=step.tool_seconds))
            pending, waited = [], None
        else:
            waited = _plus(waited, step.model_seconds)
    if pending:
        folded.append(Step(text="\n\n".join(pending), model_seconds=waited))
    elif not folded or folded[-1].tools:
        folded.append(Step(text=END_OF_TURN_TEXT))
    return folded


def make_turn(user: list[UserText], steps: list[Step], think_seconds: float | None = None) -> Turn:
    return Turn(user=user, steps=normalize_steps(steps), think_seconds=think_seconds)


def dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
