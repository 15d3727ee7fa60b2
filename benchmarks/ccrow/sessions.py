"""The scripted sessions both agents play: explorations of a real source tree, with facts to keep.

A session is a list of turns; a turn is the user's prompt and the model's steps (each step a text
and tool calls; the last step of a turn has no calls). Every call uses a tool both agents offer
with arguments both accept: `Read` (file_path, offset, limit) and `Bash` (command). Claude Code
2.1.3xx offers no `Grep` or `Glob` up front, so searches and listings go through `Bash`.

The first turns plant what a compaction must not lose: "needle" facts (a codename, a reviewer,
a ticket), a todo list, and the typed prompts themselves. The last turns ask about them.
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Lines per Read: a chunk of a big module (about 10K tokens), the same for both agents.
READ_LINES = 900


@dataclass(frozen=True)
class Call:
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Step:
    text: str | None = None
    calls: tuple[Call, ...] = ()

    def scenario(self) -> dict[str, Any]:
        step: dict[str, Any] = {"tools": [{"name": c.name, "input": c.input} for c in self.calls]}
        if self.text:
            step["text"] = self.text
        return step


@dataclass(frozen=True)
class Turn:
    prompt: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Session:
    name: str
    package: str
    turns: tuple[Turn, ...]
    needles: tuple[str, ...] = ()
    todos: tuple[str, ...] = ()
    paths: tuple[str, ...] = field(default=())

    def scenario(self) -> dict[str, Any]:
        """The emulator's script: every step of every turn, in order."""
        return {"steps": [step.scenario() for turn in self.turns for step in turn.steps]}

    @property
    def prompts(self) -> list[str]:
        return [turn.prompt for turn in self.turns]

    @property
    def step_count(self) -> int:
        return sum(len(turn.steps) for turn in self.turns)


@dataclass(frozen=True)
class Plan:
    """What a session is made of: its package, how many module turns, its planted facts."""

    name: str
    package: str
    modules: int
    needles: tuple[str, str, str]
    todos: tuple[str, str, str]


PLANS = (
    Plan(
        "textual-tour",
        "textual",
        11,
        ("ORCHID-7731", "Marguerite Okafor", "TCK-55821"),
        (
            "benchmark the DataTable render path",
            "check how key bindings are inherited",
            "find where CSS is reparsed",
        ),
    ),
    Plan(
        "pydantic-tour",
        "pydantic",
        11,
        ("TEAL-HERON-204", "Ivo Lindqvist", "TCK-90417"),
        ("trace how validators are ordered", "list the JSON schema hooks", "compare strict and lax modes"),
    ),
    Plan(
        "rich-tour",
        "rich",
        12,
        ("AMBER-LYNX-58", "Sofia Brandt", "TCK-31102"),
        ("measure Console.print overhead", "see how markup is escaped", "check the Live refresh thread"),
    ),
)

QUESTIONS = (
    "How is `{module}` put together? Name its main classes and what each is for.",
    "Which other modules does `{module}` lean on, and why?",
    "Walk me through the public API of `{module}`.",
    "Anything fragile or surprising in `{module}`? Point at the lines.",
    "Where would I add a new option to `{module}`?",
)


def package_source(package: str) -> Path:
    module = importlib.import_module(package)
    return Path(module.__file__ or "").resolve().parent


def source_tree(package: str, root: Path | None = None) -> Path:
    """A copy of the installed package's sources at a fixed path (the same paths, so the same
    prompts, in every run); the tools run over the copy."""
    base = root or Path(tempfile.gettempdir()) / "agent-repl-ccrow" / "src"
    target = base / package
    if not target.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        shutil.copytree(package_source(package), target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def largest_modules(tree: Path, count: int) -> list[Path]:
    files = [p for p in tree.rglob("*.py") if "tests" not in p.parts and p.stat().st_size > 8_000]
    return sorted(files, key=lambda p: (-p.stat().st_size, str(p)))[:count]


def module_turn(prompt: str, path: Path, lines: int) -> Turn:
    """Search a module's definitions, read it in chunks, list its neighbours, answer."""
    defs = f"grep -nE '^\\s*(class|def) ' {path} | head -60"
    steps = [
        Step(
            f"Looking at the definitions in {path.name} first.",
            (Call("Bash", {"command": defs}), Call("Read", {"file_path": str(path), "limit": READ_LINES})),
        ),
    ]
    if lines > READ_LINES:
        rest = Call("Read", {"file_path": str(path), "offset": READ_LINES + 1, "limit": READ_LINES})
        steps.append(
            Step(None, (rest, Call("Bash", {"command": f"wc -l {path} && ls {path.parent} | head -40"})))
        )
    else:
        steps.append(Step(None, (Call("Bash", {"command": f"wc -l {path} && ls {path.parent} | head -40"}),)))
    steps.append(Step(f"`{path.name}` has {lines} lines; the answer is in the definitions and reads above."))
    return Turn(prompt, tuple(steps))


def build_session(plan: Plan, tree: Path) -> Session:
    """The session for `plan` over the source copy `tree`: deterministic for a given tree."""
    codename, reviewer, ticket = plan.needles
    modules = largest_modules(tree, plan.modules)
    todo_list = "; ".join(f"({i + 1}) {item}" for i, item in enumerate(plan.todos))
    turns: list[Turn] = []
    for index, path in enumerate(modules):
        rel = path.relative_to(tree.parent)
        question = QUESTIONS[index % len(QUESTIONS)].format(module=rel)
        if index == 0:
            question = (
                f"I'm touring the {plan.package} sources in {tree}. Keep two facts for later: the release "
                f"codename is {codename} and the reviewer is {reviewer}. My todo list: {todo_list}. "
                f"First question: {question}"
            )
        elif index == 1:
            question = f"File everything under ticket {ticket}. Next: {question}"
        lines = path.read_text(encoding="utf-8", errors="replace").count("\n")
        turns.append(module_turn(question, path, lines))
    turns.append(
        Turn(
            "What release codename, reviewer and ticket did I give you at the start?",
            (Step("From the notes of this session."),),
        )
    )
    turns.append(
        Turn(
            "Which items of my todo list are still open?",
            (Step("All three are still open, as far as this session went."),),
        )
    )
    paths = tuple(str(p) for p in modules)
    return Session(plan.name, plan.package, tuple(turns), plan.needles, plan.todos, paths)
