"""`agent-repl`: the command line.

    agent-repl [PROMPT]             the full-screen app (PROMPT, if given, is sent first)
    agent-repl --inline [PROMPT]    the line-mode REPL in the terminal's own scrollback
    agent-repl -p PROMPT            print mode (one turn, headless)
    agent-repl --continue / --resume [ID|PATH]

With no ANTHROPIC_API_KEY (and no ANTHROPIC_BASE_URL) it starts the local emulator with the
offline demo model and says so in one line. The full-screen app paints before the heavy imports
and the session load, which happen in the background (`agent_repl.ui.launcher`).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_repl.launch_flags import FlagError, build_parser, check_combinations

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_repl.bootstrap import ResumeSource
    from agent_repl.core.config.settings import Settings
    from agent_repl.ui.launcher import Launcher


class LaunchError(Exception):
    """Why the agent cannot start; printed as `agent-repl: <message>` with exit code 2."""


@dataclass
class LaunchPlan:
    settings: Settings
    resume: ResumeSource | None
    notices: list[str] = field(default_factory=list)


@dataclass
class ContinueChoice:
    """The session `--continue` resumes, once the app's preview has listed the folder to draw that
    session's newest entries first: the launch then resumes this file instead of listing again."""

    path: Path | None = None


# With none of these in the environment, a run is most likely offline (a settings file may still
# name a key or an endpoint).
_ENDPOINT_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def _early_offline_emulator(credentials: dict[str, str] | None) -> tuple[ExitStack, str] | None:
    """The offline emulator started before the settings are read, when the environment names no key
    and no endpoint, so it starts up while they are; (what stops it, its URL), or None."""
    env = {**os.environ, **(credentials or {})}
    if any(env.get(name) for name in _ENDPOINT_VARIABLES):
        return None
    from agent_repl.offline import OfflineModeUnavailable, start_offline_emulator

    early = ExitStack()
    try:
        return early, start_offline_emulator(early)
    except (OfflineModeUnavailable, OSError):
        early.close()  # the launch says why, if it needs the emulator after all
        return None


def _start_offline_emulator(
    stack: ExitStack, settings: Settings, notices: list[str], early: tuple[ExitStack, str] | None = None
) -> Settings:
    from agent_repl.offline import OfflineModeUnavailable, start_offline_emulator

    if early is not None:
        stack.enter_context(early[0])
        base_url = early[1]
    else:
        try:
            base_url = start_offline_emulator(stack)
        except OfflineModeUnavailable as exc:
            raise LaunchError(str(exc)) from None
    notices.append(f"no ANTHROPIC_API_KEY set, so this runs on the offline demo model "
                   f"(a local emulator at {base_url}); set the key to talk to Claude.")
    return settings.model_copy(update={"base_url": base_url, "api_key": "offline-demo"})


def _resolved_model(settings: Settings, *, offline: bool = False) -> Settings:
    """The model as the endpoint names it (`opus`, `sonnet`, `haiku` resolved), or a clear error.
    A model the endpoint described before (its answer is in the model cache) is not asked again;
    the offline emulator's table is checked here, without waiting for the emulator."""
    from agent_repl.core.api.model_catalog import ModelCatalog
    from agent_repl.core.api.models import ALIASES, ModelLookupError, resolve_model_sync

    if offline:
        from agent_repl.offline import offline_model

        try:
            model = offline_model(settings.model)
        except ModelLookupError as exc:
            raise LaunchError(f"{exc} Pick one with --model.") from exc
        return settings if model == settings.model else settings.model_copy(update={"model": model})
    if settings.model.strip().lower() not in ALIASES and ModelCatalog.on_disk(settings.home, settings.base_url).knows(
        settings.model
    ):
        return settings  # the endpoint named this model before (its answer is kept): no need to ask
    try:
        model = resolve_model_sync(settings.api_key, settings.base_url, settings.model, settings.auth_token)
    except ModelLookupError as exc:
        raise LaunchError(f"{exc} Pick one with --model.") from exc
    return settings if model == settings.model else settings.model_copy(update={"model": model})


