"""The user's own status line (the `statusLine` setting), drawn above the built-in one.

Asked for after every reply, a mode change, a command and the session's start; run at most every
0.3 s (a request during a run is served once it ends). Colours (SGR) are kept, every other escape
or control character is shown, never acted on.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from agent_repl.core.hooks.status_line import MIN_INTERVAL_S, run_status_command, status_input
from agent_repl.core.model.visible import show_controls

if TYPE_CHECKING:
    from agent_repl.session import Session

_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def status_text(line: str, padding: int = 0) -> Text:
    """One line of the command's output: its colours applied, anything else made visible."""
    parts = _SGR.split(line)
    colours = _SGR.findall(line) + [""]
    safe = "".join(show_controls(part, newlines=False, tabs=False) + colours[i] for i, part in enumerate(parts))
    text = Text.from_ansi(safe, no_wrap=True, overflow="ellipsis")
    return Text(" " * padding) + text if padding else text


class UserStatusLine(Static):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.display = False
        self._status_session: Session | None = None
        self._status_started = time.monotonic()
        self._status_task: asyncio.Task[None] | None = None
        self._rerun = False
        self._last_run_at = 0.0
        self.context: tuple[int, int] = (0, 0)

    def configure(self, session: Session) -> None:
        """A session (the first, or after /clear and /resume): its settings say whether to draw."""
        self._status_session = session
        self._status_started = time.monotonic()
        self.display = session.settings.status_line is not None
        self.update("")
        self.request()

    def request(self, context: tuple[int, int] | None = None) -> None:
        """Run the command again soon, with the context figure the built-in line shows."""
        if context is not None:
            self.context = context
        if self._status_session is None or self._status_session.settings.status_line is None:
            return
        if self._status_task is not None and not self._status_task.done():
            self._rerun = True
            return
        self._status_task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            self._rerun = False
            wait = self._last_run_at + MIN_INTERVAL_S - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last_run_at = time.monotonic()
            await self._run_once()
            if not self._rerun:
                return

    async def _run_once(self) -> None:
        from agent_repl import __version__

        session = self._status_session
        if session is None or session.settings.status_line is None:
            return
        config = session.settings.status_line
        last = session.last_usage
        tokens, window = self.context
        payload = status_input(
            session_id=session.session_id,
            transcript_path=str(session.sink.path or ""),
            cwd=str(session.cwd),
            model=session.model,
            version=__version__,
            permission_mode=session.permission_mode_name,
            cost_usd=session.cost_total_usd,
            duration_ms=round((time.monotonic() - self._status_started) * 1000),
            api_duration_ms=round(session.api_duration_ms),
            context_tokens=tokens,
            context_window=window,
            usage=last.model_dump(include={"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}) if last else None,
        )
        run = await run_status_command(
            config.command,
            json.dumps(payload).encode(),
            cwd=session.cwd,
            redactor=session.redactor,
            scrubbed_env=session.settings.scrubbed_env,
        )
        if session is not self._status_session:
            return
        self.update(Text("\n").join(status_text(line, config.padding) for line in run.lines))
        self.styles.height = max(1, len(run.lines))
