"""Opening sessions for a front end without making the user wait for imports.

The first session needs settings, maybe the offline emulator, maybe a transcript to resume, and
several heavy imports (pydantic models); all of that runs in a thread after the first paint, so
the prompt is usable at once. The API client's HTTP library is warmed the same way. The token
encoder is not needed to open a session: the status line's figure loads it once the history is drawn.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agent_repl.bootstrap import ResumeSource
    from agent_repl.core.config.settings import Settings
    from agent_repl.core.model.messages import Message
    from agent_repl.core.permissions.rules import ApprovalCallback
    from agent_repl.session import Session


# Asked with the folder and the allow rules its settings hold back: may they apply?
TrustQuestion = Callable[[Path, list[str]], Awaitable[bool]]


class LaunchError(Exception):
    """The session cannot start (bad settings, a session to resume that does not exist...)."""


class LaunchPlan(Protocol):
    settings: Settings
    resume: ResumeSource | None
    notices: list[str]


def warm_sdk() -> None:
    """Import the API client's HTTP library, so the first request does not wait for it."""
    import agent_repl.core.api.accumulate  # noqa: F401
    import agent_repl.core.api.wire  # noqa: F401


def warm_sdk_in_background() -> asyncio.Future[None]:
    """`warm_sdk` in a daemon thread (quitting never waits for it); the future is done when it is."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def finished() -> None:
        if not done.done():
            done.set_result(None)

    def run() -> None:
        try:
            warm_sdk()
        finally:
            try:
                loop.call_soon_threadsafe(finished)
            except RuntimeError:
                pass  # the app already closed its loop

    threading.Thread(target=run, name="warm-anthropic-sdk", daemon=True).start()
    return done


def _warm_imports() -> None:
    import agent_repl.bootstrap  # noqa: F401
    import agent_repl.context.report  # noqa: F401
    import agent_repl.context.snip  # noqa: F401


class Launcher:
    def __init__(
        self,
        cwd: Path,
        prepare: Callable[[ExitStack], LaunchPlan],
        preview: Callable[[], list[Message]] | None = None,
    ) -> None:
        """`preview`: the newest entries of the session being resumed, read cheaply from the end of
        its transcript (agent_repl.transcript.tail_preview), drawn while the session opens."""
        self.cwd = cwd
        self._prepare = prepare
        self.preview = preview
        self._stack = ExitStack()
        self.settings: Settings | None = None
        self.notices: list[str] = []

    @classmethod
    def for_settings(cls, settings: Settings, cwd: Path, resume: ResumeSource | None = None) -> Launcher:
        """A launcher for settings already made (tests, benchmarks)."""

        class _Ready:
            def __init__(self) -> None:
                self.settings, self.resume = settings, resume
                self.notices: list[str] = []

        return cls(cwd, lambda stack: _Ready())

    def _prepare_in_thread(self) -> LaunchPlan:
        _warm_imports()
        launch = self._prepare(self._stack)
        settings = launch.settings
        if settings.mcp_servers or settings.project_mcp_servers or (self.cwd / ".mcp.json").is_file():
            import mcp  # noqa: F401  (the MCP SDK, imported here rather than on the event loop)
        return launch

    async def open(self, ask: ApprovalCallback, confirm_trust: TrustQuestion | None = None) -> Session:
        """The first session; `confirm_trust` is asked whether a folder's own allow rules may apply."""
        launch = await asyncio.to_thread(self._prepare_in_thread)
        from agent_repl.bootstrap import held_back_grants, open_session, trust_folder
        from agent_repl.core.config.trust import NOT_TRUSTED_NOTICE
        from agent_repl.core.model.transcript_sink import SessionWriteError

        settings = launch.settings
        self.notices = list(launch.notices)
        held_back = held_back_grants(settings, self.cwd)
        if held_back and confirm_trust is not None:
            if await confirm_trust(self.cwd, held_back):
                settings, problems = await asyncio.to_thread(trust_folder, settings, self.cwd)
                self.notices.extend(problems)
            else:
                self.notices.append(NOT_TRUSTED_NOTICE)
        self.settings = settings
        try:
            session = await open_session(settings, self.cwd, resume=launch.resume, ask=ask)
        except SessionWriteError as exc:  # a read-only home: one line, like a bad settings file
            raise LaunchError(str(exc)) from exc
        if session.mcp is not None:
            self.notices.append(session.mcp.summary())
        if (sandbox_notice := session.sandbox.notice()) is not None:
            self.notices.append(sandbox_notice)
        return session

    async def reopen(self, resume: ResumeSource | None, previous: Session, ask: ApprovalCallback) -> Session:
        """The next session (/clear, /resume), with the model the previous one ended on."""
        from agent_repl.bootstrap import open_session

        settings = previous.settings.model_copy(update={"model": previous.model})
        return await open_session(settings, previous.cwd, resume=resume, ask=ask)

    def close(self) -> None:
        self._stack.close()
