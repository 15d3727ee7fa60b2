"""Emulator throughput: requests/s and SSE events/s for ~100K-token conversations with caching on.

    .venv/bin/python benchmarks/emulator_throughput.py [--requests 300] [--seconds 60]
        [--conversations 4] [--tokens 100000] [--in-process] [--profile]

By default the emulator runs as its own process (`python -m agent_repl.emulator`, as the CLI
starts it) so client and server do not share a GIL; `--in-process` runs it in a thread of this
process instead, and `--profile` (implies `--in-process`) prints where the server's time goes.
Each conversation is an agent loop: the prompt starts at about `--tokens` tokens, carries
automatic caching (top-level `cache_control`), and grows by one assistant turn and one
tool_result per request, streamed through the async SDK. The run stops after `--requests`
requests or `--seconds` seconds, whichever comes first.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agent_repl.emulator.policies import ScriptPolicy  # noqa: E402
from agent_repl.emulator.server import EmulatorServer  # noqa: E402

MODEL = "claude-sonnet-5-5"
_WORDS = (
    "cache prefix token request stream server client model window budget tool result file line "
    "function return value error retry header event block message system user assistant usage"
).split()


class ProfiledServer(EmulatorServer):
    """The emulator with cProfile running in its server thread."""

    def _run(self, sock: Any) -> None:
        self.profiler = cProfile.Profile()
        self.profiler.enable()
        try:
            super()._run(sock)
        finally:
            self.profiler.disable()


def scenario(steps: int) -> dict[str, Any]:
    return {
        "steps": [
            {
                "text": f"Step {i}: reading the next file to follow the call chain further down.",
                "tools": [{"name": "Read", "input": {"file_path": f"/repo/src/module_{i}.py", "limit": 200}}],
            }
            for i in range(steps)
        ]
    }


def filler(rng: random.Random, words: int) -> str:
    lines = []
    for start in range(0, words, 12):
        lines.append(" ".join(rng.choice(_WORDS) for _ in range(min(12, words - start))))
    return "\n".join(lines)


def opening(conversation: int, tokens: int) -> tuple[str, list[dict[str, Any]]]:
    """A system prompt and history of roughly `tokens` tokens (about 1.2 tokens per filler word)."""
    rng = random.Random(conversation)
    system = f"You are conversation {conversation}.\n" + filler(rng, 2_000)
    history: list[dict[str, Any]] = []
    for turn in range(int(tokens / 1.2 / 3_000)):
        history.append({"role": "user", "content": f"Question {turn}:\n" + filler(rng, 1_500)})
        history.append({"role": "assistant", "content": f"Answer {turn}:\n" + filler(rng, 1_500)})
    history.append({"role": "user", "content": "Trace the request path through the code base."})
    return system, history


async def run_conversation(
    client: anthropic.AsyncAnthropic, index: int, tokens: int, budget: dict[str, Any]
) -> None:
    system, messages = opening(index, tokens)
    tools = [{"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}]
    while budget["left"] > 0 and time.perf_counter() < budget["deadline"]:
        budget["left"] -= 1
        started = time.perf_counter()
        events = 0
        async with client.messages.stream(
            model=MODEL,
            max_tokens=1024,
            system=system,
            tools=tools,
            messages=messages,
            extra_body={"cache_control": {"type": "ephemeral"}},
        ) as stream:
            async for _event in stream:
                events += 1
            final = await stream.get_final_message()
        budget["latencies"].append(time.perf_counter() - started)
        budget["events"] += events
        budget["read"] += final.usage.cache_read_input_tokens or 0
        budget["written"] += final.usage.cache_creation_input_tokens or 0
        budget["uncached"] += final.usage.input_tokens
        content = [block.model_dump(exclude_none=True, exclude={"parsed_output"}) for block in final.content]
        tool = next(block for block in final.content if block.type == "tool_use")
        messages = [
            *messages,
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool.id,
                        "content": f"contents of {tool.input['file_path']}\n" * 20,
                    }
                ],
            },
        ]


async def drive(base_url: str, args: argparse.Namespace) -> dict[str, Any]:
    budget: dict[str, Any] = {
        "left": args.requests,
        "deadline": time.perf_counter() + args.seconds,
        "latencies": [],
        "events": 0,
        "read": 0,
        "written": 0,
        "uncached": 0,
    }
    async with anthropic.AsyncAnthropic(base_url=base_url, api_key="bench", max_retries=0) as client:
        # Warm-up: the first request of a conversation tokenizes its whole history once.
        started = time.perf_counter()
        await asyncio.gather(
            *(run_conversation(client, i, args.tokens, budget) for i in range(args.conversations))
        )
        budget["elapsed"] = time.perf_counter() - started
    return budget


def report(budget: dict[str, Any], args: argparse.Namespace, mode: str) -> None:
    done = len(budget["latencies"])
    elapsed = budget["elapsed"]
    latencies = sorted(budget["latencies"])
    total_in = budget["read"] + budget["written"] + budget["uncached"]
    print(
        f"mode: {mode}; {args.conversations} conversations of ~{args.tokens:,} tokens, streaming, async SDK"
    )
    print(f"requests: {done} in {elapsed:.2f}s -> {done / elapsed:.1f} requests/s")
    print(
        f"SSE events (as the SDK yields them, pings excluded): {budget['events']} -> "
        f"{budget['events'] / elapsed:.0f} events/s"
    )
    print(
        f"latency p50 {latencies[done // 2] * 1000:.1f} ms, p95 {latencies[int(done * 0.95)] * 1000:.1f} ms, "
        f"max {latencies[-1] * 1000:.1f} ms"
    )
    print(
        f"input tokens per request {total_in / done:,.0f}; cache read {budget['read'] / total_in:.1%}, "
        f"written {budget['written'] / total_in:.1%}, uncached {budget['uncached'] / total_in:.1%}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    steps = args.requests + 10
    if args.profile or args.in_process:
        server = ProfiledServer(policy=ScriptPolicy(scenario(steps))) if args.profile else None
        server = server or EmulatorServer(policy=ScriptPolicy(scenario(steps)))
        with server:
            budget = asyncio.run(drive(server.base_url, args))
        report(budget, args, "in-process (server thread shares the GIL with the client)")
        if isinstance(server, ProfiledServer):
            out = io.StringIO()
            pstats.Stats(server.profiler, stream=out).sort_stats("tottime").print_stats(25)
            print(out.getvalue())
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(scenario(steps)))
        process = subprocess.Popen(
            [sys.executable, "-m", "agent_repl.emulator", "--port", "0", "--policy", f"script:{path}"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().strip().removeprefix("listening on ")
            token = process.stdout.readline().strip().removeprefix("control token ")
            budget = asyncio.run(drive(base_url, args))
            totals = httpx2.get(
                f"{base_url}/_emulator/usage", headers={"x-emulator-token": token}, timeout=30
            ).json()
        finally:
            process.terminate()
            process.wait(timeout=30)
    report(budget, args, "separate server process")
    print(
        f"server meter: {totals['requests']} requests, {totals['cache_read_tokens']:,} tokens read from cache"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
