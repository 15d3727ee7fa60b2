"""Long trajectories of our own: scripted explorations of installed packages' real sources.

Each exploration asks one question per turn about one of the package's larger modules and answers
it the way an agent does: find the module's classes and functions (Grep), list its neighbours
(Glob), read it in chunks (Read), count and list its imports (Bash), read one more chunk, then a
short answer. Our real tools run once, against the installed sources, and their output and
time (to 0.1 s) are recorded; replays never run them again. A recording names the package's
version and is reused while that version is installed (`--fresh` records again). The two long
explorations (30 turns and more) are what fills a 1M window past 400K tokens.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_repl.core.tooling.tool import Tool, ToolContext
from agent_repl.tools import builtin_tools
from benchmarks.replay.trajectory import Step, ToolCall, Trajectory, UserText, make_turn

READ_CHUNK_LINES = 700


@dataclass(frozen=True)
class Exploration:
    name: str
    package: str
    turns: int
    questions: tuple[str, ...]


QUESTIONS = (
    "How is `{module}` put together? List its main classes and what each one is for.",
    "Which other modules of {package} does `{module}` depend on, and why?",
    "Walk me through the public API of `{module}`; I want to use it from my own code.",
    "Is there anything in `{module}` that looks fragile or surprising? Point at the lines.",
    "Where would I add a new option to `{module}`? Show me the functions I would touch.",
)

EXPLORATIONS = (
    Exploration("rich-explore", "rich", 18, QUESTIONS),
    Exploration("textual-explore", "textual", 20, QUESTIONS),
    Exploration("pydantic-explore", "pydantic", 14, QUESTIONS),
    Exploration("prompt-toolkit-long", "prompt_toolkit", 44, QUESTIONS),
    Exploration("anthropic-long", "anthropic", 30, QUESTIONS),
)


def package_root(package: str) -> Path:
    module = importlib.import_module(package)
    return Path(module.__file__ or "").resolve().parent


def largest_modules(root: Path, count: int) -> list[Path]:
    """The package's largest Python modules (ties by name), skipping private test helpers."""
    files = [p for p in root.rglob("*.py") if "tests" not in p.parts and p.stat().st_size > 8_000]
    return sorted(files, key=lambda p: (-p.stat().st_size, str(p)))[:count]


async def _record(
    tools: dict[str, Tool], name: str, arguments: dict[str, Any], cwd: Path, call_id: str
) -> tuple[ToolCall, float]:
    tool = tools[name]
    parsed = tool.parse_args(arguments)
    assert not hasattr(parsed, "is_error"), f"bad scripted input for {name}: {arguments}"
    ctx = ToolContext(cwd=cwd, tool_results_dir=cwd / ".tool-results", tool_use_id=call_id)
    started = time.perf_counter()
    output = await tool.run(parsed, ctx)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    text = output.content if isinstance(output.content, str) else "\n".join(
        getattr(b, "text", "") for b in output.content
    )
    return ToolCall(name=name, input=arguments, output=text, is_error=output.is_error), seconds


def _names(grep_output: str) -> list[str]:
    return re.findall(r"(?:class|def) (\w+)", grep_output)[:6]


async def record(exploration: Exploration, scratch: Path) -> Trajectory:
    root = package_root(exploration.package)
    version = importlib.metadata.version(exploration.package)
    tools = {tool.name: tool for tool in builtin_tools()}
    scratch.mkdir(parents=True, exist_ok=True)
    modules = largest_modules(root, exploration.turns)
    turns = []
    counter = 0

    async def step(text: str | None, *calls: tuple[str, dict[str, Any]]) -> Step:
        nonlocal counter
        recorded, seconds = [], 0.0
        for name, arguments in calls:
            counter += 1
            call, took = await _record(tools, name, arguments, scratch, f"rec-{exploration.name}-{counter}")
            recorded.append(call)
            seconds += took
        return Step(text=text, tools=recorded, tool_seconds=round(seconds, 1))

    for index, path in enumerate(modules):
        module = str(path.relative_to(root.parent))
        question = exploration.questions[index % len(exploration.questions)].format(
            module=module, package=exploration.package
        )
        prompt = f"({exploration.package} {index + 1}/{len(modules)}) {question}"
        lines = path.read_text(encoding="utf-8", errors="replace").count("\n")
        grep = ("Grep", {"pattern": r"^\s*(class|def) \w+", "path": str(path), "output_mode": "content", "-n": True})
        steps = [
            await step(f"Let me find the definitions in {path.name} first.", grep, ("Glob", {"pattern": "*.py", "path": str(path.parent)})),
            await step(None, ("Read", {"file_path": str(path), "limit": READ_CHUNK_LINES})),
            await step(
                "Now its imports and size.",
                ("Bash", {"command": f"wc -l {path} && grep -nE '^(from|import) ' {path} | head -40"}),
            ),
        ]
        if lines > READ_CHUNK_LINES:
            steps.append(
                await step(None, ("Read", {"file_path": str(path), "offset": READ_CHUNK_LINES + 1, "limit": READ_CHUNK_LINES}))
            )
        names = ", ".join(_names(steps[0].tools[0].output)) or "no top-level definitions"
        steps.append(Step(text=f"`{module}` has {lines} lines. Its main definitions are {names}; details above."))
        turns.append(make_turn([UserText(text=prompt)], steps))
    source = f"recorded from {exploration.package} {version} ({root}) with agent-repl's Read, Grep, Glob and Bash"
    return Trajectory(name=exploration.name, source=source, turns=turns)


def load_or_record(exploration: Exploration, directory: Path, *, fresh: bool = False) -> Trajectory:
    version = importlib.metadata.version(exploration.package)
    path = directory / f"{exploration.name}-{version}.json"
    if path.is_file() and not fresh:
        return Trajectory.load(path)
    trajectory = asyncio.run(record(exploration, directory / "scratch"))
    trajectory.save(path)
    return trajectory
