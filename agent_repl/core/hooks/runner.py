"""Running the configured hooks of an event: every matching command at once, each with its timeout.

A hook is a child process like a Bash command: it starts in the project with the agent's
environment minus its credentials (plus `CLAUDE_PROJECT_DIR`), gets the event's JSON on stdin,
and what it prints is redacted and held to the same size limit as tool output before anything
reads it (text over the limit is saved to the session's tool-results directory and a preview
goes on). A hook that cannot start, times out or answers badly is a failure the user sees in one
line; the work goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_repl.core.config.hooks import ConfiguredHook, matches
from agent_repl.core.hooks.io import HookOutcome, HookRun, interpret
from agent_repl.core.permissions.credentials import child_environment, credential_names
from agent_repl.core.tooling.persisted_output import persist_text
from agent_repl.core.tooling.redaction import SecretRedactor

# Characters of one hook's text that reach the model or the screen; the rest is saved to a file.
HOOK_OUTPUT_LIMIT = 10_000


@dataclass
class HookRunner:
    hooks: list[ConfiguredHook]
    cwd: Path
    session_id: str
    # Read at each run: the transcript file and the permission mode can change during a session.
    transcript_path: Callable[[], str]
    permission_mode: Callable[[], str]
    redactor: SecretRedactor = field(default_factory=SecretRedactor)
    scrubbed_env: frozenset[str] = field(default_factory=credential_names)
    output_dir: Path | None = None
    # Each hook's latest run, for /hooks.
    last_runs: dict[ConfiguredHook, HookRun] = field(default_factory=dict)
    # Hooks run without waiting for them (Notification), kept until they finish.
    background: set[asyncio.Task[None]] = field(default_factory=set)
    # Answers the `callback` hooks: the event's input in, the hook's JSON output back.
    call_back: Callable[[ConfiguredHook, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None

    def matching(self, event: str, value: str | None = None) -> list[ConfiguredHook]:
        return [h for h in self.hooks if h.event == event and matches(h.matcher, value)]

    def payload(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The event's JSON input, checked against its documented fields."""
        from agent_repl.core.hooks.payloads import INPUT_MODELS  # built when a hook first runs

        model = INPUT_MODELS[event]
        common = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path(),
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode(),
            "hook_event_name": event,
        }
        return model.model_validate({**common, **fields}).model_dump(mode="json")

    async def run(self, event: str, fields: dict[str, Any], *, match: str | None = None) -> HookOutcome:
        hooks = self.matching(event, match)
        if not hooks:
            return HookOutcome(event)
        data = json.dumps(self.payload(event, fields), ensure_ascii=False).encode()
        runs = list(await asyncio.gather(*(self._run_one(hook, data) for hook in hooks)))
        for run in runs:
            self.last_runs[run.hook] = run
        outcome = interpret(event, runs)
        outcome.context = [self._limit(t) for t in outcome.context]
        outcome.feedback = [self._limit(t) for t in outcome.feedback]
        outcome.notices = [self._limit(t) for t in outcome.notices]
        outcome.permission_reason = self._limit(outcome.permission_reason)
        return outcome

    async def _run_one(self, hook: ConfiguredHook, data: bytes) -> HookRun:
        if hook.kind == "callback":
            return await self._call_back(hook, data)
        env = child_environment(self.scrubbed_env | credential_names())
        env["CLAUDE_PROJECT_DIR"] = str(self.cwd)
        started = time.monotonic()
        try:
            process = await asyncio.create_subprocess_shell(
                hook.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return HookRun(hook, None, error=f"could not start: {exc.strerror or exc}")
        try:
            out, err = await asyncio.wait_for(process.communicate(data), timeout=hook.timeout)
        except TimeoutError:
            _kill(process)
            await process.wait()
            return HookRun(hook, None, duration_ms=_ms(started), error=f"timed out after {hook.timeout:g} s")
        except asyncio.CancelledError:
            _kill(process)
            raise
        stdout = self.redactor.text(out.decode("utf-8", errors="replace"))
        stderr = self.redactor.text(err.decode("utf-8", errors="replace"))
        run = HookRun(hook, process.returncode, stdout, stderr, _ms(started))
        if run.exit_code == 0:
            from agent_repl.core.hooks.payloads import parse_output

            run.output, problem = parse_output(stdout)
            if problem:
                run.error = problem
        return replace(run, stdout=self._limit(stdout), stderr=self._limit(stderr))

    async def _call_back(self, hook: ConfiguredHook, data: bytes) -> HookRun:
        if self.call_back is None:
            return HookRun(hook, None, error="nobody answers this callback hook")
        started = time.monotonic()
        try:
            answer = await asyncio.wait_for(self.call_back(hook, json.loads(data)), timeout=hook.timeout)
        except TimeoutError:
            return HookRun(hook, None, duration_ms=_ms(started), error=f"timed out after {hook.timeout:g} s")
        except Exception as exc:  # the program's callback failed: a failure like a command's
            return HookRun(hook, None, duration_ms=_ms(started), error=f"the callback failed: {exc}")
        stdout = self.redactor.text(json.dumps(answer, ensure_ascii=False))
        run = HookRun(hook, 0, stdout, "", _ms(started))
        from agent_repl.core.hooks.payloads import parse_output

        run.output, run.error = parse_output(stdout)
        return replace(run, stdout=self._limit(stdout))

    def _limit(self, text: str) -> str:
        if len(text) <= HOOK_OUTPUT_LIMIT or self.output_dir is None:
            return text[: HOOK_OUTPUT_LIMIT]
        return persist_text(text, f"hook-{uuid.uuid4().hex[:12]}", self.output_dir).preview


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def _kill(process: asyncio.subprocess.Process) -> None:
    """Stop the hook and whatever it started (it runs in its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
