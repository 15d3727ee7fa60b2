"""The command line's flags: the parser, and the flags' values read into settings.

The spellings follow Claude Code's, so a program written for `claude` (the Agent SDKs pass
`--output-format stream-json --verbose --input-format stream-json --system-prompt ...`) can start
agent-repl instead. A flag agent-repl does not know is an error naming it, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import uuid
from pathlib import Path
from typing import Any, NoReturn

from agent_repl import __version__

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
SETTING_SOURCES = ("user", "project", "local")


class FlagError(Exception):
    """A flag's value cannot be used; the message names the flag."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line naming what is wrong (exit 2), instead of the usage block."""
        if message.startswith("unrecognized arguments: "):
            flags = message.removeprefix("unrecognized arguments: ")
            message = f"unknown flag or argument: {flags} (agent-repl --help lists the flags)"
        self.exit(2, f"agent-repl: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agent-repl", description="A terminal coding agent.", allow_abbrev=False)
    p.add_argument("prompt", nargs="?", help="the prompt (with -p); without -p, the first message")
    p.add_argument("-p", "--print", dest="print_prompt", nargs="?", const="", default=None, metavar="PROMPT",
                   help="print mode: answer one prompt and exit (the prompt may also come on stdin)")
    p.add_argument("--output-format", choices=["text", "json", "stream-json"], default="text")
    p.add_argument("--input-format", choices=["text", "stream-json"], default="text",
                   help="stream-json: user messages and control requests as JSON lines on stdin (an Agent SDK's "
                        "transport); implies print mode and needs --output-format stream-json")
    p.add_argument("--permission-prompt-tool", choices=["stdio"], default=None,
                   help="stdio: with --input-format stream-json, ask the program on stdin what no rule decides "
                        "(its can_use_tool callback)")
    p.add_argument("--verbose", action="store_true",
                   help="needed with --output-format stream-json (every message is printed), as Claude Code asks")
    p.add_argument("--include-partial-messages", action="store_true",
                   help="with --output-format stream-json: also print the raw stream events as they arrive")
    p.add_argument("--max-turns", type=int, default=None, help="stop after this many model requests")
    p.add_argument("--max-budget-usd", type=float, default=None, metavar="USD",
                   help="send no new request once the session has cost this much (the result says "
                        "error_max_budget_usd)")
    p.add_argument("--max-output-budget", type=int, default=None, metavar="TOKENS",
                   help='an output token budget for each turn (a prompt may say "+500k" instead)')
    p.add_argument("--model", default=None)
    p.add_argument("--fallback-model", default=None, metavar="MODEL",
                   help="the model to try when the model is overloaded, or once when it declines a request")
    p.add_argument("--effort", default=None, choices=["low", "medium", "high", "xhigh", "max"],
                   help="how hard the model works (the API's output_config.effort)")
    p.add_argument("--system-prompt", default=None, metavar="TEXT",
                   help="replace the built-in instructions (the working directory and platform stay); \"\" for none")
    p.add_argument("--system-prompt-file", default=None, metavar="FILE", help="--system-prompt, read from a file")
    p.add_argument("--append-system-prompt", default=None, metavar="TEXT",
                   help="add to the end of the system prompt")
    p.add_argument("--append-system-prompt-file", default=None, metavar="FILE",
                   help="--append-system-prompt, read from a file")
    p.add_argument("-c", "--continue", dest="continue_latest", action="store_true",
                   help="continue this project's latest session")
    p.add_argument("-r", "--resume", nargs="?", const="", default=None, metavar="ID|PATH",
                   help="resume a session by id or transcript path (a Claude Code file is forked)")
    p.add_argument("--fork-session", action="store_true",
                   help="with --resume or --continue: go on in a new session (a copy), leaving the old one as it was")
    p.add_argument("--session-id", default=None, metavar="UUID", help="the id of the new session (a UUID not in use)")
    p.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", action="extend", nargs="+",
                   default=[], metavar="RULES",
                   help='allow rules, comma- or space-separated, e.g. "Bash(git status:*),Read"')
    p.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="extend", nargs="+",
                   default=[], metavar="RULES", help='deny rules, e.g. "Bash(rm:*) Write"; deny beats allow')
    p.add_argument("--add-dir", dest="add_dirs", action="extend", nargs="+", default=[], metavar="DIR",
                   help="another folder the agent may read without asking (repeatable)")
    p.add_argument("--mcp-config", action="extend", nargs="+", default=[], metavar="JSON|FILE",
                   help='MCP servers for this run: {"mcpServers": {...}} or a file holding it (repeatable)')
    p.add_argument("--strict-mcp-config", action="store_true",
                   help="start only the servers of --mcp-config, none from the settings or .mcp.json")
    p.add_argument("--settings", default=None, metavar="JSON|FILE",
                   help="settings for this run (agent-repl's keys), over the settings files")
    p.add_argument("--setting-sources", default=None, metavar="SOURCES",
                   help="which settings files to read, comma-separated: user, project (local means the "
                        "project's file: agent-repl has no separate local file); \"\" for none")
    p.add_argument("--agents", default=None, metavar="JSON|FILE",
                   help='sub-agents for the Task tool: {"name": {"description": ..., "prompt": ..., "tools": [...]}}')
    p.add_argument("--trust-project", action="store_true",
                   help="let this folder's .agent_repl/settings.json allow things for this run, without asking")
    p.add_argument("--dangerously-skip-permissions", action="store_true",
                   help="run every tool call without asking (only in a sandbox you can throw away); protected "
                        "paths and the folder's trust still apply")
    p.add_argument("--permission-mode", default=None, metavar="MODE",
                   help="default, acceptEdits (edits in the project run without asking), plan (read-only until a "
                        "plan is approved), bypassPermissions (as --dangerously-skip-permissions) or dontAsk "
                        "(what no rule allows is refused, never asked); Shift+Tab cycles the first three")
    p.add_argument("--inline", action="store_true", help="the inline line-mode REPL instead of the full screen")
    p.add_argument("--version", "-v", action="version", version=f"agent-repl {__version__}")
    return p


