"""TUI latency: keypress to screen, streamed chunk to render, startup to a usable prompt, memory.

    .venv/bin/python benchmarks/tui_latency.py [--messages 5000] [--keys 60] [--chunks 60]
        [--startup-runs 3] [--memory-lengths 500,2000,5000,10000]

Everything runs headless under Textual's Pilot, against a session resumed from a real JSONL
transcript of `--messages` entries (prompts, answers, tool calls and results). Startup is
measured in fresh processes, from spawn to the first paint with the prompt focused (typing works
from then on; the session opens in the background), next to a bare `python -c "import anthropic"`
in the same run. Memory is the peak RSS of a fresh process that resumes a session of each length.
Goals (issue 6): keystroke <= 50 ms; startup <= 0.4x the SDK import; memory that does not grow
with the history beyond what is mounted. Not part of the test suite: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def build_history(count: int) -> list:
    """About `count` history entries: prompts, markdown answers, and a tool call every fourth exchange."""
    from agent_repl.core.model.messages import (
        AssistantMessage,
        TextBlock,
        ToolResultBlock,
        ToolUseBlock,
        Usage,
        UserMessage,
    )

    history: list = [UserMessage(content="Today's date: 2026-01-01", is_meta=True)]
    n = 0
    while len(history) < count:
        history.append(UserMessage(content=f"Question {n}: what does module_{n}.py do?"))
        if n % 4 == 0:
            tool_id = f"toolu_bench_{n}"
            history.append(
                AssistantMessage(
                    message_id=f"m{n}",
                    content=[
                        ToolUseBlock(id=tool_id, name="Read", input={"file_path": f"/src/module_{n}.py"})
                    ],
                )
            )
            body = "\n".join(f"{i:>6}→def function_{i}(): return {i}" for i in range(1, 40))
            history.append(
                UserMessage(
                    content=[ToolResultBlock(tool_use_id=tool_id, content=body)],
                    tool_use_result="Read 39 lines",
                    source_tool_use_id=tool_id,
                )
            )
        history.append(
            AssistantMessage(
                message_id=f"m{n}b",
                content=[
                    TextBlock(
                        text=f"`module_{n}.py` defines **39** functions.\n\n- each returns its number\n- none has a docstring"
                    )
                ],
                usage=Usage(input_tokens=50, cache_read_input_tokens=20_000, output_tokens=60),
            )
        )
        n += 1
    return history[:count]


async def write_session(home: Path, cwd: Path, count: int) -> str:
    from agent_repl.transcript.paths import SessionPaths
    from agent_repl.transcript.writer import TranscriptWriter

    session_id = f"bench-{count}"
    paths = SessionPaths(home=home, cwd=cwd, session_id=session_id)
    paths.ensure_project_dir()
    writer = TranscriptWriter(paths)
    history = build_history(count)
    for message in history:
        message.session_id = session_id
    await writer.append_history(history)
    await writer.close()
    return session_id


def make_app(home: Path, cwd: Path, session_id: str):
    from agent_repl.bootstrap import find_resume_source
    from agent_repl.core.config.settings import Settings
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.launcher import Launcher

    settings = Settings(home=home, api_key="unused", base_url="http://127.0.0.1:9")
    resume = find_resume_source(settings, cwd, session_id, latest=False)
    return AgentApp(Launcher.for_settings(settings, cwd, resume), warm_client=False)


def history_drawn(app, seen: list[str]) -> bool:
    """The session is open and its history is on the screen: the app said so (after drawing it), the
    newest item's widget is mounted and laid out, and the conversation is scrolled to it."""
    if "SessionReady" not in seen or not app.conversation.view.items:
        return False
    conversation = app.conversation
    newest = conversation.widgets.get(conversation.view.items[-1].key)
    return (
        newest is not None and newest.is_mounted and newest.size.height > 0 and conversation.max_scroll_y > 0
    )


async def until(pilot, condition, limit_s: float = 120.0, step: float = 0.01) -> None:
    deadline = time.perf_counter() + limit_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("condition not met")
        await (asyncio.sleep(0.001) if step == 0 else pilot.pause(step))


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms"


async def measure_interaction(messages: int, keys: int, chunks: int) -> dict:
    from textual import events

    from agent_repl.core.model.events import TextDelta
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.widgets.streaming import StreamingAnswerView

    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "project"
        cwd.mkdir()
        session_id = await write_session(home, cwd, messages)
        app = make_app(home, cwd, session_id)
        posted: list[str] = []
        async with app.run_test(
            size=(120, 40), message_hook=lambda m: posted.append(type(m).__name__)
        ) as pilot:
            started = time.perf_counter()
            await until(pilot, lambda: history_drawn(app, posted))
            resumed = time.perf_counter() - started
            mounted = len(app.conversation.children)
            items = len(app.conversation.view.items)
            await pilot.pause(0.5)

            # A screen update is the compositor handing the app an update to display (which a
            # terminal driver writes out; the headless one drops it): note when that happens.
            writes: list[float] = []
            original_display = app._display

            def recording_display(screen, renderable) -> None:
                if renderable is not None:
                    writes.append(time.perf_counter())
                original_display(screen, renderable)

            app._display = recording_display  # type: ignore[method-assign]
            key_times = []
            for n in range(keys):
                char = "abcdefghij"[n % 10]
                before = app.prompt.text
                seen = len(writes)
                t0 = time.perf_counter()
                app.prompt.post_message(events.Key(char, char))
                await until(pilot, lambda b=before, s=seen: app.prompt.text != b and len(writes) > s, step=0)
                key_times.append(writes[-1] - t0)
                await pilot.pause(0.05)

            conversation = app.conversation
            chunk_times = []
            for n in range(chunks):
                text = f"chunk {n} of a streamed **markdown** answer, with `code` and words. "
                if n % 10 == 9:
                    text += "\n\n"
                seen = len(writes)
                t0 = time.perf_counter()
                await app.on_agent_app_agent_event_posted(AgentApp.AgentEventPosted(TextDelta(text=text)))
                view = conversation.query(StreamingAnswerView).last()
                head = text.split(",")[0]
                await until(pilot, lambda v=view, h=head, s=seen: h in v.source and len(writes) > s, step=0)
                chunk_times.append(writes[-1] - t0)
                await pilot.pause(0.05)
            return {
                "resume_s": resumed,
                "items": items,
                "mounted": mounted,
                "keys": key_times,
                "chunks": chunk_times,
            }


