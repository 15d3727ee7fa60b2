"""`agent-repl`: the command line.

    agent-repl                      the interactive REPL
    agent-repl -p PROMPT            print mode (one turn, headless)
    agent-repl --continue / --resume [ID|PATH]

With no ANTHROPIC_API_KEY (and no ANTHROPIC_BASE_URL) it starts the local emulator with the
offline demo model and says so in one line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from contextlib import ExitStack
from pathlib import Path

from agent_repl import __version__
from agent_repl.bootstrap import ResumeError, close_session, find_resume_source, open_session
from agent_repl.core.permissions import Rule
from agent_repl.core.settings import Settings, SettingsError, load_settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-repl", description="A terminal coding agent.")
    parser.add_argument("prompt", nargs="?", help="the prompt (with -p); without -p, the first message")
    parser.add_argument("-p", "--print", dest="print_prompt", nargs="?", const="", default=None, metavar="PROMPT",
                        help="print mode: answer one prompt and exit (the prompt may also come on stdin)")
    parser.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    parser.add_argument("--max-turns", type=int, default=None, help="stop after this many model requests")
    parser.add_argument("--model", default=None)
    parser.add_argument("-c", "--continue", dest="continue_latest", action="store_true",
                        help="continue this project's latest session")
    parser.add_argument("-r", "--resume", nargs="?", const="", default=None, metavar="ID|PATH",
                        help="resume a session by id or transcript path (a Claude Code file is forked)")
    parser.add_argument("--allowed-tools", default=None,
                        help='comma-separated allow rules, e.g. "Bash(git status:*),Read"')
    parser.add_argument("--dangerously-skip-permissions", action="store_true",
                        help="run every tool call without asking (only in a sandbox you can throw away)")
    parser.add_argument("--inline", action="store_true", help="the inline line-mode REPL instead of the full screen")
    parser.add_argument("--version", action="version", version=f"agent-repl {__version__}")
    return parser


def _allowed_tool_rules(text: str | None) -> list[str]:
    """Split `Bash(git status:*),Read` on the commas that are not inside parentheses."""
    rules, current, depth = [], "", 0
    for char in text or "":
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            rules.append(current)
            current = ""
        else:
            current += char
    rules.append(current)
    rules = [rule.strip() for rule in rules if rule.strip()]
    for rule in rules:
        Rule.parse(rule)
    return rules


def _start_offline_emulator(stack: ExitStack, settings: Settings, err) -> Settings:
    from agent_repl.offline import start_offline_emulator

    base_url = start_offline_emulator(stack, model=settings.model)
    print(f"agent-repl: no ANTHROPIC_API_KEY set, so this runs on the offline demo model "
          f"(a local emulator at {base_url}); set the key to talk to Claude.", file=err)
    return settings.model_copy(update={"base_url": base_url, "api_key": "offline-demo"})


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    err = sys.stderr
    cwd = Path.cwd()
    try:
        settings = load_settings(
            cwd=cwd,
            overrides={"model": args.model, "skip_permissions": args.dangerously_skip_permissions or None},
        )
        extra_allow = _allowed_tool_rules(args.allowed_tools)
    except (SettingsError, ValueError) as exc:
        print(f"agent-repl: {exc}", file=err)
        return 2
    if extra_allow:
        settings.permissions.allow.extend(extra_allow)
    if args.max_turns is not None and args.max_turns < 1:
        print("agent-repl: --max-turns must be at least 1", file=err)
        return 2

    with ExitStack() as stack:
        if not settings.api_key:
            if settings.base_url:
                settings = settings.model_copy(update={"api_key": os.environ.get("ANTHROPIC_AUTH_TOKEN", "none")})
            else:
                settings = _start_offline_emulator(stack, settings, err)
        try:
            resume = find_resume_source(settings, cwd, args.resume or None, latest=args.continue_latest)
        except ResumeError as exc:
            print(f"agent-repl: {exc}", file=err)
            return 2
        if args.resume == "" and resume is None:
            resume = find_resume_source(settings, cwd, None, latest=True)
        if (args.continue_latest or args.resume is not None) and resume is None:
            print("agent-repl: no earlier session in this directory to resume", file=err)
            return 2
        if resume is not None:
            for warning in resume.loaded.warnings:
                print(f"agent-repl: warning: {warning}", file=err)

        if args.print_prompt is not None:
            prompt = args.print_prompt or args.prompt or ("" if sys.stdin.isatty() else sys.stdin.read())
            if not prompt.strip():
                print("agent-repl: -p needs a prompt (an argument or on stdin)", file=err)
                return 2
            return asyncio.run(_print_mode(settings, cwd, resume, prompt, args))
        from agent_repl.ui.inline import run_inline

        return asyncio.run(run_inline(settings, cwd, resume, first_prompt=args.prompt))


async def _print_mode(settings, cwd, resume, prompt, args) -> int:
    from agent_repl.print_mode import run_print_mode

    session = await open_session(settings, cwd, resume=resume, ask=None)
    try:
        return await run_print_mode(session, prompt, output_format=args.output_format, max_turns=args.max_turns)
    finally:
        await close_session(session)


if __name__ == "__main__":
    raise SystemExit(main())