def prepare_launch(
    args: argparse.Namespace,
    cwd: Path,
    stack: ExitStack,
    credentials: dict[str, str] | None = None,
    continued: ContinueChoice | None = None,
) -> LaunchPlan:
    """Settings, the endpoint (maybe the offline emulator, stopped with `stack`) and what to resume.
    `credentials`: what `take_credentials` moved out of the environment at start; `continued`: the
    session `--continue` chose for the app's preview, if it did."""
    early = _early_offline_emulator(credentials)
    with ExitStack() as unused:
        if early is not None:
            unused.enter_context(early[0])  # stopped on the way out unless offline mode takes it
        try:
            settings = _flag_settings(args, cwd, credentials)
        except (FlagError, ValueError) as exc:
            raise LaunchError(str(exc)) from exc
        if not settings.api_key and settings.api_key_helper:
            settings = settings.model_copy(update={"api_key": _run_key_helper(settings)})
        notices: list[str] = []
        offline = False
        if not settings.api_key and not settings.auth_token:
            if settings.base_url:
                settings = settings.model_copy(update={"api_key": "none"})
            else:
                try:
                    settings = _start_offline_emulator(stack, settings, notices, early)
                except SystemExit as exc:
                    raise LaunchError(str(exc.code).removeprefix("agent-repl: ")) from exc
                unused.pop_all()
                offline = True
    settings = _resolved_model(settings, offline=offline)
    # Imported only now: the offline emulator starts up in its own process meanwhile.
    from agent_repl.bootstrap import ResumeError, find_resume_source

    target, latest = args.resume or None, args.continue_latest
    if latest and (chosen := _continued_path(continued, settings, cwd)) is not None:
        target, latest = str(chosen), False
    try:
        resume = find_resume_source(settings, cwd, target, latest=latest)
    except ResumeError as exc:
        raise LaunchError(str(exc)) from exc
    if args.resume == "" and resume is None:
        resume = find_resume_source(settings, cwd, None, latest=True)
    if (args.continue_latest or args.resume is not None) and resume is None:
        raise LaunchError("no earlier session in this directory to resume")
    if resume is not None and args.fork_session:
        resume.owned = False  # a copy in a new session: the old file stays as it was
    if settings.session_id is not None and session_id_in_use(settings, cwd, settings.session_id):
        raise LaunchError(f"--session-id: session {settings.session_id} already exists in this project")
    if resume is not None:
        notices.extend(f"warning: {warning}" for warning in resume.loaded.warnings)
    return LaunchPlan(settings, resume, notices)


def _continued_path(continued: ContinueChoice | None, settings: Settings, cwd: Path) -> Path | None:
    """The transcript the preview chose for `--continue`, if it is still a session of this folder
    in the settings' home (the preview read the home from the environment)."""
    if continued is None or continued.path is None:
        return None
    from agent_repl.transcript.paths import project_dir

    path = continued.path
    if path.resolve().parent != project_dir(settings.home, cwd).resolve() or not path.is_file():
        return None
    return path


def _flag_settings(args: argparse.Namespace, cwd: Path, credentials: dict[str, str] | None) -> Settings:
    """The settings files, the environment and the flags, in that order (a later one wins)."""
    from agent_repl.core.config.settings import SettingsError, load_settings, read_flag_settings
    from agent_repl.launch_flags import (
        agents_json,
        permission_mode_overrides,
        session_id_flag,
        setting_sources,
        split_rules,
        system_prompt_flags,
    )
    from agent_repl.mcp.config import McpConfigError, read_mcp_config_flag

    check_combinations(args)
    if args.max_turns is not None and args.max_turns < 1:
        raise FlagError("--max-turns must be at least 1")
    replace, append = system_prompt_flags(args)
    try:
        flag_servers, sdk_servers = read_mcp_config_flag(args.mcp_config, cwd) if args.mcp_config else ({}, [])
    except McpConfigError as exc:
        raise FlagError(str(exc)) from exc
    try:
        settings = load_settings(
            cwd=cwd,
            env={**os.environ, **(credentials or {})},
            overrides={
                "model": args.model,
                "fallback_model": args.fallback_model,
                "effort": args.effort,
                "skip_permissions": args.dangerously_skip_permissions or None,
                **permission_mode_overrides(args.permission_mode),
                "max_output_budget": args.max_output_budget,
                "max_budget_usd": args.max_budget_usd,
                "system_prompt": replace,
                "append_system_prompt": append,
                "session_id": session_id_flag(args.session_id),
                "flag_agents": agents_json(args.agents) or None,
                "flag_mcp_servers": flag_servers or None,
                "sdk_mcp_servers": sdk_servers or None,
                "strict_mcp_config": args.strict_mcp_config or None,
            },
            trusted=True if args.trust_project else None,
            sources=setting_sources(args.setting_sources),
            flag_settings=read_flag_settings(args.settings, cwd) if args.settings is not None else None,
        )
        settings.permissions.allow.extend(_checked_rules(split_rules(args.allowed_tools)))
        settings.permissions.deny.extend(_checked_rules(split_rules(args.disallowed_tools)))
    except SettingsError as exc:
        raise FlagError(str(exc)) from exc
    add_dirs = [Path(d).expanduser().resolve() for d in args.add_dirs]
    missing = [str(d) for d in add_dirs if not d.is_dir()]
    if missing:
        raise FlagError(f"--add-dir: not a directory: {', '.join(missing)}")
    settings.add_dirs.extend(add_dirs)
    return settings


