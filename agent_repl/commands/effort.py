"""`/effort`: show or choose how hard the model works (the API's `output_config.effort`).

As Claude Code 2.1.332 does when run interactively: a level from low to xhigh applies now and is
saved, for this model, as the default of new sessions (`model_effort` in `<home>/settings.json`);
`max` applies to this session only; `auto` goes back to the API's own default and forgets the
saved level. In print mode (`-p "/effort low"`) nothing is saved, as there. A level the model does
not take is refused with the levels it does take.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_repl.commands.results import CommandResult, TextOutput
from agent_repl.core.config.thinking_request import (
    EFFORT_LEVELS,
    effort_levels,
    effort_problem,
    is_session_effort,
)
from agent_repl.core.tooling.atomic import write_atomic

if TYPE_CHECKING:
    from agent_repl.commands.registry import CommandContext

USAGE = f"usage: /effort [{'|'.join((*EFFORT_LEVELS, 'auto'))}]"
# Chosen for the session only, as Claude Code does (the deepest level is rarely the right default).
SESSION_ONLY = frozenset({"max"})


class EffortNotSaved(Exception):
    """The user's settings file could not take the choice; the message says why."""


def _save(path: Path, model: str, level: str | None) -> None:
    """Set (or with None remove) `model_effort.<model>` in the settings file, keeping the rest."""
    try:
        raw = path.read_text(encoding="utf-8") if path.exists() else ""
        data: Any = json.loads(raw) if raw.strip() else {}
    except OSError as exc:
        raise EffortNotSaved(f"cannot read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise EffortNotSaved(f"{path} is not valid JSON (line {exc.lineno})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("model_effort", {}), dict):
        raise EffortNotSaved(f"{path}: model_effort is not an object")
    saved = dict(data.get("model_effort", {}))
    if level is None:
        saved.pop(model, None)
    else:
        saved[model] = level
    if saved:
        data["model_effort"] = saved
    else:
        data.pop("model_effort", None)
    try:
        write_atomic(path, (json.dumps(data, indent=2) + "\n").encode())
    except OSError as exc:
        raise EffortNotSaved(f"cannot write {path}: {exc.strerror or exc}") from exc


def describe(session: Any) -> str:
    """What the session sends now, where it comes from, and what the model takes."""
    settings, model = session.settings, session.model
    sent = session.effort
    if settings.session_effort is not None:
        source = "chosen with /effort for this session"
    elif settings.model_effort.get(model):
        source = f"saved for {model} (model_effort)"
    elif settings.effort:
        source = "the effort setting"
    else:
        source = ""
    if settings.session_effort is not None:
        wanted = None if settings.session_effort == "auto" else settings.session_effort
    else:
        wanted = settings.model_effort.get(model) or settings.effort
    lines = [f"effort: {sent} ({source})" if sent else "effort: the API's default (none sent)"]
    problem = effort_problem(model, wanted, settings.thinking)
    if wanted and problem:
        lines.append(f"not sent: {problem}")
    levels = effort_levels(model)
    lines.append(f"{model} takes: {', '.join(levels)}" if levels else f"{model} takes no effort level")
    between = settings.thinking == "between_tools"
    lines.append("up-front thinking: " + ("off (the model thinks only between tool calls)" if between else "on"))
    lines.append(USAGE)
    return "\n".join(lines)


async def effort_command(ctx: CommandContext, args: str) -> CommandResult:
    session = ctx.session
    level = args.strip().lower()
    if not level:
        return TextOutput(describe(session))
    if not is_session_effort(level):
        return TextOutput(f"unknown effort {args.strip()!r}; {USAGE}", level="error")
    model = session.model
    if level != "auto":
        problem = effort_problem(model, level, session.settings.thinking)
        if problem:
            return TextOutput(problem, level="error")
    saved = level not in SESSION_ONLY and ctx.interactive
    session.set_effort(level, saved=saved)
    shown = "the API's default" if level == "auto" else level
    if not saved:
        return TextOutput(f"effort: {shown} for this session only (not saved)")
    path = session.settings.home / "settings.json"
    try:
        _save(path, model, None if level == "auto" else level)
    except EffortNotSaved as exc:
        return TextOutput(f"effort: {shown} for this session; not saved: {exc}", level="warning")
    if level == "auto":
        return TextOutput(f"effort: the API's default (the level saved for {model} is forgotten)")
    return TextOutput(f"effort: {level}, saved as the default for {model} in {path}")