def measure_startup(runs: int) -> tuple[list[float], list[float], list[float]]:
    """(app first paint, app session ready, bare SDK import) wall times in fresh processes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    paint, ready, sdk = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        env.update(
            ANTHROPIC_API_KEY="unused", ANTHROPIC_BASE_URL="http://127.0.0.1:9", AGENT_REPL_HOME=f"{tmp}/home"
        )
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import anthropic"], check=True, env=env)
            sdk.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, __file__, "--child-startup"],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=tmp,
            )
            assert child.stdout is not None
            for line in child.stdout:
                if line.startswith("PAINTED"):
                    paint.append(time.perf_counter() - t0)
                elif line.startswith("READY"):
                    ready.append(time.perf_counter() - t0)
            child.wait(timeout=120)
    return paint, ready, sdk


def child_startup() -> None:
    """The CLI's path to the app, headless; prints when the prompt is painted and when the session is ready."""
    from agent_repl.cli import build_parser, prepare_launch
    from agent_repl.ui.app import AgentApp
    from agent_repl.ui.launcher import Launcher

    args = build_parser().parse_args([])
    cwd = Path.cwd()

    class StartupApp(AgentApp):
        def on_mount(self) -> None:
            super().on_mount()
            self.call_after_refresh(lambda: print("PAINTED", flush=True))

        def on_agent_app_session_ready(self, message: AgentApp.SessionReady) -> None:
            print("READY", flush=True)
            self.exit(0)

    StartupApp(Launcher(cwd, lambda stack: prepare_launch(args, cwd, stack)), warm_client=False).run(
        headless=True
    )


def _high_water_kb() -> int:
    with open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def child_memory(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "project"
        cwd.mkdir()
        session_id = await write_session(home, cwd, count)
        app = make_app(home, cwd, session_id)
        posted: list[str] = []
        async with app.run_test(
            size=(120, 40), message_hook=lambda m: posted.append(type(m).__name__)
        ) as pilot:
            await until(pilot, lambda: history_drawn(app, posted))
            await pilot.pause()
            widgets = len(list(app.screen.walk_children()))
            # This program's own high-water mark: ru_maxrss would also count the parent it was
            # forked from, which is larger than the app once it has run the latency parts.
            rss_kb = _high_water_kb()
            print(
                json.dumps(
                    {
                        "messages": count,
                        "widgets": widgets,
                        "mounted": len(app.conversation.children),
                        "peak_rss_mb": rss_kb / 1024,
                    }
                ),
                flush=True,
            )


def report_startup(paint: list[float], ready: list[float], sdk: list[float]) -> None:
    paint_s, ready_s, sdk_s = statistics.median(paint), statistics.median(ready), statistics.median(sdk)
    print(
        f"startup to a usable prompt: {paint_s:.2f} s (median of {len(paint)}); session open: {ready_s:.2f} s; "
        f"bare `import anthropic`: {sdk_s:.2f} s -> {paint_s / sdk_s:.2f}x   (goal <= 0.4x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--keys", type=int, default=60)
    parser.add_argument("--chunks", type=int, default=60)
    parser.add_argument("--startup-runs", type=int, default=3)
    parser.add_argument("--memory-lengths", default="500,2000,5000,10000")
    parser.add_argument("--child-startup", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-memory", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_startup:
        child_startup()
        return
    if args.child_memory:
        asyncio.run(child_memory(args.child_memory))
        return

    result = asyncio.run(measure_interaction(args.messages, args.keys, args.chunks))
    print(
        f"resumed {args.messages:,} messages -> {result['items']:,} items, {result['mounted']} mounted, "
        f"ready in {result['resume_s']:.2f} s"
    )
    print(
        f"keypress -> screen update ({len(result['keys'])} keys): {summary(result['keys'])}   (goal <= 50 ms)"
    )
    print(f"streamed chunk -> render ({len(result['chunks'])} chunks): {summary(result['chunks'])}")

    paint, ready, sdk = measure_startup(args.startup_runs) if args.startup_runs else ([], [], [])
    if paint and ready and sdk:
        report_startup(paint, ready, sdk)
    for length in [int(n) for n in args.memory_lengths.split(",") if n.strip()]:
        done = subprocess.run(
            [sys.executable, __file__, "--child-memory", str(length)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        line = next((x for x in done.stdout.splitlines() if x.startswith("{")), None)
        if line is None:
            print(f"memory at {length}: failed: {done.stderr[-500:]}")
            continue
        data = json.loads(line)
        print(
            f"memory at {data['messages']:>6,} messages: peak RSS {data['peak_rss_mb']:.0f} MB, "
            f"{data['mounted']} conversation widgets mounted ({data['widgets']} widgets on screen)"
        )


if __name__ == "__main__":
    main()
