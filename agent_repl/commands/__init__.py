"""Slash commands: a registry of typed callables that return data for a front end to render."""

from agent_repl.commands.builtin import default_registry
from agent_repl.commands.registry import CommandContext, CommandRegistry, SessionHolder

__all__ = ["CommandContext", "CommandRegistry", "SessionHolder", "default_registry"]