def split_rules(values: list[str]) -> list[str]:
    """`Bash(git status:*),Read Edit` -> the rules, split on commas and spaces outside parentheses."""
    rules, current, depth = [], "", 0
    for char in " ".join(values):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char in ", \t\n" and depth <= 0:
            rules.append(current)
            current = ""
        else:
            current += char
    rules.append(current)
    return [rule.strip() for rule in rules if rule.strip()]


def _read_text_flag(flag: str, path: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FlagError(f"{flag}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def system_prompt_flags(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The replacement and the addition for the system prompt, from the flags or their files."""
    for text_flag, file_flag in (("system_prompt", "system_prompt_file"), ("append_system_prompt", "append_system_prompt_file")):
        if getattr(args, text_flag) is not None and getattr(args, file_flag) is not None:
            dashed = text_flag.replace("_", "-")
            raise FlagError(f"--{dashed} and --{dashed}-file: give one of them")
    replace = args.system_prompt
    if args.system_prompt_file is not None:
        replace = _read_text_flag("--system-prompt-file", args.system_prompt_file)
    append = args.append_system_prompt
    if args.append_system_prompt_file is not None:
        append = _read_text_flag("--append-system-prompt-file", args.append_system_prompt_file)
    return replace, append


def permission_mode_overrides(text: str | None) -> dict[str, Any]:
    """`--permission-mode` as settings: the cycled modes are a start mode, bypassPermissions skips
    the questions as --dangerously-skip-permissions does, dontAsk refuses instead of asking."""
    if text is None:
        return {}
    wanted = text.strip().replace("-", "").replace("_", "").lower()
    mode = next((m for m in PERMISSION_MODES if m.lower() == wanted), None)
    if mode is None:
        raise FlagError(f"--permission-mode: unknown permission mode {text!r} (expected one of: {', '.join(PERMISSION_MODES)})")
    if mode == "bypassPermissions":
        return {"skip_permissions": True}
    if mode == "dontAsk":
        return {"dont_ask": True}
    return {"permission_mode": mode}


def setting_sources(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    sources = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(sources - set(SETTING_SOURCES))
    if unknown:
        raise FlagError(f"--setting-sources: unknown source(s) {', '.join(unknown)} (expected: {', '.join(SETTING_SOURCES)})")
    return sources


def agents_json(text: str | None) -> dict[str, Any]:
    """`--agents`: a JSON object, or the path of a file holding one."""
    if text is None:
        return {}
    raw = text if text.lstrip().startswith("{") else _read_text_flag("--agents", text)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FlagError(f"--agents: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    from agent_repl.agents.definitions import definitions_from_json

    try:
        definitions_from_json(data)
    except ValueError as exc:
        raise FlagError(str(exc)) from None
    return data


def session_id_flag(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return str(uuid.UUID(text.strip()))
    except ValueError:
        raise FlagError(f"--session-id: {text!r} is not a UUID") from None


def check_combinations(args: argparse.Namespace) -> None:
    """What Claude Code refuses too: stream-json without --verbose, stream-json input without
    stream-json output, a forked or fixed id without something to resume from."""
    headless = args.print_prompt is not None or args.input_format == "stream-json"
    if headless and args.output_format == "stream-json" and not args.verbose:
        raise FlagError("--output-format stream-json needs --verbose")
    if args.input_format == "stream-json" and args.output_format != "stream-json":
        raise FlagError("--input-format stream-json needs --output-format stream-json")
    if args.permission_prompt_tool and args.input_format != "stream-json":
        raise FlagError("--permission-prompt-tool stdio needs --input-format stream-json (someone to ask on stdin)")
    if args.fork_session and not (args.continue_latest or args.resume is not None):
        raise FlagError("--fork-session goes with --resume or --continue")
    if args.session_id and (args.continue_latest or args.resume is not None) and not args.fork_session:
        raise FlagError("--session-id with --resume or --continue needs --fork-session (the resumed session keeps its id)")
    if args.max_budget_usd is not None and args.max_budget_usd <= 0:
        raise FlagError("--max-budget-usd must be more than 0")
