"""Slash commands: a registry of typed callables that return data for a front end to render.

`default_registry` (every built-in command, and the results they return) is imported when it is
first asked for: a front end holds its session (`SessionHolder`) before anyone runs a command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_repl.commands.registry import CommandContext, CommandRegistry, SessionHolder

if TYPE_CHECKING:
    from agent_repl.commands.builtin import default_registry

__all__ = ["CommandContext", "CommandRegistry", "SessionHolder", "default_registry"]


def __getattr__(name: str) -> Any:
    if name == "default_registry":
        from agent_repl.commands.builtin import default_registry

        return default_registry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