def _checked_rules(rules: list[str]) -> list[str]:
    from agent_repl.core.permissions.rules import Rule

    for rule in rules:
        Rule.parse(rule)
    return rules


def session_id_in_use(settings: Settings, cwd: Path, session_id: str) -> bool:
    from agent_repl.transcript.paths import project_dir

    return (project_dir(settings.home, cwd) / f"{session_id}.jsonl").exists()


def _run_key_helper(settings: Settings) -> str:
    """Run `api_key_helper` (without the agent's credentials in its environment); its output is the key."""
    import subprocess

    from agent_repl.core.permissions.credentials import child_environment

    command = settings.api_key_helper or ""
    try:
        done = subprocess.run(
            ["bash", "-c", command],
            env=child_environment(settings.scrubbed_env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaunchError(f"api_key_helper {command!r} could not run: {exc}") from exc
    key = done.stdout.strip()
    if done.returncode != 0 or not key:
        detail = (done.stderr.strip().splitlines() or ["it printed no key"])[-1]
        raise LaunchError(f"api_key_helper {command!r} failed (exit {done.returncode}): {detail}")
    return key


def main(argv: list[str] | None = None, credentials: dict[str, str] | None = None) -> int:
    """`credentials`: what `take_credentials` moved out of the environment (`agent_repl.entry` does
    it first); without them, this does it now (which may re-execute the program)."""
    cwd = Path.cwd()
    if credentials is None:
        from agent_repl.core.permissions.credentials import take_credentials

        credentials = take_credentials(cwd)
    args = build_parser().parse_args(argv)
    if args.print_prompt is None and not args.inline and args.input_format != "stream-json":
        return _run_app(args, cwd, credentials)
    err = sys.stderr
    with ExitStack() as stack:
        # Start-up (the session's code imported, the emulator started) allocates much and frees
        # little: garbage collection would only cost time. What it built stays out of later ones.
        gc.disable()
        try:
            launch = prepare_launch(args, cwd, stack, credentials)
        except LaunchError as exc:
            print(f"agent-repl: {exc}", file=err)
            return 2
        finally:
            gc.freeze()
            gc.enable()
        for notice in launch.notices:
            print(f"agent-repl: {notice}", file=err)
        from agent_repl.core.model.transcript_sink import SessionWriteError

        try:
            if args.input_format == "stream-json":
                return _stream_json_input(launch, cwd, args)
            if args.print_prompt is not None:
                from agent_repl.bootstrap import held_back_grants
                from agent_repl.core.config.trust import untrusted_warning
                from agent_repl.core.model.visible import show_controls

                held_back = held_back_grants(launch.settings, cwd)
                if held_back:  # one line for everything the folder configures for itself
                    warning = show_controls(untrusted_warning(cwd, held_back), newlines=False)
                    print(f"agent-repl: {warning}", file=err)
                prompt = args.print_prompt or args.prompt or ("" if sys.stdin.isatty() else sys.stdin.read())
                if not prompt.strip():
                    print("agent-repl: -p needs a prompt (an argument or on stdin)", file=err)
                    return 2
                return asyncio.run(_print_mode(launch.settings, cwd, launch.resume, prompt, args))
            from agent_repl.ui.inline import run_inline

            return asyncio.run(run_inline(launch.settings, cwd, launch.resume, first_prompt=args.prompt))
        except SessionWriteError as exc:  # the session cannot be saved at all (a read-only home)
            print(f"agent-repl: {exc}", file=err)
            return 2


def app_launcher(args: argparse.Namespace, cwd: Path, credentials: dict[str, str] | None) -> Launcher:
    """What the full-screen app opens its first session with: the launch made in the launcher's
    thread, and for a resume the preview of the session's newest entries drawn before it."""
    from agent_repl.ui.launcher import Launcher
    from agent_repl.ui.launcher import LaunchError as UILaunchError

    continued = ContinueChoice()

    def prepare(stack: ExitStack) -> LaunchPlan:
        try:
            return prepare_launch(args, cwd, stack, credentials, continued)
        except LaunchError as exc:
            raise UILaunchError(str(exc)) from exc

    return Launcher(cwd, prepare, preview=_tail_preview(args, cwd, continued))


def _run_app(args: argparse.Namespace, cwd: Path, credentials: dict[str, str]) -> int:
    from agent_repl.ui.app import AgentApp

    # A full-screen app follows the terminal it is in: an exported COLUMNS or LINES would pin its
    # size (the terminal size lookup prefers them) and every resize would be ignored.
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
    app = AgentApp(app_launcher(args, cwd, credentials), first_prompt=args.prompt)
    app.run()
    if app.exit_note:
        print(app.exit_note)
    return app.return_code or 0


def _tail_preview(
    args: argparse.Namespace, cwd: Path, continued: ContinueChoice | None = None
) -> Callable[[], list[Any]] | None:
    """For `--resume ID` and `--continue`: the newest entries of that session of this folder (for
    `--continue` the newest session, noted in `continued` for the launch to resume), read from the
    end of its transcript, for the app to draw while the session opens. Nothing for a path or a
    picker."""
    ref = args.resume
    if args.continue_latest:
        if continued is None:
            return None
    elif not ref:
        return None

    def preview() -> list[Any]:
        from agent_repl.core.permissions.credentials import home_from_env
        from agent_repl.transcript.paths import project_dir
        from agent_repl.transcript.sessions import SessionLookupError, list_sessions, session_by_id
        from agent_repl.transcript.tail_preview import tail_messages

        projects = project_dir(home_from_env(os.environ), cwd)
        try:
            if continued is not None and args.continue_latest:
                sessions = list_sessions(projects)
                if not sessions:
                    return []
                path = continued.path = sessions[0].path
            else:
                path = session_by_id(projects, ref)
        except (SessionLookupError, OSError):
            return []
        return tail_messages(path)

    return preview


def _stream_json_input(launch: LaunchPlan, cwd: Path, args: argparse.Namespace) -> int:
    """An Agent SDK's transport: messages and control requests as JSON lines on stdin, served
    until stdin closes (agent_repl.sdk)."""
    from agent_repl.sdk import run_sdk_session

    return asyncio.run(
        run_sdk_session(
            launch.settings, cwd, launch.resume, max_turns=args.max_turns, ask_sdk=args.permission_prompt_tool == "stdio"
        )
    )


async def _print_mode(settings: Any, cwd: Path, resume: Any, prompt: str, args: argparse.Namespace) -> int:
    from agent_repl.bootstrap import close_session, open_session
    from agent_repl.print_mode import run_print_mode

    # Nothing shows the estimate before the API's own count: counting waits until a decision needs it.
    session = await open_session(settings, cwd, resume=resume, ask=None, bounds_first=True)
    for notice in [*session.notices, *filter(None, [session.sandbox.notice()])]:
        print(f"agent-repl: {notice}", file=sys.stderr)
    try:
        return await run_print_mode(
            session,
            prompt,
            output_format=args.output_format,
            max_turns=args.max_turns,
            include_partial_messages=args.include_partial_messages,
        )
    finally:
        await close_session(session)


if __name__ == "__main__":
    raise SystemExit(main())
